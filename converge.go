package refine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/refine-spec/refine/convergence"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/rollback"
	"github.com/refine-spec/refine/validate"
)

const keyConvergenceSVG = "convergence.svg"

// tracker returns the session's convergence tracker, creating it with the
// configured settings on first use.
func (s *Session) tracker() *convergence.Tracker {
	if s.st.Tracker == nil {
		t, err := convergence.NewTracker(s.convergenceSettings())
		if err != nil {
			// Settings come from a validated Config; fall back to defaults.
			t, _ = convergence.NewTracker(convergence.DefaultSettings())
		}
		s.st.Tracker = t
	}
	return s.st.Tracker
}

func (s *Session) convergenceSettings() convergence.Settings {
	set := convergence.DefaultSettings()
	set.StallRounds = s.cfg.StallRounds
	set.Weights = s.cfg.Weights
	return set
}

// converge records the round's convergence row (once) and, on
// DIVERGENCE_WARNING, asks the divergence question (FLOW-002).
func (s *Session) converge(ctx context.Context) (stop, error) {
	cur := s.st.Current
	t := s.tracker()
	if !cur.Converged {
		before := s.st.PrevLedger
		if before == nil {
			before = &gap.Ledger{}
		}
		wasConverging := t.Current() == convergence.Converging
		s.reviewGaps(cur)
		t.Observe(cur.N, before, &s.st.Ledger)
		if wasConverging && t.Current() != convergence.Converging {
			// Progress stopped: an early-termination offer declined while
			// the loop converged is worth making again.
			s.st.OfferedOpenSet = ""
		}
		cur.Converged = true
		s.recordRetryOutcome(cur)
		s.logWarnings(cur)
	}
	if t.Current() != convergence.DivergenceWarning || cur.DivergenceDone {
		return goOn, nil
	}
	q := convergence.DivergenceQuestion(convergence.DivergenceInput{Rows: t.Rows(), Settings: t.Settings(), Ledger: &s.st.Ledger, RollbackAvailable: s.rollbackAvailable(ctx)})
	q.ID, q.Round = fmt.Sprintf("r%d-divergence", cur.N), cur.N
	a, paused, err := s.ask(ctx, q)
	if err != nil || paused {
		return waitIf(paused), err
	}
	opt, _ := q.Option(a.Key)
	decision := opt.Label
	switch opt.Key {
	case convergence.KeyNarrowScope:
		ids, err := convergence.ScopeFromAnswer(&s.st.Ledger, a.Text)
		if err != nil {
			ids = convergence.NarrowScopeDefault(&s.st.Ledger)
			decision += fmt.Sprintf(" (%v; deferred the default set instead)", err)
		}
		for _, id := range ids {
			if err := s.st.Ledger.Transition(id, gap.Deferred, cur.N, s.now(), "deferred by the user to narrow scope (divergence)"); err != nil {
				return goOn, fmt.Errorf("round %d narrow scope: %w", cur.N, err)
			}
		}
		decision += ": deferred " + dash(joinIDs(ids))
		// The round's row counts them in its Deferred column.
		before := s.st.PrevLedger
		if before == nil {
			before = &gap.Ledger{}
		}
		t.Amend(convergence.Measure(cur.N, before, &s.st.Ledger, t.Settings().Weights))
		t.ResetStall()
	case convergence.KeyAcceptComplexity:
		t.AcceptComplexity()
	case convergence.KeyPauseForInput:
		if txt := strings.TrimSpace(a.Text); txt != "" {
			s.st.Adjustments = append(s.st.Adjustments, txt)
		}
		t.ResetStall()
	case convergence.KeyForceComplete:
		s.st.Choice = string(convergence.ChoiceForceComplete)
	case convergence.KeyStop:
		s.st.Choice = string(convergence.ChoiceStop)
	case convergence.KeyRollBack:
		// The decision is filed under this round once the rollback's
		// dialogs are done, so the round's archive does not swallow it.
		first := flowDecision{Question: Question{ID: q.ID, Kind: q.Kind, Round: q.Round, Title: q.Title}, Answer: a, Decision: decision}
		return s.startRollbackFromQuestion(ctx, a, rollback.TriggerDivergence, "divergence warning in round "+fmt.Sprint(cur.N), originDivergence, first)
	}
	cur.DivergenceDone = true
	s.recordDecision(cur.N, "", q, a, decision)
	return goOn, nil
}

// checkTermination walks the termination tree between rounds (FLOW-005),
// asking the early-termination offer and acknowledgments as they come due.
func (s *Session) checkTermination(ctx context.Context) (bool, error) {
	for {
		if s.st.Outcome.Terminal() {
			return true, nil
		}
		d := convergence.Decide(convergence.Input{
			Round: s.st.Round, MaxRounds: s.cfg.MaxRounds, Ledger: &s.st.Ledger,
			LastReviewApproved: s.lastReviewApproved(), Conflicts: s.conflictBlock(),
			Choice: convergence.Choice(s.st.Choice), HighConflictsAcknowledged: s.st.HighAck,
			OfferedOpenSet: s.st.OfferedOpenSet,
		})
		switch {
		case d.Outcome.Terminal():
			return true, s.finish(ctx, d.Outcome, d.Reason)
		case d.NeedsAcknowledgment:
			q := convergence.HighConflictQuestion(s.conflictBlock().UnresolvedHigh)
			q.ID, q.Round = fmt.Sprintf("r%d-high-conflict-ack", s.st.Round), s.st.Round
			a, paused, err := s.ask(ctx, q)
			if err != nil || paused {
				return false, err
			}
			opt, _ := q.Option(a.Key)
			s.recordDecision(s.st.Round, "", q, a, opt.Label)
			if opt.Key == convergence.KeyAcknowledge {
				s.st.HighAck = true
			} else {
				s.st.Choice = ""
			}
			s.stage()
		case d.NeedsUserDecisions:
			paused, err := s.presentBlockingDecisions(ctx)
			if err != nil || paused {
				return false, err
			}
		case d.OfferEarlyTermination && s.st.Round > 0:
			// Before round 1 nothing has been refined: no offer yet.
			q := convergence.EarlyTerminationQuestion(convergence.EarlyTerminationInput{Round: s.st.Round, MaxRounds: s.cfg.MaxRounds, Ledger: &s.st.Ledger})
			q.ID = fmt.Sprintf("r%d-early-termination", s.st.Round)
			// Automated policy: keep refining while the loop converges;
			// accept as good enough once progress stops.
			if s.tracker().Current() == convergence.Converging {
				q.Default = convergence.KeyContinue
			}
			a, paused, err := s.ask(ctx, q)
			if err != nil || paused {
				return false, err
			}
			opt, _ := q.Option(a.Key)
			if opt.Key != convergence.KeyContinue {
				// "Continue" changes nothing: it stays in the question log,
				// and decisions.md and the prompts' decision list keep the
				// choices that steer the session.
				s.recordDecision(s.st.Round, "", q, a, opt.Label)
			}
			s.st.OfferedOpenSet = d.OpenSet
			switch opt.Key {
			case convergence.KeyPause:
				s.st.Pending = append(s.st.Pending, q)
				s.st.OfferedOpenSet = ""
				return false, s.commit(ctx)
			case convergence.KeyContinue:
			case convergence.KeyAccept:
				// A person's "Accept as complete" is USER_APPROVED; the
				// automated policy's default acceptance is GOOD_ENOUGH.
				s.st.Choice = string(convergence.ChoiceForceComplete)
				if n := len(s.st.Asked); n > 0 && s.st.Asked[n-1].Auto {
					s.st.Choice = string(convergence.ChoiceAccept)
				}
			default:
				s.st.Choice = opt.Key
			}
			s.stage()
		default:
			if s.st.Choice != "" && s.st.Choice != string(convergence.ChoiceContinue) {
				s.st.Choice = ""
			}
			return false, nil
		}
	}
}

// lastReviewApproved: the last review's verdict was APPROVE. A REVISE
// review never completes a session, whatever was decided or deferred
// after it (DESIGN §7): the session goes on, or ends GOOD_ENOUGH or
// USER_APPROVED. A session that never had a review completes only when it
// never had a gap either.
func (s *Session) lastReviewApproved() bool {
	for i := len(s.st.Rounds) - 1; i >= 0; i-- {
		if v := s.st.Rounds[i].Verdict; v != "" {
			return v == string(validate.Approve)
		}
	}
	return len(s.st.Ledger.Gaps) == 0
}

// finish ends the session with a terminal outcome and writes the final
// artifacts.
func (s *Session) finish(ctx context.Context, o OutcomeStatus, reason string) error {
	s.st.Outcome, s.st.OutcomeReason, s.st.FinishedAt = o, reason, s.now()
	s.log.Info("session finished", "outcome", o, "reason", reason)
	// A finished session asks nothing but its archive cleanup: a question
	// still pending (one asked before a rollback's limit question ended
	// the session) can no longer apply, and would keep it PAUSED.
	s.st.Pending = slices.DeleteFunc(s.st.Pending, func(q Question) bool {
		if isCleanupQuestion(q) {
			return false
		}
		delete(s.st.Answers, q.ID)
		return true
	})
	ops, err := s.finalOps(ctx)
	if err != nil {
		return err
	}
	iops, err := s.integrationStartOps(ctx) // integrate.go
	if err != nil {
		return err
	}
	ops = append(ops, iops...)
	s.j.snapshotNext = true // a finished session's state.json is whole and current
	if !s.st.CleanupDone {
		// With no archive the session-end cleanup has nothing to ask: it
		// is settled in this commit rather than in one of its own.
		if _, _, ask, err := cleanupQuestion(ctx, s.cfg.Store, &s.cfg, s.st.Rollbacks); err != nil {
			return err
		} else if !ask {
			s.st.CleanupDone = true
		}
	}
	if err := s.commit(ctx, ops...); err != nil {
		return err
	}
	s.tel.emit(Event{Kind: EventSessionFinished, Outcome: o, Message: reason})
	return nil
}

// finalOps renders final_summary.md and final_spec.md.
func (s *Session) finalOps(ctx context.Context) ([]Op, error) {
	sum := convergence.Summary(convergence.SummaryInput{
		Outcome: s.st.Outcome, Reason: s.st.OutcomeReason, Rounds: s.st.Round,
		Started: s.st.CreatedAt, Finished: s.st.FinishedAt, Ledger: &s.st.Ledger, Extra: s.extraLimitations(), SpecKey: keyFinalSpec,
	})
	acceptedGaps := s.st.Ledger.InState(gap.Accepted)
	ids := make([]gap.ID, len(acceptedGaps))
	for i, g := range acceptedGaps {
		ids[i] = g.ID
	}
	texts, err := s.finalResolutions(ctx, ids)
	if err != nil {
		return nil, err
	}
	var accepted []convergence.Resolution
	for _, g := range acceptedGaps {
		accepted = append(accepted, convergence.Resolution{ID: g.ID, Title: g.Title, Text: texts[g.ID]})
	}
	decisions := s.decisionLines(nil) // user and conflict decisions (integrate.go)
	limits := append(convergence.Limitations(&s.st.Ledger), s.extraLimitations()...)
	src, err := s.source(ctx)
	if err != nil {
		return nil, fmt.Errorf("final spec: %w", err)
	}
	spec := convergence.FinalSpec(src, accepted, decisions, limits)
	return []Op{Put(keyFinalSum, []byte(sum)), Put(keyFinalSpec, []byte(spec))}, nil
}

// finalResolutions returns each accepted gap's section from the last
// Engineer output that addressed it. Each round's output is read and
// parsed at most once, newest first, however many gaps it resolved, so the
// final round costs time linear in the session's outputs.
func (s *Session) finalResolutions(ctx context.Context, ids []gap.ID) (map[gap.ID]string, error) {
	out := make(map[gap.ID]string, len(ids))
	wanted := make(map[gap.ID]bool, len(ids))
	for _, id := range ids {
		wanted[id] = true
	}
	for i := len(s.st.Rounds) - 1; i >= 0 && len(wanted) > 0; i-- {
		r := s.st.Rounds[i]
		if !slices.ContainsFunc(r.GapsAddressed, func(id gap.ID) bool { return wanted[id] }) {
			continue
		}
		b, err := s.get(ctx, outputKey(r.N, Engineer))
		if err != nil {
			return nil, fmt.Errorf("final spec: read %s: %w", outputKey(r.N, Engineer), err)
		}
		res := validate.Engineer(string(b), validate.Options{MaxOutputBytes: s.cfg.MaxOutputBytes})
		for _, sec := range res.Sections {
			if wanted[sec.ID] && containsID(r.GapsAddressed, sec.ID) {
				out[sec.ID] = strings.TrimSpace(sec.Body)
				delete(wanted, sec.ID)
			}
		}
	}
	for id := range wanted {
		out[id] = "(the accepted resolution's text is no longer in the session folder)"
	}
	return out, nil
}

// chartRounds is how many recent rounds convergence.svg plots: it is
// rewritten every round, so it must not grow with the session (status.md
// keeps the last few rows; status --json keeps them all).
const chartRounds = 12

// convergenceOps rewrites convergence.svg from the tracker's recent rows.
func (s *Session) convergenceOps() []Op {
	rows := s.tracker().Rows()
	if len(rows) > chartRounds {
		rows = rows[len(rows)-chartRounds:]
	}
	return []Op{Put(keyConvergenceSVG, convergence.SVG(rows))}
}

// recordRetryOutcome records, when a round that was rolled back finishes
// again, how its retry went (round-06 "Outcome" of the rollback history
// and the auto-retry block): successful when the Engineer's output was
// accepted, failed otherwise. A later rollback of the same round marks it
// failed instead (see execRollback).
func (s *Session) recordRetryOutcome(cur *roundState) {
	ok := cur.Engineer.Status == roleAccepted
	for i := range s.st.Rollbacks.Records {
		r := &s.st.Rollbacks.Records[i]
		if r.Round != cur.N || r.Outcome != "" {
			continue
		}
		switch {
		case ok && r.Split != nil:
			r.Outcome, r.Succeeded = "Proceeded with split gaps", true
		case ok:
			r.Outcome, r.Succeeded = "Retry successful", true
		default:
			r.Outcome = "Retry failed (" + roleSummary(Engineer, &cur.Engineer) + ")"
		}
	}
	for i := range s.st.AutoRetries {
		if a := &s.st.AutoRetries[i]; a.Round == cur.N && a.Outcome == "" {
			a.Outcome = "Successful on retry"
			if !ok {
				a.Outcome = "Failed on retry"
			}
		}
	}
}

// logWarnings puts the warnings of the round's valid outputs (THIN_CONTENT,
// a missing Trade-offs section, a repeated rejected position) into the
// validation log, where status.md and the round summary show them.
func (s *Session) logWarnings(cur *roundState) {
	for _, role := range []RoleName{Engineer, Reviewer} {
		rp := cur.role(role)
		if rp.Result == nil {
			continue
		}
		attempt := len(rp.Attempts)
		for _, w := range rp.Result.Warnings {
			s.st.Warnings = append(s.st.Warnings, warningFact{Round: cur.N, At: s.now(), Role: role, Attempt: attempt, Message: oneLine(w)})
			s.log.Warn("validation warning", "round", cur.N, "role", role, "warning", w)
		}
	}
}

// reviewGaps turns each HIGH/CRITICAL Reviewer issue of the round that
// names no gap into a new gap GAP-REVIEW-NNN with the issue's severity and
// summary, counted as New, so the loop can act on it instead
// of waiting for a review that never approves.
func (s *Session) reviewGaps(cur *roundState) {
	next := 1
	for _, g := range s.st.Ledger.Gaps {
		if strings.HasPrefix(string(g.ID), "GAP-REVIEW-") && g.ID.Number() >= next {
			next = g.ID.Number() + 1
		}
	}
	for i := range s.st.Issues {
		is := &s.st.Issues[i]
		if is.Round != cur.N || is.Gap != "" || !is.Severity.AtLeastHigh() {
			continue
		}
		id := gap.ID(fmt.Sprintf("GAP-REVIEW-%03d", next))
		next++
		title := strings.TrimSpace(oneLine(is.Summary))
		if title == "" {
			title = "Reviewer issue " + is.ID
		}
		if err := s.st.Ledger.Add(gap.Gap{ID: id, Title: title + " (from " + is.ID + ")", Severity: is.Severity, Round: cur.N}); err != nil {
			s.log.Warn("review gap not added", "issue", is.ID, "err", err)
			continue
		}
		is.Gap = id
	}
}
