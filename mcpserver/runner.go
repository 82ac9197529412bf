package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/refine-spec/refine"
)

// errIdle: no tool call drove the session for Config.IdleTimeout.
var errIdle = errors.New("no tool call drove the session")

// needKind says what a session waits for from its client.
type needKind int

const (
	needSample needKind = iota // a role call: sampling/createMessage
	needAsk                    // a question: elicitation/create
)

// need is one thing the running session waits for: a role call to answer
// or a question to ask. The driving tool call fulfils it and sends the
// result on reply (buffered, so the driver never blocks on it).
type need struct {
	kind  needKind
	req   refine.Request
	q     refine.Question
	reply chan reply
	// parked is closed when the need went out as an input request of a
	// multi round-trip result: the session then waits for the client's
	// retry, which the idle timeout bounds.
	parked chan struct{}
	// isParked is set (under the runner's drive lock) when parked is closed.
	isParked bool
}

// park closes parked once; the caller holds the runner's drive lock.
func (n *need) park() {
	if !n.isParked {
		n.isParked = true
		close(n.parked)
	}
}

type reply struct {
	resp refine.Response
	ans  refine.Answer
	err  error
}

// runner is a session whose Run is going on in its own goroutine. Its roles
// and asker post needs that the tool call driving it fulfils; between tool
// calls the session waits (for at most the idle timeout).
type runner struct {
	id     string
	sess   *refine.Session
	cancel context.CancelFunc
	idle   time.Duration

	needs  chan *need
	events chan refine.Event
	done   chan struct{} // closed when Run has returned and the store is closed
	out    refine.Outcome
	err    error

	// drive is held by the tool call driving the session.
	drive sync.Mutex
	// Guarded by drive: the needs sent as input requests of a multi
	// round-trip result, by input request key, and the batch they went in.
	inflight map[string]*need
	batch    int
	// held is a need received when a call had used up its round trips:
	// the next call fulfils it first.
	held *need
}

// post hands n to the driving tool call and waits for its reply.
func (r *runner) post(ctx context.Context, n *need) (reply, error) {
	n.reply = make(chan reply, 1)
	n.parked = make(chan struct{})
	t := time.NewTimer(r.idle)
	defer t.Stop()
	select {
	case r.needs <- n:
	case <-ctx.Done():
		return reply{}, ctx.Err()
	case <-t.C:
		return reply{}, errIdle
	}
	parked := n.parked
	var idle <-chan time.Time
	for {
		select {
		case rep := <-n.reply:
			return rep, rep.err
		case <-ctx.Done():
			return reply{}, ctx.Err()
		case <-parked:
			parked = nil
			t.Reset(r.idle)
			idle = t.C
		case <-idle:
			return reply{}, errIdle
		}
	}
}

// role makes the session's role calls through the driving client's model.
type role struct{ r *runner }

// Respond posts the call and waits for the client's completion. A session
// nobody drives for the idle timeout stops (its state is committed and it
// stays resumable).
func (ro role) Respond(ctx context.Context, req refine.Request) (refine.Response, error) {
	rep, err := ro.r.post(ctx, &need{kind: needSample, req: req})
	if errors.Is(err, errIdle) {
		ro.r.cancel()
		return refine.Response{}, fmt.Errorf("%w for %v: the session stops and stays resumable (refine_continue)", errIdle, ro.r.idle)
	}
	return rep.resp, err
}

// asker asks the session's questions through the driving client.
type asker struct{ r *runner }

// Ask posts the question; a question nobody asks within the idle timeout,
// or that the user declines, is deferred: the session pauses with it
// pending.
func (a asker) Ask(ctx context.Context, q refine.Question) (refine.Answer, error) {
	rep, err := a.r.post(ctx, &need{kind: needAsk, q: q})
	if errors.Is(err, errIdle) {
		return refine.Answer{}, refine.ErrDeferred
	}
	return rep.ans, err
}

// observer forwards events to the driving tool call without blocking the
// session: when nobody reads them, the oldest are dropped.
type observer struct {
	r    *runner
	next refine.Observer
}

func (o observer) Observe(e refine.Event) {
	if o.next != nil {
		o.next.Observe(e)
	}
	select {
	case o.r.events <- e:
	default:
	}
}

// start runs sess in a new goroutine; st is closed when Run returns, then
// onDone is called, then done is closed.
func (r *runner) start(ctx context.Context, st refine.Store, onDone func()) {
	go func() {
		r.out, r.err = r.sess.Run(ctx)
		if c, ok := st.(io.Closer); ok {
			if err := c.Close(); err != nil && r.err == nil {
				r.err = err
			}
		}
		r.cancel()
		onDone()
		close(r.done)
	}()
}

// stop cancels the run and waits until the session has committed and
// released its store.
func (r *runner) stop() {
	r.cancel()
	<-r.done
}
