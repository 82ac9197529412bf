package refine

import (
	"context"

	"github.com/refine-spec/refine/internal/core"
)

// Scopes let a SpanObserver wrap a run, a round and each attempt in its own
// context (a trace span, say). The session's telemetry keeps the run's and
// the round's scope; an attempt's scope is the context its Role is called
// with.

// telemetry reports a session's events to its Observer, stamped with what
// every event carries, and keeps the SpanObserver scopes of the run and of
// the round in progress. It decides nothing and writes nothing but the
// run's link (RunLinker) into the state.
type telemetry struct {
	observer Observer
	clock    Clock
	// state returns the session's state as it is now (nil before it is
	// loaded).
	state func() *core.State
	// runScope and roundScope are the open SpanObserver scopes.
	runScope, roundScope *scope
	// ctx is the driver's context while the decisions play (decide binds
	// it): the scopes they open are opened in it, so that the decisions
	// take no context.
	ctx context.Context
}

// spanScope is an attempt's open scope, as the decisions hold it: the
// context its role call runs in and its span ends with.
type spanScope struct{ ctx context.Context }

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
		e = t.stamp(e)
		e.Context = ctx
		if c := so.Begin(ctx, e); c != nil {
			ctx = c
		}
	}
	e.Context = ctx
	t.emit(e)
	return ctx
}

// endScope reports e (the matching finish) with the scope's context.
func (t *telemetry) endScope(ctx context.Context, e Event) {
	e.Context = ctx
	t.emit(e)
	if so := t.spanObserver(); so != nil && ctx != nil {
		so.End(ctx, t.stamp(e))
	}
}

// startRunScope opens the run's scope: Begin sees the link stored for the
// previous run, and a RunLinker's link for this one is kept in the state;
// it reports whether that changed the state.
func (t *telemetry) startRunScope(ctx context.Context) (changed bool) {
	st := t.state()
	e := Event{Kind: EventRunStarted, Round: st.Round, PreviousRun: st.RunLink}
	c := t.beginScope(ctx, e)
	t.runScope = &scope{ctx: c}
	if rl, ok := t.observer.(RunLinker); ok {
		if link := rl.RunLink(c); link != "" && link != st.RunLink {
			st.RunLink = link
			return true
		}
	}
	return false
}

// endRunScope closes the round's scope if one is open, then the run's.
func (t *telemetry) endRunScope(o Outcome, err error) {
	if t.roundScope != nil {
		t.endRoundScope(Event{Kind: EventRoundFinished, Round: t.roundScope.round, Outcome: o.Status, Message: "run stopped: " + string(o.Status)})
	}
	if t.runScope == nil {
		return
	}
	e := Event{Kind: EventRunFinished, Round: o.Round, Outcome: o.Status, Message: o.Reason}
	if err != nil {
		e.Message = err.Error()
	}
	t.endScope(t.runScope.ctx, e)
	t.runScope = nil
}

// openRoundScope makes sure the round in progress has an open scope. A
// round resumed by a later run gets a new scope through Begin only: plain
// Observers saw its round_started already.
func (t *telemetry) openRoundScope(ctx context.Context, started *Event) {
	cur := t.state().Current
	if cur == nil {
		return
	}
	if t.roundScope != nil && t.roundScope.round == cur.N && started == nil {
		return
	}
	if t.roundScope != nil {
		// A rollback replaced the round.
		t.endRoundScope(Event{Kind: EventRoundFinished, Round: t.roundScope.round, Message: "replaced by a rollback"})
	}
	if started != nil {
		t.roundScope = &scope{ctx: t.beginScope(ctx, *started), round: cur.N}
		return
	}
	c := t.inScope(ctx)
	if so := t.spanObserver(); so != nil {
		e := t.stamp(Event{Kind: EventRoundStarted, Round: cur.N, Phase: cur.Phase, Message: "resumed"})
		e.Context = c
		if r := so.Begin(c, e); r != nil {
			c = r
		}
	}
	t.roundScope = &scope{ctx: c, round: cur.N}
}

// endRoundScope closes the round's scope with e.
func (t *telemetry) endRoundScope(e Event) {
	if t.roundScope == nil {
		return
	}
	sc := t.roundScope
	t.roundScope = nil
	if e.Round == 0 {
		e.Round = sc.round
	}
	t.endScope(sc.ctx, e)
}

// emit sends e to the Observer, on the session's goroutine.
func (t *telemetry) emit(e Event) {
	if t.observer == nil {
		return
	}
	t.observer.Observe(t.stamp(e))
}

// stamp fills in what every event carries: the time, the round running
// (or the last one played), its phase, and the session's usage so far.
func (t *telemetry) stamp(e Event) Event {
	if e.At.IsZero() {
		e.At = t.clock.Now().UTC()
	}
	if e.Context == nil {
		// An event inside a scope carries the scope's context.
		switch {
		case t.roundScope != nil:
			e.Context = t.roundScope.ctx
		case t.runScope != nil:
			e.Context = t.runScope.ctx
		}
	}
	st := t.state()
	if st == nil {
		return e
	}
	e.SessionID = st.SessionID
	if e.Round == 0 {
		e.Round = st.Round
		if st.Current != nil {
			e.Round = st.Current.N
		}
	}
	if e.Phase == "" && st.Current != nil && st.Current.N == e.Round {
		e.Phase = st.Current.Phase
	}
	e.Usage = st.Usage.Total
	return e
}
