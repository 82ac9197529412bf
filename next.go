package refine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/refine-spec/refine/validate"
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
	// Cold are writes to Config.ColdStore: the session-end cleanup moving
	// the rollback archives to cold storage. Commit them to the ColdStore
	// before Persist, which deletes the archives from the session. Empty
	// unless a ColdStore is configured.
	Cold []Op
	// writes are the Persist ops with the view over the Store they make,
	// for a driver that decides on before committing them.
	writes *readyWrites
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
	if s.tel.startRunScope(ctx) {
		s.dirty = true
	}
	var o Outcome
	r, err := s.decide(ctx, func() (err error) {
		o, err = s.run()
		return err
	})
	r.Outcome = o
	s.tel.endRunScope(o, err)
	return r, err
}

// decide plays play, the engine's decisions from the state in memory,
// reading the session's Store through the Ready's writes: the commits play makes
// are kept, in order, for the Ready, and role calls and questions stop it
// (errNeedCalls, a deferred question) instead of being made. It returns
// the writes and the calls; the caller commits the one and makes the
// other. Every driver (Next, Run, Step, Rollback) plays through decide.
func (s *Session) decide(ctx context.Context, play func() error) (Ready, error) {
	s.ext.needed, s.ext.asked = nil, nil
	if s.out == nil {
		s.out = newReadyWrites(s.cfg.Store)
	}
	// The decisions take no context: their reads and scopes use ctx.
	s.out.base, s.tel.ctx = bind(ctx, s.cfg.Store), ctx
	if s.cfg.ColdStore != nil {
		s.out.coldBase = bind(ctx, s.cfg.ColdStore)
	}
	err := play()
	out := s.out
	out.base, out.coldBase, s.out, s.tel.ctx = nil, nil, nil, nil
	if uerr := out.unchanged(); uerr != nil {
		return Ready{}, uerr
	}
	if len(out.ops) > 0 {
		s.unpersisted = out.commits
	}
	r := Ready{Persist: compactOps(out.ops), Cold: out.cold, writes: out}
	if errors.Is(err, errNeedCalls) {
		r.Calls = slices.Clone(s.ext.needed)
		return r, nil
	}
	if err != nil {
		// The calls asked for will not be delivered: their attempts end here.
		s.ext.endScopes(&s.tel, s.now(), err)
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
	s.advance()
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
	s.ext.delivered[id] = roleResult{resp: resp, calls: 1}
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

// externalCalls are the role calls and answers that come from outside
// the decisions: the calls the last Ready asked for, the results handed
// back for them, the attempt scopes they run in, and which answers an
// Immediate asker gave.
type externalCalls struct {
	needed    []Request
	delivered map[callID]roleResult
	// scopes are the attempt scopes of the calls asked for, begun when the
	// call was asked for so that the call runs inside its attempt's scope.
	scopes map[callID]callScope
	// asked are the questions the steps asked since the driver last
	// asked its Asker: the driver asks them.
	asked []Question
	// auto marks the questions an Immediate asker answered: their answers
	// are recorded as automatic.
	auto map[string]bool
	// atOnce says the driver answers the questions of this play before
	// its Ready is committed (an Immediate asker): a question then needs
	// no commit of its own to be durable before it is asked.
	atOnce bool
}

// callScope is the scope of an attempt whose call is outside: its context
// and when the attempt started.
type callScope struct {
	scope   spanScope
	started time.Time
	plan    attemptPlan
}

func newExternalCalls() *externalCalls {
	return &externalCalls{delivered: map[callID]roleResult{}, scopes: map[callID]callScope{}, auto: map[string]bool{}}
}

// take returns the result delivered for req, if any, and forgets it;
// otherwise it records req as needed.
func (e *externalCalls) take(req Request) (roleResult, bool) {
	id := callID{req.Role, req.Call}
	if res, ok := e.delivered[id]; ok {
		delete(e.delivered, id)
		return res, true
	}
	e.needed = append(e.needed, req)
	return roleResult{}, false
}

// scope returns the scope the attempt of plan runs in: the one begun when
// its call was asked for, or a new one (begin).
func (e *externalCalls) scope(plan *attemptPlan, begin func() spanScope) {
	id := callID{plan.req.Role, plan.req.Call}
	if sc, ok := e.scopes[id]; ok {
		delete(e.scopes, id)
		plan.scope, plan.started = sc.scope, sc.started
		return
	}
	plan.scope = begin()
}

// resume returns the plan of the attempt whose call (role, call) was
// asked for and is delivered, as it was planned then, with its result:
// the attempt goes on where it stopped, without building its prompt
// again.
func (e *externalCalls) resume(role RoleName, call int) (attemptPlan, bool) {
	id := callID{role, call}
	sc, asked := e.scopes[id]
	res, delivered := e.delivered[id]
	if !asked || !delivered || sc.plan.msgs == nil {
		return attemptPlan{}, false
	}
	delete(e.scopes, id)
	delete(e.delivered, id)
	plan := sc.plan
	plan.scope, plan.started, plan.needed, plan.delivered = sc.scope, sc.started, false, &res
	return plan, true
}

// keepScope keeps plan's scope, begun with begin, for the call Next asks for.
func (e *externalCalls) keepScope(plan attemptPlan, begin func() spanScope) {
	id := callID{plan.req.Role, plan.req.Call}
	if _, ok := e.scopes[id]; ok {
		return
	}
	plan.scope = begin()
	e.scopes[id] = callScope{scope: plan.scope, started: plan.started, plan: plan}
}

// callContext is the context the call for req runs in: its attempt's scope.
func (e *externalCalls) callContext(ctx context.Context, req Request) context.Context {
	if sc, ok := e.scopes[callID{req.Role, req.Call}]; ok && sc.scope.ctx != nil {
		return valueCtx{ctx, sc.scope.ctx}
	}
	return ctx
}

// endScopes ends the scopes of the calls asked for and never delivered,
// with err (the error that stopped the session).
func (e *externalCalls) endScopes(t *telemetry, now time.Time, err error) {
	ids := slices.SortedFunc(maps.Keys(e.scopes), func(a, b callID) int {
		return cmp.Or(strings.Compare(string(a.role), string(b.role)), cmp.Compare(a.call, b.call))
	})
	for _, id := range ids {
		sc := e.scopes[id]
		delete(e.scopes, id)
		ev := Event{Kind: EventAttemptFinished, Role: sc.plan.role, Attempt: sc.plan.k, Gap: sc.plan.part, ExampleTier: sc.plan.example.Tier,
			Phase: sc.plan.phase, Elapsed: now.Sub(sc.started), FailureType: validate.ExecutionError, Message: err.Error(), Err: err}
		t.endAttempt(sc.scope, ev)
	}
}
