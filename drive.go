package refine

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/refine-spec/refine/internal/core"
	"github.com/refine-spec/refine/retry"
)

// The drivers: Run, Step and Rollback play the session's decisions
// (decide) and do what they ask for, as etcd raft's node loop drives its
// RawNode: commit the Ready's writes, make its role calls (transport
// retries with backoff, parallel calls at once), deliver the results, ask
// the Asker the questions the session waits for, record the answers, and
// play on. Next hands the same Ready to a caller that does this itself.

// Run plays rounds until the session reaches a terminal outcome, pauses at
// a question, or fails. A cancelled ctx stops promptly with state committed;
// Run then returns the context's error and an Outcome with Status Paused.
func (s *Session) Run(ctx context.Context) (o Outcome, err error) {
	if err := s.lock(ctx); err != nil {
		return Outcome{Status: StatusPaused, Reason: err.Error()}, err
	}
	defer s.unlock()
	if err := s.begin(ctx); err != nil {
		return Outcome{Status: StatusFailed, Reason: err.Error()}, err
	}
	s.ResumeFailed()
	if s.tel.startRunScope(ctx) {
		s.Dirty = true
	}
	defer func() { s.tel.endRunScope(o, err) }()
	return drive(ctx, s, s.RunRounds, func(o Outcome) Outcome { return o })
}

// Step plays exactly one round, or the rest of the round in progress. The
// step that ends the session also plays what follows the end (the
// integration step and the archive cleanup), as Run does; a Step on a
// finished session whose follow-up a crash interrupted plays the rest of it.
func (s *Session) Step(ctx context.Context) (rep RoundReport, err error) {
	if err := s.lock(ctx); err != nil {
		return RoundReport{Outcome: StatusPaused}, err
	}
	defer s.unlock()
	if err := s.begin(ctx); err != nil {
		return RoundReport{Outcome: StatusFailed}, err
	}
	s.ResumeFailed()
	if s.St.Outcome.Terminal() && s.St.RollbackFlow == nil && !s.St.FinishPending() {
		return RoundReport{Round: s.St.Round, Outcome: s.St.Outcome}, fmt.Errorf("step: %w (%s); roll back to reopen it", ErrFinished, s.St.Outcome)
	}
	if s.tel.startRunScope(ctx) {
		s.Dirty = true
	}
	defer func() { s.tel.endRunScope(Outcome{Status: rep.Outcome, Round: rep.Round}, err) }()
	return drive(ctx, s, s.StepOnce, func(o Outcome) RoundReport {
		rep := s.St.Report(o)
		rep.Outcome = o.Status
		return rep
	})
}

// drive is the loop of Run and Step: play the decisions, commit their
// writes, make the calls they ask for or ask the questions they wait for,
// and play on, until play stops at neither. failedAs builds the result
// of a failure the driver meets (a commit, the Asker).
func drive[T any](ctx context.Context, s *Session, play func() (T, error), failedAs func(Outcome) T) (T, error) {
	k := newAsking()
	im, ok := s.config.Asker.(Immediate)
	atOnce := ok && im.Immediate()
	for {
		var res T
		s.Ext.AtOnce = atOnce
		r, err := s.decide(ctx, func() (err error) {
			res, err = play()
			return err
		})
		s.Ext.AtOnce = false
		asked, answered, aerr := false, false, error(nil)
		if err == nil && len(r.Calls) == 0 && atOnce {
			// A policy answers at once, with no person to wait for: its
			// answers and what follows ride on this Ready, committed
			// before the next role call or stop.
			asked = true
			if answered, aerr = s.askPending(ctx, k); aerr == nil && answered {
				s.Out = r.writes
				continue
			}
			// Not answered: the questions become durable with this Ready.
			s.Out = r.writes
			if r, err = s.decide(ctx, s.Flush); err != nil {
				aerr = nil
			}
		}
		if perr := s.persist(ctx, r); perr != nil {
			return failedAs(Outcome{Status: StatusFailed, Round: s.St.Round, Reason: perr.Error()}), perr
		}
		if err != nil {
			return res, err
		}
		if len(r.Calls) > 0 {
			s.makeCalls(ctx, r.Calls)
			continue
		}
		if !asked {
			answered, aerr = s.askPending(ctx, k)
		}
		if aerr != nil {
			var o Outcome
			_ = s.apply(ctx, func() error {
				o, aerr = s.Failed(aerr)
				return nil
			})
			return failedAs(o), aerr
		}
		if !answered {
			return res, nil
		}
	}
}

// apply plays the decisions of one input (decide) and commits their
// writes: the way every method but the drivers' loops changes the
// session.
func (s *Session) apply(ctx context.Context, play func() error) error {
	r, err := s.decide(ctx, play)
	if perr := s.persist(ctx, r); perr != nil {
		return perr
	}
	return err
}

// persist commits a Ready's writes (its cold-storage writes first) to
// the session's Store and advances. Writes decided before a cancellation
// are committed all the same: they record work done. A failed commit
// leaves the session stale: the next call reads it as stored.
func (s *Session) persist(ctx context.Context, r Ready) error {
	ctx = context.WithoutCancel(ctx)
	if len(r.Cold) > 0 {
		if err := s.config.ColdStore.Commit(ctx, r.Cold...); err != nil {
			s.unpersisted, s.Stale, s.LastRendered = 0, true, nil
			return fmt.Errorf("cold storage: %w", err)
		}
	}
	if len(r.Persist) > 0 {
		if err := s.config.Store.Commit(ctx, r.Persist...); err != nil {
			s.unpersisted, s.Stale, s.LastRendered = 0, true, nil
			return fmt.Errorf("commit: %w", err)
		}
	}
	s.advance()
	return nil
}

// advance makes the Ready just committed what Status reports.
func (s *Session) advance() {
	commits := s.unpersisted
	if commits == 0 {
		return
	}
	s.unpersisted = 0
	s.recordedRepairs()
	s.publish()
	for range commits {
		s.tel.emit(Event{Kind: EventCommitted})
	}
}

// makeCalls makes the role calls of a Ready, all at once, each in its
// attempt's scope, and delivers their results. The first call that fails
// for good cancels the others, which are then not delivered (the session
// stops at the failure); transport retries are recorded as they happen.
func (s *Session) makeCalls(ctx context.Context, reqs []Request) {
	type done struct {
		i   int
		res core.RoleResult
	}
	// The roles come from the host's Config, the retry settings from the
	// session's (SetSettings may have changed them).
	cfg := s.config
	cfg.Settings = s.Cfg.Settings
	if len(reqs) == 1 {
		// One call: made here, with no goroutine to hand it to.
		req := reqs[0]
		res := callRole(callContext(s.Ext, ctx, req), &cfg, s.clock, req, s.Jitter(), s.NoteTransport)
		s.Ext.Delivered[core.CallID{Role: req.Role, Call: req.Call}] = res
		return
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	notes, finished := make(chan core.TransportNote), make(chan done)
	for i, req := range reqs {
		jitter, callCtx := s.Jitter(), callContext(s.Ext, cctx, req)
		go func() {
			finished <- done{i, callRole(callCtx, &cfg, s.clock, req, jitter, func(n core.TransportNote) { notes <- n })}
		}()
	}
	results := make([]core.RoleResult, len(reqs))
	for left := len(reqs); left > 0; {
		select {
		case n := <-notes:
			s.NoteTransport(n)
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
		s.Ext.Delivered[core.CallID{Role: req.Role, Call: req.Call}] = res
	}
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

// asking is what a driver call has asked its Asker: the questions it
// asked and those the Asker deferred.
type asking struct {
	asked, deferred map[string]bool
}

func newAsking() *asking { return &asking{asked: map[string]bool{}, deferred: map[string]bool{}} }

// askPending asks the Asker the questions the session waits for and
// records each valid answer; it reports whether it recorded any. It asks
// the questions the last decisions asked (as the session's steps reached
// them), then any other question waiting without an answer that this
// driver call has not asked yet (one pending since an earlier process,
// say). A question the Asker defers is not asked again by this driver
// call; nor is one whose answer kept it pending (the user chose to
// pause) unless a step asks it again. An invalid answer is asked again,
// with why, up to three times.
func (s *Session) askPending(ctx context.Context, k *asking) (answered bool, err error) {
	im, ok := s.config.Asker.(Immediate)
	automatic := ok && im.Immediate()
	questions := s.Ext.Asked
	s.Ext.Asked = nil
	for _, q := range s.St.Pending {
		if !k.asked[q.ID] && !slices.ContainsFunc(questions, func(p Question) bool { return p.ID == q.ID }) {
			questions = append(questions, q)
		}
	}
	for _, q := range questions {
		_, has := s.St.Answers[q.ID]
		if has || k.deferred[q.ID] || !slices.ContainsFunc(s.St.Pending, func(p Question) bool { return p.ID == q.ID }) {
			continue
		}
		k.asked[q.ID] = true
		err := s.askAsker(ctx, q)
		if errors.Is(err, ErrDeferred) {
			k.deferred[q.ID] = true
			break
		}
		if err != nil {
			return answered, err
		}
		s.Ext.Auto[q.ID] = automatic
		s.Dirty, answered = true, true
	}
	return answered, nil
}

// askAsker asks q until the Asker gives an answer q accepts (recorded in
// the state), at most three times, or defers, or fails.
func (s *Session) askAsker(ctx context.Context, q Question) error {
	var lastErr error
	for range 3 {
		ask := q
		if lastErr != nil {
			ask.Body = fmt.Sprintf("%s\n\n(Previous answer rejected: %v)", q.Body, lastErr)
		}
		a, err := s.config.Asker.Ask(ctx, ask)
		if errors.Is(err, ErrDeferred) {
			return err
		}
		if err != nil {
			return fmt.Errorf("round %d: ask %s: %w", q.Round, q.ID, err)
		}
		if err := s.St.AcceptAnswer(q, a); err != nil {
			lastErr = err
			s.Log.Warn("asker gave an invalid answer", "question", q.ID, "err", err)
			continue
		}
		return nil
	}
	return fmt.Errorf("round %d: ask %s: %w", q.Round, q.ID, lastErr)
}
