package llm_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/refine-spec/refine/llm"
)

// gate is a Role whose calls announce themselves on entered and block until
// released, counting how many run at once.
type gate struct {
	entered  chan struct{}
	release  chan struct{}
	inFlight atomic.Int32
	maxSeen  atomic.Int32
	calls    atomic.Int32
}

func newGate() *gate {
	return &gate{entered: make(chan struct{}), release: make(chan struct{})}
}

func (g *gate) Respond(ctx context.Context, req llm.Request) (llm.Response, error) {
	g.calls.Add(1)
	n := g.inFlight.Add(1)
	for {
		m := g.maxSeen.Load()
		if n <= m || g.maxSeen.CompareAndSwap(m, n) {
			break
		}
	}
	defer g.inFlight.Add(-1)
	g.entered <- struct{}{}
	<-g.release
	return llm.Response{Content: "ok"}, nil
}

func TestLimitCapsInFlightCalls(t *testing.T) {
	const limit, calls = 2, 10
	g := newGate()
	role := llm.Limit(g, limit)

	var wg sync.WaitGroup
	errs := make(chan error, calls)
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := role.Respond(context.Background(), llm.Request{Role: llm.Engineer, Round: i})
			errs <- err
		}()
	}
	// Let exactly `limit` calls in, then admit the others one release at a
	// time. Whenever a call enters, no more than `limit` may be inside.
	for range limit {
		<-g.entered
	}
	for range calls - limit {
		g.release <- struct{}{}
		<-g.entered
		if n := g.inFlight.Load(); n > limit {
			t.Errorf("%d calls in flight, limit %d", n, limit)
		}
	}
	for range limit {
		g.release <- struct{}{}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("Respond: %v", err)
		}
	}
	if got := g.maxSeen.Load(); got != limit {
		t.Errorf("max in flight = %d, want %d", got, limit)
	}
	if got := g.calls.Load(); got != calls {
		t.Errorf("inner calls = %d, want %d", got, calls)
	}
}

func TestLimiterSharedAcrossRoles(t *testing.T) {
	l := llm.NewLimiter(1)
	g := newGate()
	engineer, reviewer := l.Wrap(g), l.Wrap(g)

	done := make(chan error, 2)
	go func() {
		_, err := engineer.Respond(context.Background(), llm.Request{Role: llm.Engineer})
		done <- err
	}()
	<-g.entered // the engineer holds the only slot

	ctx, cancel := context.WithCancel(context.Background())
	go func() { _, err := reviewer.Respond(ctx, llm.Request{Role: llm.Reviewer}); done <- err }()
	cancel() // whether the reviewer is already waiting or not, it must give up
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("waiting reviewer: err = %v; want context.Canceled", err)
	}
	g.release <- struct{}{}
	if err := <-done; err != nil {
		t.Fatalf("engineer: %v", err)
	}
	if got := g.calls.Load(); got != 1 {
		t.Errorf("inner calls = %d, want 1: the cancelled call must not reach the Role", got)
	}
	if l.Limit() != 1 {
		t.Errorf("Limit() = %d", l.Limit())
	}
}

func TestLimitCancelWhileWaiting(t *testing.T) {
	g := newGate()
	role := llm.Limit(g, 1)
	first := make(chan error, 1)
	go func() { _, err := role.Respond(context.Background(), llm.Request{}); first <- err }()
	<-g.entered

	ctx, cancel := context.WithCancel(context.Background())
	second := make(chan error, 1)
	go func() {
		_, err := role.Respond(ctx, llm.Request{Role: llm.Reviewer, Round: 4, Attempt: 1})
		second <- err
	}()
	cancel()
	e := <-second // returns while the first call still holds the slot
	if !errors.Is(e, context.Canceled) {
		t.Fatalf("err = %v; want context.Canceled", e)
	}
	if transient, _ := llm.IsTransient(e); transient {
		t.Errorf("err %v is transient", e)
	}
	g.release <- struct{}{}
	if e := <-first; e != nil {
		t.Fatal(e)
	}
}

// resumable records Resume calls.
type resumable struct {
	llm.RoleFunc
	got map[llm.RoleName]int
}

func (r *resumable) Resume(role llm.RoleName, calls int) { r.got[role] = calls }

func TestLimitForwardsResume(t *testing.T) {
	inner := &resumable{got: map[llm.RoleName]int{}}
	role := llm.Limit(inner, 1)
	rs, ok := role.(llm.Resumer)
	if !ok {
		t.Fatal("limited Role does not implement Resumer")
	}
	rs.Resume(llm.Engineer, 4)
	if inner.got[llm.Engineer] != 4 {
		t.Errorf("inner Resume not called: %v", inner.got)
	}
	// A Role without Resume is fine too.
	llm.Limit(llm.RoleFunc(func(context.Context, llm.Request) (llm.Response, error) {
		return llm.Response{}, nil
	}), 1).(llm.Resumer).Resume(llm.Engineer, 1)
}

func TestNewLimiterPanicsBelowOne(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("NewLimiter(0) did not panic")
		}
	}()
	llm.NewLimiter(0)
}
