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

	"github.com/refine-spec/refine/internal/core"
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
	writes *core.ReadyWrites
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
	s.ResumeFailed()
	if s.tel.startRunScope(ctx) {
		s.Dirty = true
	}
	var o Outcome
	r, err := s.decide(ctx, func() (err error) {
		o, err = s.RunRounds()
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
	s.Ext.Needed, s.Ext.Asked = nil, nil
	if s.Out == nil {
		s.Out = core.NewReadyWrites(s.config.Store)
	}
	// The decisions take no context: their reads and scopes use ctx.
	s.Out.Base, s.tel.ctx = bind(ctx, s.config.Store), ctx
	if s.config.ColdStore != nil {
		s.Out.ColdBase = bind(ctx, s.config.ColdStore)
	}
	err := play()
	out := s.Out
	out.Base, out.ColdBase, s.Out, s.tel.ctx = nil, nil, nil, nil
	if uerr := out.Unchanged(); uerr != nil {
		return Ready{}, uerr
	}
	if len(out.Ops) > 0 {
		s.unpersisted = out.Commits
	}
	r := Ready{Persist: core.CompactOps(out.Ops), Cold: out.Cold, writes: out}
	if errors.Is(err, core.ErrNeedCalls) {
		r.Calls = slices.Clone(s.Ext.Needed)
		return r, nil
	}
	if err != nil {
		// The calls asked for will not be delivered: their attempts end here.
		endScopes(s.Ext, s.tel, s.Now(), err)
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
	id := core.CallID{Role: req.Role, Call: req.Call}
	if s.Ext == nil || !slices.ContainsFunc(s.Ext.Needed, func(r Request) bool { return (core.CallID{Role: r.Role, Call: r.Call}) == id }) {
		return fmt.Errorf("deliver %s call %d: %w: Next did not ask for it", req.Role, req.Call, ErrUnknownCall)
	}
	s.Ext.Delivered[id] = core.RoleResult{Resp: resp, Calls: 1}
	return nil
}

// callContext is the context the call for req runs in: its attempt's scope.
func callContext(e *core.ExternalCalls, ctx context.Context, req Request) context.Context {
	if sc, ok := e.Scopes[core.CallID{Role: req.Role, Call: req.Call}]; ok {
		if in, ok := sc.Scope.(spanScope); ok && in.ctx != nil {
			return valueCtx{ctx, in.ctx}
		}
	}
	return ctx
}

// endScopes ends the scopes of the calls asked for and never delivered,
// with err (the error that stopped the session).
func endScopes(e *core.ExternalCalls, t *telemetry, now time.Time, err error) {
	ids := slices.SortedFunc(maps.Keys(e.Scopes), func(a, b core.CallID) int {
		return cmp.Or(strings.Compare(string(a.Role), string(b.Role)), cmp.Compare(a.Call, b.Call))
	})
	for _, id := range ids {
		sc := e.Scopes[id]
		delete(e.Scopes, id)
		ev := core.Event{Kind: EventAttemptFinished, Role: sc.Plan.Role, Attempt: sc.Plan.K, Gap: sc.Plan.Part, ExampleTier: sc.Plan.Example.Tier,
			Phase: sc.Plan.Phase, Elapsed: now.Sub(sc.Started), FailureType: validate.ExecutionError, Message: err.Error(), Err: err}
		t.EndAttempt(sc.Scope, ev)
	}
}
