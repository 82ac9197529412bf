package sqlkvtest

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/store"
)

// LeaseTakeover: a second handle is refused and told who holds the
// session, takes it over once the lease expires (a commit renews it),
// and the first can then no longer commit, checked inside the commit's
// transaction (fencing), nor release the new holder's lease.
func LeaseTakeover(t *testing.T, open Opener) {
	clk := NewClock()
	a := open(t, Options{Holder: "host-a pid 1", LeaseTTL: time.Minute, Heartbeat: -1, Now: clk.Now})
	b := open(t, Options{Holder: "host-b pid 2", LeaseTTL: time.Minute, Heartbeat: -1, Now: clk.Now})
	ctx := t.Context()
	id, wa, err := a.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	MustCommit(t, wa, store.Put("state.json", []byte("a1")))

	_, err = b.Session(ctx, id)
	if !errors.Is(err, store.ErrLocked) || !strings.Contains(err.Error(), "held by host-a pid 1") {
		t.Fatalf("Session while a's lease is live: error = %v, want ErrLocked naming host-a pid 1", err)
	}
	clk.Add(59 * time.Second)
	MustCommit(t, wa, store.Put("state.json", []byte("a2"))) // renews the lease
	clk.Add(59 * time.Second)
	if _, err := b.Session(ctx, id); !errors.Is(err, store.ErrLocked) {
		t.Fatalf("Session 59 s after a's last commit: error = %v, want ErrLocked (a commit renews the lease)", err)
	}

	clk.Add(2 * time.Second) // a's lease has run out: a crashed, or stalled
	wb, err := b.Session(ctx, id)
	if err != nil {
		t.Fatalf("Session after a's lease expired: %v", err)
	}
	err = wa.Commit(ctx, store.Put("state.json", []byte("a3")), store.Put("a-only.md", []byte("x")))
	if !errors.Is(err, store.ErrLocked) || !strings.Contains(err.Error(), "host-b pid 2") {
		t.Fatalf("commit by the fenced writer: error = %v, want ErrLocked naming host-b pid 2", err)
	}
	// a's Close must not release b's lease.
	if err := wa.(io.Closer).Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Session(ctx, id); !errors.Is(err, store.ErrLocked) {
		t.Errorf("Session after the fenced writer closed: error = %v, want ErrLocked (b holds it)", err)
	}
	MustCommit(t, wb, store.Put("state.json", []byte("b1")))
	keys, err := wb.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"state.json"}, keys); diff != "" || MustGet(t, wb, "state.json") != "b1" {
		t.Errorf("after the fenced commit: keys (-want +got):\n%s state.json = %q", diff, MustGet(t, wb, "state.json"))
	}
}

// Heartbeat: the heartbeat keeps an idle writer's lease alive (an LLM call
// takes minutes without a commit) and Close ends it. setHeartbeat drives
// the renewals of the writers a backend opens from tick and reports each
// to beat.
func Heartbeat(t *testing.T, open Opener, setHeartbeat func(b store.Backend, tick <-chan time.Time, beat func(error))) {
	clk := NewClock()
	a := open(t, Options{Holder: "a", LeaseTTL: time.Minute, Now: clk.Now})
	tick := make(chan time.Time)
	beats := make(chan error)
	setHeartbeat(a, tick, func(err error) { beats <- err })
	b := open(t, Options{Holder: "b", LeaseTTL: time.Minute, Heartbeat: -1, Now: clk.Now})
	ctx := t.Context()
	id, wa, err := a.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 { // three minutes without a commit, renewed every 40 s
		clk.Add(40 * time.Second)
		tick <- clk.Now()
		if err := <-beats; err != nil {
			t.Fatalf("renewal: %v", err)
		}
	}
	clk.Add(59 * time.Second)
	if _, err := b.Session(ctx, id); !errors.Is(err, store.ErrLocked) {
		t.Fatalf("Session 59 s after the last renewal: error = %v, want ErrLocked", err)
	}
	MustCommit(t, wa, store.Put("state.json", []byte("still mine")))
	if err := wa.(io.Closer).Close(); err != nil {
		t.Fatal(err)
	}
	wb, err := b.Session(ctx, id)
	if err != nil {
		t.Fatalf("Session after the writer closed: %v", err)
	}
	wb.(io.Closer).Close()
}
