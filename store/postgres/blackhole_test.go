package postgres_test

import (
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/refine-spec/refine/internal/pgtest"
	"github.com/refine-spec/refine/store/postgres"
)

// blackHole is a TCP proxy in front of the server that can stop passing
// bytes without closing anything, as a network that drops packets
// silently does: the connections it held never carry a byte again, and new
// ones pass bytes only once it is mended, when the old ones are reset (the
// peers answer a stale connection's packets with a reset then).
type blackHole struct {
	ln     net.Listener
	target string
	gen    atomic.Int64 // connections of an older generation are dead
	closed atomic.Bool  // dropping bytes

	mu    sync.Mutex
	conns []net.Conn
	gens  []int64 // the generation of each of conns
}

func newBlackHole(t *testing.T, target string) *blackHole {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &blackHole{ln: ln, target: target}
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
	})
	return p
}

func (p *blackHole) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		gen := p.gen.Load()
		p.mu.Lock()
		p.conns, p.gens = append(p.conns, c, s), append(p.gens, gen, gen)
		p.mu.Unlock()
		go p.pipe(c, s, gen)
		go p.pipe(s, c, gen)
	}
}

// pipe copies from → to while the proxy is open and the connection's
// generation is current; otherwise it reads and drops.
func (p *blackHole) pipe(from, to net.Conn, gen int64) {
	buf := make([]byte, 32<<10)
	for {
		n, err := from.Read(buf)
		if n > 0 && !p.closed.Load() && p.gen.Load() == gen {
			if _, err := to.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			to.Close()
			return
		}
	}
}

// cut starts dropping every byte; the connections open now stay dead.
func (p *blackHole) cut() { p.gen.Add(1); p.closed.Store(true) }

// mend passes bytes on new connections again and resets the old ones.
func (p *blackHole) mend() {
	gen := p.gen.Add(1)
	p.closed.Store(false)
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, c := range p.conns {
		if p.gens[i] < gen {
			c.Close()
		}
	}
}

// A network that drops packets silently for a while in the middle of a run
// (no reset, no error: statements just get no answer) does not end the
// run: an attempt that gets no answer within its time is given up as a
// broken connection and run again on a new one once the network is back,
// and the run finishes as an undisturbed one does.
func TestRunSurvivesASilentNetworkOutage(t *testing.T) {
	const lease = 2 * time.Second
	ctx := t.Context()
	ref := open(t, pgtest.Database(t), postgres.Config{})
	wref, err := ref.CreateNamed(ctx, "run")
	if err != nil {
		t.Fatal(err)
	}
	defer wref.(io.Closer).Close()
	wantOut, want := runSession(t, wref, nil)

	u, err := url.Parse(pgtest.Database(t))
	if err != nil || u.Host == "" {
		t.Skipf("the DSN is not a URL with a host; the proxy needs one (%v)", err)
	}
	hole := newBlackHole(t, u.Host)
	u.Host = hole.ln.Addr().String()
	db := open(t, u.String(), postgres.Config{LeaseTTL: lease, Reconnect: 10 * lease})
	var broken atomic.Int64
	postgres.SetFaultHook(db, func(code string, err error) { broken.Add(1) })
	st, err := db.CreateNamed(ctx, "run")
	if err != nil {
		t.Fatal(err)
	}
	defer st.(io.Closer).Close()
	calls := 0
	gotOut, got := runSession(t, st, func() {
		if calls++; calls == 4 {
			hole.cut()
			// The outage lasts longer than an attempt's time; the
			// duration is the scenario, not synchronisation.
			time.AfterFunc(3*lease/2, hole.mend)
		}
	})
	if broken.Load() == 0 {
		t.Error("no attempt was given up during the outage; the test did not test anything")
	}
	if gotOut.Status != wantOut.Status || gotOut.Round != wantOut.Round || gotOut.Reason != wantOut.Reason {
		t.Errorf("outcome across a silent outage = %+v, undisturbed %+v", gotOut, wantOut)
	}
	if !equalStores(t, want, got) {
		t.Error("the run across a silent outage left another session than an undisturbed run")
	}
}
