package refine

import (
	"context"

	"github.com/refine-spec/refine/internal/core"
)

// Scopes let a SpanObserver wrap a run, a round and each attempt in its own
// context (a trace span, say). The driver's telemetry reports the events
// each Ready carries to the Observer, opening and closing the scopes they
// start and end: the run's (around each driver call), the round's (the
// round in progress) and each attempt's, whose context its Role is called
// with.

// telemetry reports a session's events to its Observer and keeps the
// SpanObserver scopes. It decides nothing and writes nothing.
type telemetry struct {
	observer Observer
	clock    Clock
	// status returns what Status reports now (nil before the session is
	// loaded): the driver's own events are stamped with it.
	status func() *Status
	// runScope and roundScope are the open SpanObserver scopes, attempts
	// the open attempts' contexts.
	runScope, roundScope *scope
	attempts             map[core.CallID]context.Context
	// current is the round in progress at the last Ready (0: none since
	// the run started): the round the driver's own events are stamped with.
	current int
}

// scope is an open run or round scope.
type scope struct {
	ctx   context.Context
	round int // the round it covers; 0 for the run
}

// valueCtx carries the values (spans) of one context and the deadline and
// cancellation of another: the scopes come from the run, the cancellation
// from the call being made now.
type valueCtx struct {
	context.Context
	values context.Context
}

func (c valueCtx) Value(key any) any {
	if v := c.values.Value(key); v != nil {
		return v
	}
	return c.Context.Value(key)
}

// spanObserver returns the configured SpanObserver, or nil.
func (t *telemetry) spanObserver() SpanObserver {
	so, _ := t.observer.(SpanObserver)
	return so
}

// inScope returns ctx carrying the innermost open scope's values.
func (t *telemetry) inScope(ctx context.Context) context.Context {
	switch {
	case t.roundScope != nil:
		return valueCtx{ctx, t.roundScope.ctx}
	case t.runScope != nil:
		return valueCtx{ctx, t.runScope.ctx}
	}
	return ctx
}

// beginScope reports e (a run, round or attempt start) and returns the
// context the work inside it runs in.
func (t *telemetry) beginScope(ctx context.Context, e Event) context.Context {
	ctx = t.inScope(ctx)
	if so := t.spanObserver(); so != nil {
		e.Context = ctx
		if c := so.Begin(ctx, e); c != nil {
			ctx = c
		}
	}
	e.Context = ctx
	t.observe(e)
	return ctx
}

// endScope reports e (the matching finish) with the scope's context.
func (t *telemetry) endScope(ctx context.Context, e Event) {
	e.Context = ctx
	t.observe(e)
	if so := t.spanObserver(); so != nil && ctx != nil {
		so.End(ctx, e)
	}
}

// startRun opens the run's scope: Begin sees prev, the link stored for the
// previous run, and a RunLinker's link for this one is returned for the
// decisions to keep.
func (t *telemetry) startRun(ctx context.Context, prev string) (link string) {
	t.current = 0
	c := t.beginScope(ctx, t.stamp(Event{Kind: EventRunStarted, PreviousRun: prev}))
	t.runScope = &scope{ctx: c}
	if rl, ok := t.observer.(RunLinker); ok {
		return rl.RunLink(c)
	}
	return ""
}

// endRun closes the round's scope if one is open, then the run's.
func (t *telemetry) endRun(o Outcome, err error) {
	if t.roundScope != nil {
		t.endRound(t.stamp(Event{Kind: EventRoundFinished, Round: t.roundScope.round, Outcome: o.Status, Message: "run stopped: " + string(o.Status)}))
	}
	if t.runScope == nil {
		return
	}
	e := t.stamp(Event{Kind: EventRunFinished, Round: o.Round, Outcome: o.Status, Message: o.Reason})
	if err != nil {
		e.Message = err.Error()
	}
	t.endScope(t.runScope.ctx, e)
	t.runScope = nil
}

// report reports the events of r, opening and closing the scopes they
// start and end, and keeps the scope of r's round in progress open.
func (t *telemetry) report(ctx context.Context, r core.Ready) {
	for _, ce := range r.Events {
		e := ce
		switch e.Kind {
		case EventRoundStarted:
			t.endRound(Event{Kind: EventRoundFinished, Round: 0, Message: "replaced by a rollback"})
			t.roundScope = &scope{ctx: t.beginScope(ctx, e), round: e.Round}
		case EventRoundFinished:
			if t.roundScope != nil && t.roundScope.round == e.Round {
				t.endRound(e)
			} else {
				t.observe(e)
			}
		case core.EventRoundResumed:
			t.resumeRound(ctx, e.Round)
		case EventAttemptStarted:
			t.attempts[core.CallID{Role: e.Role, Call: e.Call}] = t.beginScope(ctx, e)
		case EventAttemptFinished:
			id := core.CallID{Role: e.Role, Call: e.Call}
			c, ok := t.attempts[id]
			delete(t.attempts, id)
			if !ok {
				c = t.inScope(ctx)
			}
			t.endScope(c, e)
		default:
			t.emit(e)
		}
	}
	if r.Round != 0 {
		t.current = r.Round
	}
}

// resumeRound makes sure round, the round in progress, has an open
// scope. A round resumed by a later run gets a new scope through Begin
// only: plain Observers saw its round_started already.
func (t *telemetry) resumeRound(ctx context.Context, round int) {
	if round == 0 || t.roundScope != nil && t.roundScope.round == round {
		return
	}
	if t.roundScope != nil {
		t.endRound(t.stamp(Event{Kind: EventRoundFinished, Message: "replaced by a rollback"}))
	}
	c := t.inScope(ctx)
	if so := t.spanObserver(); so != nil {
		e := t.stamp(Event{Kind: EventRoundStarted, Round: round, Message: "resumed"})
		e.Context = c
		if r := so.Begin(c, e); r != nil {
			c = r
		}
	}
	t.roundScope = &scope{ctx: c, round: round}
}

// endRound closes the round's scope with e.
func (t *telemetry) endRound(e Event) {
	if t.roundScope == nil {
		return
	}
	sc := t.roundScope
	t.roundScope = nil
	if e.Round == 0 {
		e.Round = sc.round
	}
	if e.At.IsZero() {
		e = t.stamp(e)
	}
	t.endScope(sc.ctx, e)
}

// callContext is the context the call for req runs in: its attempt's
// scope's values, with ctx's cancellation.
func (t *telemetry) callContext(ctx context.Context, req Request) context.Context {
	if c, ok := t.attempts[core.CallID{Role: req.Role, Call: req.Call}]; ok && c != nil {
		return valueCtx{ctx, c}
	}
	return ctx
}

// emit reports e in the innermost open scope.
func (t *telemetry) emit(e Event) {
	if e.Context == nil {
		switch {
		case t.roundScope != nil:
			e.Context = t.roundScope.ctx
		case t.runScope != nil:
			e.Context = t.runScope.ctx
		}
	}
	t.observe(e)
}

// observe sends e to the Observer, on the session's goroutine.
func (t *telemetry) observe(e Event) {
	if t.observer != nil {
		t.observer.Observe(e)
	}
}

// stamp fills in what the driver's own events carry: the time, and the
// session, round and usage as Status reports them.
func (t *telemetry) stamp(e Event) Event {
	if e.At.IsZero() {
		e.At = t.clock.Now().UTC()
	}
	st := t.status()
	if st == nil {
		return e
	}
	e.SessionID = st.SessionID
	if e.Round == 0 {
		e.Round = max(st.Round, t.current)
	}
	e.Usage = st.Usage
	return e
}
