package core

import (
	"fmt"
	"slices"
	"strings"

	"github.com/refine-spec/refine/convergence"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/question"
	"github.com/refine-spec/refine/rollback"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/validate"
)

const keyConvergenceSVG = "convergence.svg"

// converge records the round's convergence row (once) and, on
// DIVERGENCE_WARNING, asks the divergence question (FLOW-002).
func (s *Engine) converge() (stop, error) {
	cur := s.st.Current
	t := Tracker(s.st, &s.cfg)
	if !cur.Converged {
		for _, l := range recordConvergence(s.st, cur, t, s.at) {
			s.log.Warn(l.Msg, l.Args...)
		}
	}
	if t.Current() != convergence.DivergenceWarning || cur.DivergenceDone {
		return goOn, nil
	}
	q := convergence.DivergenceQuestion(convergence.DivergenceInput{Rows: t.Rows(), Settings: t.Settings(), Ledger: &s.st.Ledger, RollbackAvailable: s.rollbackAvailable()})
	q.ID, q.Round = fmt.Sprintf("r%d-divergence", cur.N), cur.N
	a, paused, err := s.ask(q)
	if err != nil || paused {
		return waitIf(paused), err
	}
	opt, _ := q.Option(a.Key)
	if opt.Key == convergence.KeyRollBack {
		// The decision is filed under this round once the rollback's
		// dialogs are done, so the round's archive does not swallow it.
		first := state.FlowDecision{Question: question.Question{ID: q.ID, Kind: q.Kind, Round: q.Round, Title: q.Title}, Answer: a, Decision: opt.Label}
		st, err := s.startRollbackFromQuestion(a, rollback.TriggerDivergence, "divergence warning in round "+fmt.Sprint(cur.N), originDivergence, first)
		if err == nil && st == goOn && s.st.RollbackFlow == nil && !cur.DivergenceDone {
			return s.converge() // the rollback was cancelled: the question is asked again
		}
		return st, err
	}
	da := DecideDivergence(&s.st.Ledger, opt.Key, opt.Label, a.Text)
	if err := ApplyDivergence(s.st, t, cur.N, da, s.at); err != nil {
		return goOn, err
	}
	cur.DivergenceDone = true
	recordDecision(s.st, s.at(), cur.N, "", q, a, da.Decision)
	return goOn, nil
}

// checkTermination walks the termination tree between rounds (FLOW-005),
// asking the early-termination offer and acknowledgments as they come due.
func (s *Engine) checkTermination() (bool, error) {
	for {
		if s.st.Outcome.Terminal() {
			return true, nil
		}
		if paused, err := s.resumeDeciding(); err != nil || paused {
			return false, err
		}
		d := convergence.Decide(terminationInput(s.st, s.cfg.MaxRounds))
		switch {
		case d.Outcome.Terminal():
			return true, s.finish(d.Outcome, d.Reason)
		case d.NeedsAcknowledgment:
			if again, err := s.askHighAck(); !again {
				return false, err
			}
		case d.NeedsUserDecisions:
			// The conflicts every open gap is blocked on.
			if err := BlockedWithoutDecisions(s.st); err != nil {
				return false, err
			}
			s.st.Deciding = s.st.Round
			if paused, err := s.resolveConflicts(s.st.Round); err != nil || paused {
				return false, err
			}
			s.st.Deciding = 0
		case d.OfferEarlyTermination && s.st.Round > 0:
			// Before round 1 nothing has been refined: no offer yet.
			if again, err := s.offerEarlyTermination(d.OpenSet); !again {
				return false, err
			}
		default:
			s.st.Choice = choiceBetweenRounds(s.st.Choice)
			return false, nil
		}
	}
}

// resumeDeciding goes on asking the blocking decisions of the round
// whose decisions were being asked (state.Deciding), if any.
func (s *Engine) resumeDeciding() (paused bool, err error) {
	r := s.st.Deciding
	if r == 0 {
		return false, nil
	}
	if paused, err := s.resolveConflicts(r); err != nil || paused {
		return paused, err
	}
	s.st.Deciding = 0
	return false, nil
}

// askHighAck asks the user to acknowledge the unresolved HIGH conflicts;
// again is false when the walk stops (paused, or an error).
func (s *Engine) askHighAck() (again bool, err error) {
	q := highAckQuestion(s.st)
	a, paused, err := s.ask(q)
	if err != nil || paused {
		return false, err
	}
	opt, _ := q.Option(a.Key)
	recordDecision(s.st, s.at(), s.st.Round, "", q, a, opt.Label)
	if opt.Key == convergence.KeyAcknowledge {
		s.st.HighAck = true
	} else {
		s.st.Choice = ""
	}
	s.stage()
	return true, nil
}

// offerEarlyTermination offers to end the session with openSet open;
// again is false when the walk stops (paused, or an error).
func (s *Engine) offerEarlyTermination(openSet string) (again bool, err error) {
	q := EarlyTerminationQuestion(s.st, s.cfg.MaxRounds, Tracker(s.st, &s.cfg).Current() == convergence.Converging)
	a, paused, err := s.ask(q)
	if err != nil || paused {
		return false, err
	}
	opt, _ := q.Option(a.Key)
	ea := DecideEarlyTermination(opt.Key, lastAnswerAuto(s.st))
	if ea.Record {
		recordDecision(s.st, s.at(), s.st.Round, "", q, a, opt.Label)
	}
	s.st.OfferedOpenSet = openSet
	if ea.Pause {
		s.st.Pending = append(s.st.Pending, q)
		s.st.OfferedOpenSet = ""
		return false, s.checkpoint()
	}
	if ea.SetChoice {
		s.st.Choice = ea.Choice
	}
	s.stage()
	return true, nil
}

// finish ends the session with a terminal outcome and writes the final
// artifacts.
func (s *Engine) finish(o OutcomeStatus, reason string) error {
	s.st.Outcome, s.st.OutcomeReason, s.st.FinishedAt = o, reason, s.at()
	s.log.Info("session finished", "outcome", o, "reason", reason)
	DropPendingAtEnd(s.st)
	ops, err := s.finalOps()
	if err != nil {
		return err
	}
	iops, err := s.integrationStartOps() // integrate.go
	if err != nil {
		return err
	}
	ops = append(ops, iops...)
	s.journal.SnapshotNext = true // a finished session's state.json is whole and current
	if !s.st.CleanupDone {
		// With no archive the session-end cleanup has nothing to ask: it
		// is settled in this commit rather than in one of its own.
		if _, _, ask, err := cleanupQuestion(s.out, &s.cfg, s.st.Rollbacks); err != nil {
			return err
		} else if !ask {
			s.st.CleanupDone = true
		}
	}
	if err := s.checkpoint(ops...); err != nil {
		return err
	}
	s.emit(Event{Kind: EventSessionFinished, Outcome: o, Message: reason})
	return nil
}

// finalOps renders final_summary.md and final_spec.md.
func (s *Engine) finalOps() ([]store.Op, error) {
	sum := convergence.Summary(convergence.SummaryInput{
		Outcome: s.st.Outcome, Reason: s.st.OutcomeReason, Rounds: s.st.Round,
		Started: s.st.CreatedAt, Finished: s.st.FinishedAt, Ledger: &s.st.Ledger, Extra: extraKnown(s.st), SpecKey: state.KeyFinalSpec,
	})
	acceptedGaps := s.st.Ledger.InState(gap.Accepted)
	ids := make([]gap.ID, len(acceptedGaps))
	for i, g := range acceptedGaps {
		ids[i] = g.ID
	}
	texts, err := s.finalResolutions(ids)
	if err != nil {
		return nil, err
	}
	var accepted []convergence.Resolution
	for _, g := range acceptedGaps {
		accepted = append(accepted, convergence.Resolution{ID: g.ID, Title: g.Title, Text: texts[g.ID]})
	}
	decisions := decisionLines(s.st, nil) // user and conflict decisions (integrate.go)
	limits := knownLimitations(s.st)      // limitations.go
	src, err := s.source()
	if err != nil {
		return nil, fmt.Errorf("final spec: %w", err)
	}
	spec := convergence.FinalSpec(src, accepted, decisions, limits)
	return []store.Op{store.Put(state.KeyFinalSum, []byte(sum)), store.Put(state.KeyFinalSpec, []byte(spec))}, nil
}

// finalResolutions returns each accepted gap's section from the last
// Engineer output that addressed it. Each round's output is read and
// parsed at most once, newest first, however many gaps it resolved, so the
// final round costs time linear in the session's outputs.
func (s *Engine) finalResolutions(ids []gap.ID) (map[gap.ID]string, error) {
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
		b, err := s.get(state.OutputKey(r.N, llm.Engineer))
		if err != nil {
			return nil, fmt.Errorf("final spec: read %s: %w", state.OutputKey(r.N, llm.Engineer), err)
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
func convergenceOps(t *convergence.Tracker) []store.Op {
	rows := t.Rows()
	if len(rows) > chartRounds {
		rows = rows[len(rows)-chartRounds:]
	}
	return []store.Op{store.Put(keyConvergenceSVG, convergence.SVG(rows))}
}
