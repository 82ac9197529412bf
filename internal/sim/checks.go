package sim

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/storetest"
	"github.com/refine-spec/refine/validate"
)

// openStates are the gap states that count as open (convergence.Row).
var openStates = []gap.State{gap.Open, gap.InProgress, gap.Proposed, gap.NeedsRevision, gap.Blocked}

// checkOutcome is invariant 5 after a stop: COMPLETE only with no open
// gap and an APPROVE last review; a fatal error leaves FAILED.
func (s *simulation) checkOutcome(ctx context.Context, b *branch, st stop, status refine.Status) {
	if status.Outcome == refine.StatusComplete {
		var open []string
		for _, g := range status.Gaps {
			if slices.Contains(openStates, g.State) {
				open = append(open, fmt.Sprintf("%s %s", g.ID, g.State))
			}
		}
		if len(open) > 0 {
			s.violate(b, Outcomes, "COMPLETE with open gaps %v", open)
		}
		if n, verdict := lastVerdict(ctx, b.store, status.Round); verdict != validate.Approve {
			s.violate(b, Outcomes, "COMPLETE after round %d whose last review (round %d) is %q, not APPROVE", status.Round, n, verdict)
		}
	}
	// A finished session keeps its outcome when its integration step
	// fails (DESIGN §16: the outcome never changes).
	if st.Err != nil && !errors.Is(st.Err, storetest.ErrInjected) && ctx.Err() == nil && status.Outcome != refine.StatusFailed && !status.Outcome.Terminal() {
		s.violate(b, Outcomes, "the run failed (%v) but the session says %s, not FAILED", oneLine(st.Err.Error()), status.Outcome)
	}
	if st.Err == nil && !st.Stepped && status.Outcome == refine.StatusRunning {
		s.violate(b, Outcomes, "the run returned without error and the session says RUNNING")
	}
}

// lastVerdict returns the verdict of the newest review up to round.
func lastVerdict(ctx context.Context, st refine.Store, round int) (int, validate.Verdict) {
	for n := round; n >= 1; n-- {
		b, err := st.Get(ctx, fmt.Sprintf("round_%03d/reviewer.md", n))
		if err != nil {
			continue
		}
		return n, validate.Reviewer(string(b), validate.Options{}).Verdict
	}
	return 0, ""
}

// probe runs the probes on copies at a stop: every offered key of every
// pending question (invariant 1) and a rollback to every offered target
// (invariant 3).
func (s *simulation) probe(ctx context.Context, b *branch, status refine.Status) {
	if s.opt.on(string(MoveKeyProbe)) && len(status.Pending) > 0 && chance(b.per, 0.10*s.opt.probeScale()) {
		for _, q := range status.Pending {
			for _, o := range q.Options {
				s.keyProbe(ctx, b, status, q, o.Key)
			}
		}
	}
	if s.opt.on(string(MoveRBProbe)) && chance(b.per, 0.08*s.opt.probeScale()) && !rollbackWaits(status) {
		for _, t := range targets(ctx, b.store, status) {
			s.rollbackProbe(ctx, b, t)
		}
	}
}

// keyProbe answers q with key on a copy and runs: the answer is
// accepted, and the question is gone or the session moved on.
func (s *simulation) keyProbe(ctx context.Context, b *branch, status refine.Status, q refine.Question, key string) {
	if !s.opt.stuckChecked(q.ID, status.Pending) {
		return
	}
	f, err := s.fork(ctx, b, "key-"+key)
	if err != nil {
		s.violate(b, Errors, "fork for the key probe: %v", err)
		return
	}
	if err := f.sess.Answer(ctx, q.ID, answerFor(nil, q, key)); err != nil {
		s.violate(b, NeverStuck, "probe: the offered answer %q to %s (%s) was refused: %v", key, q.ID, q.Title, err)
		return
	}
	st := f.advance(ctx)
	if st.Err != nil {
		if after, err := f.sess.Status(ctx); err == nil && after.Outcome != refine.StatusFailed {
			s.violate(b, Outcomes, "probe: after answering %s with %q the run failed (%v) and the session says %s", q.ID, key, oneLine(st.Err.Error()), after.Outcome)
		}
		return // a fatal error is invariant 5's to judge
	}
	after, err := f.sess.Status(ctx)
	if err != nil {
		s.violate(b, Errors, "probe: status after answering %s with %q: %v", q.ID, key, err)
		return
	}
	if isPause(q, key) {
		return
	}
	if slices.Contains(pendingIDs(after.Pending), q.ID) && progress(after) == progress(status) {
		s.violate(b, NeverStuck, "probe: after answering %s (%s) with %q and a Run, the session is stuck: it is still pending, nothing done (pending %v at round %d phase %q)",
			q.ID, q.Title, key, pendingIDs(after.Pending), after.Round, after.Phase)
	}
}

// rollbackProbe rolls a copy back to target, answering the rollback
// dialogs with their defaults: it must succeed (or be refused as
// documented), and the copy must still export and open.
func (s *simulation) rollbackProbe(ctx context.Context, b *branch, target int) {
	f, err := s.fork(ctx, b, fmt.Sprintf("rollback-%d", target))
	if err != nil {
		s.violate(b, Errors, "fork for the rollback probe: %v", err)
		return
	}
	_, err = f.sess.Rollback(ctx, refine.RollbackRequest{To: target, Reason: "sim: probe"})
	for i := 0; err == nil && i < 6; i++ {
		status, ierr := f.sess.Status(ctx)
		if ierr != nil {
			err = ierr
			break
		}
		var flow []refine.Question
		for _, q := range status.Pending {
			if q.Kind == refine.KindRollback && !allCleanup([]refine.Question{q}) {
				flow = append(flow, q)
			}
		}
		if len(flow) == 0 {
			break
		}
		q := flow[0]
		key := q.Default
		if key == "" && len(q.Options) > 0 {
			key = q.Options[0].Key
		}
		if err = f.sess.Answer(ctx, q.ID, answerFor(nil, q, key)); err != nil {
			err = fmt.Errorf("answer the rollback question %s with its default %q: %w", q.ID, key, err)
			break
		}
		_, err = f.sess.Run(ctx)
	}
	if err != nil && !errors.Is(err, refine.ErrRollbackLimit) && !errors.Is(err, refine.ErrDeferred) && !errors.Is(err, refine.ErrRollbackPending) {
		s.violate(b, RollbackTargets, "probe: rollback to offered target %d: %v", target, err)
		return
	}
	if err := exportTo(ctx, f.store, refine.Store(newMem())); err != nil {
		s.violate(b, RoundTrip, "probe: after a rollback to %d: %v", target, err)
	}
}

// rollbackWaits reports whether a rollback dialog waits for an answer
// (a new rollback is then refused with ErrDeferred, as documented).
func rollbackWaits(status refine.Status) bool {
	for _, q := range status.Pending {
		if q.Kind == refine.KindRollback && !allCleanup([]refine.Question{q}) {
			return true
		}
	}
	return false
}
