package refine

import (
	"context"
	"fmt"
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
func (s *Session) converge(ctx context.Context) (bool, error) {
	cur := s.st.Current
	t := s.tracker()
	if !cur.Converged {
		before := s.st.PrevLedger
		if before == nil {
			before = &gap.Ledger{}
		}
		wasConverging := t.Current() == convergence.Converging
		t.Observe(cur.N, before, &s.st.Ledger)
		if wasConverging && t.Current() != convergence.Converging {
			// Progress stopped: an early-termination offer declined while
			// the loop converged is worth making again.
			s.st.OfferedOpenSet = ""
		}
		cur.Converged = true
	}
	if t.Current() != convergence.DivergenceWarning || cur.DivergenceDone {
		return false, nil
	}
	p := convergence.DivergencePrompt(convergence.DivergenceInput{Rows: t.Rows(), Settings: t.Settings(), Ledger: &s.st.Ledger, RollbackAvailable: s.rollbackAvailable(ctx)})
	q := questionFrom(p, fmt.Sprintf("r%d-divergence", cur.N), KindDivergence, cur.N)
	// DESIGN §7: the user (or a host's policy) may also stop on divergence.
	q.Options = append(q.Options, Option{Key: keyStop, Label: "Stop - End the session here without approving it",
		Effect: "Session ends as STALL_EXIT; open gaps are listed as known limitations"})
	a, paused, err := s.ask(ctx, q)
	if err != nil || paused {
		return paused, err
	}
	opt, _ := q.option(a.Key)
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
				return false, fmt.Errorf("round %d narrow scope: %w", cur.N, err)
			}
		}
		decision += ": deferred " + dash(joinIDs(ids))
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
	case keyStop:
		s.st.Choice = string(convergence.ChoiceStop)
	case convergence.KeyRollBack:
		if err := s.rollbackFromQuestion(ctx, a, rollback.TriggerDivergence, "divergence warning in round "+fmt.Sprint(cur.N)); err != nil {
			return false, err
		}
		// The round is gone; the decision belongs to the restored timeline.
		s.recordDecision(s.st.Round, "", q, a, fmt.Sprintf("%s: rolled back to round %d", decision, s.st.Round))
		return false, s.commit(ctx)
	}
	cur.DivergenceDone = true
	s.recordDecision(cur.N, "", q, a, decision)
	return false, nil
}

// keyStop is the divergence option that ends the session as STALL_EXIT.
const keyStop = "stop"

// questionFrom converts a pure package's prompt into a Question.
func questionFrom(p convergence.Prompt, id string, kind QuestionKind, round int) Question {
	q := Question{ID: id, Kind: kind, Round: round, Title: p.Title, Body: p.Body, AllowText: p.AllowText, Default: p.Default}
	for _, o := range p.Options {
		q.Options = append(q.Options, Option{Key: o.Key, Label: o.Label, Effect: o.Effect, Recommended: o.Recommended})
	}
	return q
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
			return true, s.finish(ctx, OutcomeStatus(d.Outcome), d.Reason)
		case d.NeedsAcknowledgment:
			q := questionFrom(convergence.HighConflictPrompt(s.conflictBlock().UnresolvedHigh), fmt.Sprintf("r%d-high-conflict-ack", s.st.Round), KindConflict, s.st.Round)
			a, paused, err := s.ask(ctx, q)
			if err != nil || paused {
				return false, err
			}
			opt, _ := q.option(a.Key)
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
			p := convergence.EarlyTerminationPrompt(convergence.EarlyTerminationInput{Round: s.st.Round, MaxRounds: s.cfg.MaxRounds, Ledger: &s.st.Ledger})
			// Automated policy: keep refining while the loop converges;
			// accept as good enough once progress stops.
			if s.tracker().Current() == convergence.Converging {
				p.Default = convergence.KeyContinue
			}
			q := questionFrom(p, fmt.Sprintf("r%d-early-termination", s.st.Round), KindEarlyTermination, s.st.Round)
			a, paused, err := s.ask(ctx, q)
			if err != nil || paused {
				return false, err
			}
			opt, _ := q.option(a.Key)
			s.recordDecision(s.st.Round, "", q, a, opt.Label)
			s.st.OfferedOpenSet = d.OpenSet
			switch opt.Key {
			case convergence.KeyPause:
				s.st.Pending = append(s.st.Pending, q)
				s.st.OfferedOpenSet = ""
				return false, s.commit(ctx)
			case convergence.KeyContinue:
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

// lastReviewApproved: the last review's verdict was APPROVE, or every
// HIGH/CRITICAL issue it raised named a gap (the lifecycle then reopened or
// revised that gap, so no concern is left unattached).
func (s *Session) lastReviewApproved() bool {
	for i := len(s.st.Rounds) - 1; i >= 0; i-- {
		r := s.st.Rounds[i]
		if r.Verdict == "" {
			continue
		}
		if r.Verdict == string(validate.Approve) {
			return true
		}
		for _, is := range s.st.Issues {
			if is.Round == r.N && is.Severity.AtLeastHigh() && is.Gap == "" {
				return false
			}
		}
		return true
	}
	return true
}

// finish ends the session with a terminal outcome and writes the final
// artifacts.
func (s *Session) finish(ctx context.Context, o OutcomeStatus, reason string) error {
	s.st.Outcome, s.st.OutcomeReason, s.st.FinishedAt = o, reason, s.now()
	s.log.Info("session finished", "outcome", o, "reason", reason)
	ops, err := s.finalOps(ctx)
	if err != nil {
		return err
	}
	if err := s.commit(ctx, ops...); err != nil {
		return err
	}
	s.emit(Event{Kind: EventSessionFinished, Outcome: o, Message: reason})
	return nil
}

// finalOps renders final_summary.md and final_spec.md.
func (s *Session) finalOps(ctx context.Context) ([]Op, error) {
	sum := convergence.Summary(convergence.SummaryInput{
		Outcome: convergence.Outcome(s.st.Outcome), Reason: s.st.OutcomeReason, Rounds: s.st.Round,
		Started: s.st.CreatedAt, Finished: s.st.FinishedAt, Ledger: &s.st.Ledger, Extra: s.extraLimitations(), SpecKey: keyFinalSpec,
	})
	var accepted []convergence.Resolution
	for _, g := range s.st.Ledger.InState(gap.Accepted) {
		text, err := s.finalResolution(ctx, g.ID)
		if err != nil {
			return nil, err
		}
		accepted = append(accepted, convergence.Resolution{ID: g.ID, Title: g.Title, Text: text})
	}
	var decisions []string
	for _, d := range s.st.Decisions {
		line := fmt.Sprintf("%s (round %d) %s: %s", d.ID, d.Round, d.Question, d.Decision)
		if d.Issue != "" {
			line = fmt.Sprintf("%s (round %d, %s) %s: %s", d.ID, d.Round, d.Issue, d.Question, d.Decision)
		}
		decisions = append(decisions, line)
	}
	limits := append(convergence.Limitations(&s.st.Ledger), s.extraLimitations()...)
	src, err := s.source(ctx)
	if err != nil {
		return nil, fmt.Errorf("final spec: %w", err)
	}
	spec := convergence.FinalSpec(src, accepted, decisions, limits)
	return []Op{Put(keyFinalSum, []byte(sum)), Put(keyFinalSpec, []byte(spec))}, nil
}

// finalResolution returns the accepted gap's section from the last
// Engineer output that addressed it.
func (s *Session) finalResolution(ctx context.Context, id gap.ID) (string, error) {
	for i := len(s.st.Rounds) - 1; i >= 0; i-- {
		r := s.st.Rounds[i]
		if !containsID(r.GapsAddressed, id) {
			continue
		}
		b, err := s.get(ctx, outputKey(r.N, Engineer))
		if err != nil {
			return "", fmt.Errorf("final spec: read %s: %w", outputKey(r.N, Engineer), err)
		}
		res := validate.Engineer(string(b), validate.Options{MaxOutputBytes: s.cfg.MaxOutputBytes})
		for _, sec := range res.Sections {
			if sec.ID == id {
				return strings.TrimSpace(sec.Body), nil
			}
		}
	}
	return "(the accepted resolution's text is no longer in the session folder)", nil
}

// convergenceOps rewrites convergence.svg from the tracker's rows.
func (s *Session) convergenceOps() []Op {
	return []Op{Put(keyConvergenceSVG, convergence.SVG(s.tracker().Rows()))}
}
