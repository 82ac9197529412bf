package refine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/refine-spec/refine/internal/core"
	"github.com/refine-spec/refine/retry"
)

// The driver: every method that changes the session hands its input to
// the decisions (core.Engine.Handle) and does what the Ready they hand
// back asks for, as etcd raft's node loop drives its RawNode: commit the
// writes and Advance, make the role calls (transport retries with
// backoff, parallel calls at once) and deliver their results, ask the
// Asker and hand its answer back, go on after a yield unless the context
// ended. Next hands the same Ready to a host that does this itself.

// Run plays rounds until the session reaches a terminal outcome, pauses at
// a question, or fails. A cancelled ctx stops promptly with state committed;
// Run then returns the context's error and an Outcome with Status Paused.
func (s *Session) Run(ctx context.Context) (Outcome, error) {
	r, err := s.input(ctx, s.runInput(ctx, false), true)
	return r.Outcome, err
}

// Step plays exactly one round, or the rest of the round in progress (a
// session that starts with discovery plays it as its first Step, round
// 0, up to the confirmed list or its question). The
// step that ends the session also plays what follows the end (the
// integration step and the archive cleanup), as Run does; a Step on a
// finished session whose follow-up a crash interrupted plays the rest of it.
func (s *Session) Step(ctx context.Context) (RoundReport, error) {
	r, err := s.input(ctx, s.runInput(ctx, true), true)
	rep := r.Report
	if rep.Outcome == "" || r.Outcome.Status == StatusFailed {
		rep.Round, rep.Outcome = r.Outcome.Round, r.Outcome.Status
	}
	return rep, err
}

// runInput starts a run: a Step or Run with the session's Asker.
func (s *Session) runInput(ctx context.Context, step bool) core.Input {
	im, ok := s.config.Asker.(Immediate)
	return core.Run{At: s.now(), Step: step, Asks: true, Immediate: ok && im.Immediate()}
}

// input takes the session's turn and drives in (asks: with the Asker).
func (s *Session) input(ctx context.Context, in core.Input, asks bool) (core.Ready, error) {
	if err := s.lock(ctx); err != nil {
		return core.Ready{Outcome: Outcome{Status: StatusPaused, Reason: err.Error()}}, err
	}
	defer s.unlock()
	if err := s.begin(ctx); err != nil {
		return core.Ready{Outcome: Outcome{Status: StatusFailed, Reason: err.Error()}}, err
	}
	if run, ok := in.(core.Run); ok {
		run.Link = s.tel.startRun(ctx, s.core.RunLink())
		in = run
		r, err := s.drive(ctx, in, asks)
		s.tel.endRun(r.Outcome, err)
		return r, err
	}
	return s.drive(ctx, in, asks)
}

// drive hands in to the decisions and does what each Ready asks for until
// one asks for nothing this driver does: no call, no question for its
// Asker (asks), no yield.
func (s *Session) drive(ctx context.Context, in core.Input, asks bool) (core.Ready, error) {
	for {
		r, err := s.handle(ctx, in)
		if err != nil {
			return r, err
		}
		switch {
		case len(r.Calls) > 0:
			in = s.makeCalls(ctx, r.Calls)
		case len(r.Ask) > 0 && asks:
			in = s.ask(ctx, r.Ask[0])
		case r.More && ctx.Err() != nil:
			in = core.Interrupt{At: s.now(), Cause: ctx.Err()}
		case r.More:
			in = core.Continue{At: s.now()}
		default:
			return r, nil
		}
	}
}

// handle hands in to the decisions, commits the Ready's writes, advances
// and reports its events.
func (s *Session) handle(ctx context.Context, in core.Input) (core.Ready, error) {
	r, err := s.core.Handle(bind(ctx, s.config.Store), s.coldView(ctx), in)
	s.tel.report(ctx, r)
	if perr := s.persist(ctx, r); perr != nil {
		r.Outcome = Outcome{Status: StatusFailed, Round: r.Outcome.Round, Reason: perr.Error()}
		return r, perr
	}
	if r.Stale {
		s.core = nil // what it holds was never stored
	}
	return r, err
}

// coldView is the cold store as the decisions read it, nil when none.
func (s *Session) coldView(ctx context.Context) core.View {
	if s.config.ColdStore == nil {
		return nil
	}
	return bind(ctx, s.config.ColdStore)
}

// persist commits a Ready's writes (its cold-storage writes first) to
// the session's Store and advances. Writes decided before a cancellation
// are committed all the same: they record work done. A failed commit
// drops the decisions: the next call reads the session as stored.
func (s *Session) persist(ctx context.Context, r core.Ready) error {
	if len(r.Persist) == 0 && len(r.Cold) == 0 {
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	if len(r.Cold) > 0 {
		if err := s.config.ColdStore.Commit(ctx, r.Cold...); err != nil {
			s.core = nil
			return fmt.Errorf("cold storage: %w", err)
		}
	}
	if len(r.Persist) > 0 {
		if err := s.config.Store.Commit(ctx, r.Persist...); err != nil {
			s.core = nil
			return fmt.Errorf("commit: %w", err)
		}
	}
	s.advance(r.Commits)
	return nil
}

// advance makes the Ready just committed what Status reports.
func (s *Session) advance(commits int) {
	s.core.Advance()
	s.recordedRepairs()
	s.publish()
	for range max(commits, 1) {
		s.tel.emit(Event{Kind: EventCommitted, At: s.now().UTC(), SessionID: s.published.Load().SessionID})
	}
}

// makeCalls makes the role calls of a Ready, all at once, each in its
// attempt's scope, and returns their results. The first call that fails
// for good cancels the others, which are then not delivered (the session
// stops at the failure). Transport retries are reported as they happen
// and handed over with the results.
func (s *Session) makeCalls(ctx context.Context, reqs []Request) core.Input {
	type done struct {
		i   int
		res core.RoleResult
	}
	// The roles come from the host's Config, the retry settings from the
	// session's (SetSettings may have changed them).
	cfg := s.config
	cfg.Settings = s.core.Settings()
	in := core.Deliver{}
	note := func(n core.TransportNote) {
		in.Notes = append(in.Notes, n)
		s.tel.emit(Event{Kind: EventTransportRetry, At: s.now().UTC(), Round: n.Round, Role: n.Role, Attempt: n.Attempt, Message: n.Err.Error(), Elapsed: n.Delay})
	}
	if len(reqs) == 1 {
		// One call: made here, with no goroutine to hand it to.
		req := reqs[0]
		res := callRole(s.tel.callContext(ctx, req), &cfg, s.clock, req, s.jitterFor(), note)
		in.Results = []core.CallResult{{Call: core.CallID{Role: req.Role, Call: req.Call}, Result: res}}
		in.At = s.now()
		return in
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	notes, finished := make(chan core.TransportNote), make(chan done)
	for i, req := range reqs {
		jitter, callCtx := s.jitterFor(), s.tel.callContext(cctx, req)
		go func() {
			finished <- done{i, callRole(callCtx, &cfg, s.clock, req, jitter, func(n core.TransportNote) { notes <- n })}
		}()
	}
	results := make([]core.RoleResult, len(reqs))
	for left := len(reqs); left > 0; {
		select {
		case n := <-notes:
			note(n)
		case d := <-finished:
			results[d.i] = d.res
			left--
			if d.res.Err != nil && !d.res.Failure.Cancelled {
				cancel()
			}
		}
	}
	for i, req := range reqs {
		res := results[i]
		if res.Failure.Cancelled && ctx.Err() == nil {
			continue // stopped by another call's failure
		}
		in.Results = append(in.Results, core.CallResult{Call: core.CallID{Role: req.Role, Call: req.Call}, Result: res})
	}
	in.At = s.now()
	return in
}

// jitterFor returns a source of backoff jitter for one role call. Each
// call gets its own generator, seeded from the session's, so parallel
// calls share nothing and a fixed JitterSeed still gives fixed delays.
func (s *Session) jitterFor() func() float64 {
	r := rand.New(rand.NewPCG(s.jitter.Uint64(), s.jitter.Uint64()))
	return r.Float64
}

// callRole makes the call req to its role of cfg, retrying transient
// errors with backoff (sleeping on clock); note reports each retry. It
// touches no session state: it runs on a goroutine of its own.
func callRole(ctx context.Context, cfg *Config, clock Clock, req Request, jitter func() float64, note func(core.TransportNote)) core.RoleResult {
	r := cfg.Engineer
	if req.Role == Reviewer {
		r = cfg.Reviewer
	}
	b := retry.Backoff{Base: cfg.BackoffBase, Max: cfg.BackoffMax}
	calls := 0
	for try := 1; ; try++ {
		resp, err := r.Respond(ctx, req)
		calls++
		if err == nil {
			return core.RoleResult{Resp: resp, Calls: calls}
		}
		if ctx.Err() != nil {
			return core.RoleResult{Calls: calls, Err: ctx.Err(), Failure: core.CallFailure{Cancelled: true}}
		}
		transient, hint := IsTransient(err)
		if !transient {
			return core.RoleResult{Calls: calls, Err: err}
		}
		if try > cfg.TransportRetries {
			return core.RoleResult{Calls: calls, Err: err, Failure: core.CallFailure{Retries: cfg.TransportRetries}}
		}
		d := b.Delay(try, hint, jitter)
		note(core.TransportNote{Role: req.Role, Round: req.Round, Attempt: req.Attempt, Err: err, Try: try, Delay: d})
		if err := clock.Sleep(ctx, d); err != nil {
			return core.RoleResult{Calls: calls, Err: err, Failure: core.CallFailure{Cancelled: true}}
		}
	}
}

// ask asks the Asker q and returns what it said as the next input.
func (s *Session) ask(ctx context.Context, q Question) core.Input {
	a, err := s.config.Asker.Ask(ctx, q)
	switch {
	case errors.Is(err, ErrDeferred):
		return core.Deferred{At: s.now(), Question: q.ID}
	case err != nil:
		return core.AskFailed{At: s.now(), Question: q.ID, Err: err}
	}
	return core.Answered{At: s.now(), Question: q.ID, Answer: a}
}
