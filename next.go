package refine

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// Ready is what a session hands its caller from Next, as etcd's raft
// package does: what to persist, then role calls to make, or answers to
// its questions, or nothing more (a terminal outcome).
type Ready struct {
	// Persist are the writes of everything Next decided, in order: the
	// journal records, prompts, outputs and renderings. Commit them to
	// the session's Store in one Commit, then call Advance, before making
	// the calls; the session refuses every other call (ErrNotPersisted)
	// until then. Empty when Next decided nothing that needs writing.
	Persist []Op
	// Calls are the role calls the session waits for; when there are
	// several (parallel drafting) they may run concurrently. Make each and
	// hand its Response to Deliver, then call Next again.
	Calls []Request
	// Outcome is where the session stands: Running while Calls wait,
	// Paused with its Pending questions (answer them with Answer, then
	// call Next), or a terminal outcome.
	Outcome Outcome
}

// Next plays the session as Run does, except that it does no I/O of its
// own but reads: it writes nothing to the Store, makes no role call and
// asks no question. It stops at the first role calls it needs, or at its
// questions, and returns them with the writes its decisions made. The
// caller commits Ready.Persist and calls Advance, then makes the calls (a
// durable-execution engine runs each as an activity, with its own
// timeouts and retries), delivers each response with Deliver and calls
// Next again; it answers questions with Answer. A delivered response is
// kept in memory until the next Next takes it, so after a crash in
// between, the call is made again.
//
// If the Commit of Ready.Persist fails, drop the session and Open it
// again: it resumes from what was persisted. Next returns the errors Run
// returns, with the writes made up to the failure in Ready.Persist
// (persist them too), and ErrUnknownCall never. Transport retries are the
// caller's: a call that fails is not delivered.
func (s *Session) Next(ctx context.Context) (Ready, error) {
	if err := s.lock(ctx); err != nil {
		return Ready{Outcome: Outcome{Status: StatusPaused, Reason: err.Error()}}, err
	}
	defer s.unlock()
	if err := s.begin(ctx); err != nil {
		return Ready{Outcome: Outcome{Status: StatusFailed, Reason: err.Error()}}, err
	}
	s.resumeFailed()
	if s.ext == nil {
		s.ext = &externalCalls{delivered: map[callID]Response{}}
	}
	s.ext.active, s.ext.needed = true, nil
	inProcess, store := s.workers, s.cfg.Store
	s.workers = &inlineWorkers{} // calls are not made here, and results come back in a fixed order
	staging := newStagingStore(store)
	s.cfg.Store = staging
	defer func() {
		s.ext.active, s.workers, s.cfg.Store = false, inProcess, store
		if len(staging.ops) > 0 {
			s.unpersisted = staging.commits
		}
	}()

	if s.tel.startRunScope(ctx) {
		s.dirty = true
	}
	o, err := s.run(ctx)
	s.tel.endRunScope(o, err)
	r := Ready{Persist: staging.ops, Outcome: o}
	if errors.Is(err, errNeedCalls) {
		r.Calls = slices.Clone(s.ext.needed)
		return r, nil
	}
	return r, err
}

// Advance tells the session that the last Ready.Persist is committed to
// its Store: what Next decided is durable now, Status reports it, and the
// session takes calls again. Without a Ready to persist it does nothing.
func (s *Session) Advance(ctx context.Context) error {
	select {
	case s.turn <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("waiting for the session: %w", ctx.Err())
	}
	defer s.unlock()
	commits := s.unpersisted
	if commits == 0 {
		return nil
	}
	s.unpersisted = 0
	s.publish()
	for range commits {
		s.tel.emit(Event{Kind: EventCommitted})
	}
	return nil
}

// Deliver hands the session the response to a call the last Next asked
// for. It fails with ErrUnknownCall for any other request.
func (s *Session) Deliver(ctx context.Context, req Request, resp Response) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	id := callID{req.Role, req.Call}
	if s.ext == nil || !slices.ContainsFunc(s.ext.needed, func(r Request) bool { return (callID{r.Role, r.Call}) == id }) {
		return fmt.Errorf("deliver %s call %d: %w: Next did not ask for it", req.Role, req.Call, ErrUnknownCall)
	}
	s.ext.delivered[id] = resp
	return nil
}

// errNeedCalls stops a Next at the role calls it needs made; run turns it
// into Ready.Calls.
var errNeedCalls = errors.New("role calls needed")

// callID names a role call: the role and its session-wide call number.
type callID struct {
	role RoleName
	call int
}

// externalCalls is the state of Next's mode: the calls asked for and the
// responses delivered for them.
type externalCalls struct {
	active    bool
	needed    []Request
	delivered map[callID]Response
}

// on reports whether role calls and questions are the caller's (Next's
// mode); a nil e is off.
func (e *externalCalls) on() bool { return e != nil && e.active }

// take returns the response delivered for req, if any, and forgets it;
// otherwise it records req as needed.
func (e *externalCalls) take(req Request) (Response, bool) {
	id := callID{req.Role, req.Call}
	if resp, ok := e.delivered[id]; ok {
		delete(e.delivered, id)
		return resp, true
	}
	e.needed = append(e.needed, req)
	return Response{}, false
}

// inlineWorkers runs parallel drafting's work on the session's goroutine,
// in the order it was started, when a Receive needs a value: in Next's
// mode every call's response is already there, so nothing blocks.
type inlineWorkers struct{ queue []func() }

func (w *inlineWorkers) Go(ctx context.Context, work func(ctx context.Context)) {
	w.queue = append(w.queue, func() { work(ctx) })
}

func (w *inlineWorkers) NewChannel(context.Context) channel { return &inlineChannel{w: w} }

type inlineChannel struct {
	w    *inlineWorkers
	vals []any
}

func (c *inlineChannel) Send(_ context.Context, v any) { c.vals = append(c.vals, v) }

func (c *inlineChannel) Receive(context.Context) any {
	for len(c.vals) == 0 && len(c.w.queue) > 0 {
		work := c.w.queue[0]
		c.w.queue = c.w.queue[1:]
		work()
	}
	if len(c.vals) == 0 {
		panic("refine: inline worker channel: Receive with no work left to send a value")
	}
	v := c.vals[0]
	c.vals = c.vals[1:]
	return v
}
