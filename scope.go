package refine

import "context"

// Scopes let a SpanObserver wrap a run, a round and each attempt in its own
// context (a trace span, say). The session keeps the run's and the round's
// scope; an attempt's scope is the context its Role is called with.

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
func (s *Session) spanObserver() SpanObserver {
	so, _ := s.cfg.Observer.(SpanObserver)
	return so
}

// inScope returns ctx carrying the innermost open scope's values.
func (s *Session) inScope(ctx context.Context) context.Context {
	switch {
	case s.roundScope != nil:
		return valueCtx{ctx, s.roundScope.ctx}
	case s.runScope != nil:
		return valueCtx{ctx, s.runScope.ctx}
	}
	return ctx
}

// beginScope reports e (a run, round or attempt start) and returns the
// context the work inside it runs in.
func (s *Session) beginScope(ctx context.Context, e Event) context.Context {
	ctx = s.inScope(ctx)
	if so := s.spanObserver(); so != nil {
		e = s.stamp(e)
		e.Context = ctx
		if c := so.Begin(ctx, e); c != nil {
			ctx = c
		}
	}
	e.Context = ctx
	s.emit(e)
	return ctx
}

// endScope reports e (the matching finish) with the scope's context.
func (s *Session) endScope(ctx context.Context, e Event) {
	e.Context = ctx
	s.emit(e)
	if so := s.spanObserver(); so != nil && ctx != nil {
		so.End(ctx, s.stamp(e))
	}
}

// startRunScope opens the run's scope: Begin sees the link stored for the
// previous run, and a RunLinker's link for this one is kept in the state.
func (s *Session) startRunScope(ctx context.Context) {
	e := Event{Kind: EventRunStarted, Round: s.st.Round, PreviousRun: s.st.RunLink}
	c := s.beginScope(ctx, e)
	s.runScope = &scope{ctx: c}
	if rl, ok := s.cfg.Observer.(RunLinker); ok {
		if link := rl.RunLink(c); link != "" && link != s.st.RunLink {
			s.st.RunLink = link
			s.dirty = true
		}
	}
}

// endRunScope closes the round's scope if one is open, then the run's.
func (s *Session) endRunScope(o Outcome, err error) {
	if s.roundScope != nil {
		s.endRoundScope(Event{Kind: EventRoundFinished, Round: s.roundScope.round, Outcome: o.Status, Message: "run stopped: " + string(o.Status)})
	}
	if s.runScope == nil {
		return
	}
	e := Event{Kind: EventRunFinished, Round: o.Round, Outcome: o.Status, Message: o.Reason}
	if err != nil {
		e.Message = err.Error()
	}
	s.endScope(s.runScope.ctx, e)
	s.runScope = nil
}

// openRoundScope makes sure the round in progress has an open scope. A
// round resumed by a later run gets a new scope through Begin only: plain
// Observers saw its round_started already.
func (s *Session) openRoundScope(ctx context.Context, started *Event) {
	cur := s.st.Current
	if cur == nil {
		return
	}
	if s.roundScope != nil && s.roundScope.round == cur.N && started == nil {
		return
	}
	if s.roundScope != nil {
		// A rollback replaced the round.
		s.endRoundScope(Event{Kind: EventRoundFinished, Round: s.roundScope.round, Message: "replaced by a rollback"})
	}
	if started != nil {
		s.roundScope = &scope{ctx: s.beginScope(ctx, *started), round: cur.N}
		return
	}
	c := s.inScope(ctx)
	if so := s.spanObserver(); so != nil {
		e := s.stamp(Event{Kind: EventRoundStarted, Round: cur.N, Phase: cur.Phase, Message: "resumed"})
		e.Context = c
		if r := so.Begin(c, e); r != nil {
			c = r
		}
	}
	s.roundScope = &scope{ctx: c, round: cur.N}
}

// endRoundScope closes the round's scope with e.
func (s *Session) endRoundScope(e Event) {
	if s.roundScope == nil {
		return
	}
	sc := s.roundScope
	s.roundScope = nil
	if e.Round == 0 {
		e.Round = sc.round
	}
	s.endScope(sc.ctx, e)
}
