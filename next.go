package refine

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// Ready is what a session needs from outside before it can go on, as Next
// returns it: role calls to make, or answers to its questions, or nothing
// more (a terminal outcome).
type Ready struct {
	// Calls are the role calls the session waits for; when there are
	// several (parallel drafting) they may run concurrently. Make each and
	// hand its Response to Deliver, then call Next again.
	Calls []Request
	// Outcome is where the session stands: Running while Calls wait,
	// Paused with its Pending questions (answer them with Answer, then
	// call Next), or a terminal outcome.
	Outcome Outcome
}

// Next plays the session as Run does, except that it makes no role call and
// asks no question itself: it stops at the first role calls it needs, or
// at its questions, and returns them. The caller makes the calls (a
// durable-execution engine runs each as an activity, with its own
// timeouts and retries), delivers each response with Deliver and calls
// Next again; it answers questions with Answer. Everything Next decided
// before a call (the prompt included) is durable when it returns; a
// delivered response is kept in memory until the next Next takes it, so
// after a crash in between, the call is made again.
//
// Transport retries are the caller's: a call that fails is not delivered.
// Next returns the errors Run returns, and ErrUnknownCall never.
func (s *Session) Next(ctx context.Context) (Ready, error) {
	if err := s.lock(ctx); err != nil {
		return Ready{Outcome: Outcome{Status: StatusPaused, Reason: err.Error()}}, err
	}
	defer s.unlock()
	if err := s.begin(ctx); err != nil {
		return Ready{Outcome: Outcome{Status: StatusFailed, Reason: err.Error()}}, err
	}
	if s.ext == nil {
		s.ext = &externalCalls{delivered: map[callID]Response{}}
	}
	s.ext.active, s.ext.needed = true, nil
	inProcess := s.workers
	s.workers = &inlineWorkers{} // calls are not made here, and results come back in a fixed order
	defer func() { s.ext.active, s.workers = false, inProcess }()

	s.startRunScope(ctx)
	o, err := s.run(ctx)
	s.endRunScope(o, err)
	if errors.Is(err, errNeedCalls) {
		return Ready{Calls: slices.Clone(s.ext.needed), Outcome: o}, nil
	}
	return Ready{Outcome: o}, err
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

// external reports whether role calls and questions are the caller's.
func (s *Session) external() bool { return s.ext != nil && s.ext.active }

// takeDelivered returns the response delivered for req, if any, and
// forgets it; otherwise it records req as needed.
func (s *Session) takeDelivered(req Request) (Response, bool) {
	id := callID{req.Role, req.Call}
	if resp, ok := s.ext.delivered[id]; ok {
		delete(s.ext.delivered, id)
		return resp, true
	}
	s.ext.needed = append(s.ext.needed, req)
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
