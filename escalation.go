package refine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/question"
	"github.com/refine-spec/refine/retry"
	"github.com/refine-spec/refine/rollback"
)

// escalate asks the user what to do after role spent its attempts (FLOW-001
// §5) and applies the answer.
func (s *Session) escalate(ctx context.Context, role RoleName) (stop, error) {
	cur := s.st.Current
	rp := cur.role(role)
	last, attempts, err := rp.lastFailure()
	if err != nil {
		return goOn, fmt.Errorf("round %d %s: %w", cur.N, role, err)
	}
	// FLOW-001 §10: validation failures can trigger a rollback (FLOW-007).
	q := retry.EscalationQuestion(string(role), cur.N, last.FailureType, attempts, s.rollbackAvailable(ctx))
	q.ID = fmt.Sprintf("r%d-%s-escalation-%d", cur.N, role, rp.escalations()+1)
	s.tel.emit(Event{Kind: EventEscalation, Role: role, FailureType: last.FailureType, Message: q.Title})
	a, paused, err := s.ask(ctx, q)
	if err != nil || paused {
		return waitIf(paused), err
	}
	opt, _ := q.Option(a.Key)
	decision := opt.Label
	switch opt.Key {
	case retry.OptionSkip:
		rp.Status, rp.SkipNote = roleSkipped, "skipped by user after "+string(last.FailureType)
		if role == Engineer {
			if err := s.releaseGaps(rp.Gaps, "Engineer skipped this round"); err != nil {
				return goOn, err
			}
		}
	case retry.OptionReassign:
		picked, err := s.reassign(role, a.Text)
		if err != nil {
			return goOn, err
		}
		if len(picked) == 0 {
			rp.Status, rp.SkipNote = roleSkipped, "no other gap to reassign to"
			decision += " (no other gap available: skipped)"
			if role == Engineer {
				if err := s.releaseGaps(rp.Gaps, "Engineer skipped this round"); err != nil {
					return goOn, err
				}
			}
		} else {
			decision += ": " + joinIDs(picked)
			rp.Budget = len(rp.Attempts) + 1 + s.cfg.MaxRetries
		}
	case retry.OptionContext:
		text := strings.TrimSpace(a.Text)
		if text == "" {
			text = "(the user chose to provide context but gave no text)"
		}
		rp.Context = append(rp.Context, text)
		rp.Budget++
	case retry.OptionNarrow:
		g := s.simplest(rp)
		decision += ": " + string(g)
		if role == Engineer {
			var rest []gap.ID
			for _, id := range rp.Gaps {
				if id != g {
					rest = append(rest, id)
				}
			}
			if err := s.releaseGaps(rest, "scope narrowed to "+string(g)); err != nil {
				return goOn, err
			}
			cur.Assigned = []gap.ID{g}
		}
		rp.Gaps = []gap.ID{g}
		rp.Budget++
	case retry.OptionRollback:
		reason := fmt.Sprintf("%s exhausted its retries in round %d (%s)", role.Title(), cur.N, last.FailureType)
		first := flowDecision{Question: Question{ID: q.ID, Kind: q.Kind, Round: q.Round, Title: q.Title}, Answer: a, Decision: decision}
		return s.startRollbackFromQuestion(ctx, a, rollback.TriggerValidation, reason, originEscalation+string(role), first)
	case retry.OptionPause:
		// Offer the same decision again when the session resumes.
		s.st.Pending = append(s.st.Pending, q)
		s.recordDecision(cur.N, "", q, a, decision)
		return waitForAnswer, s.commit(ctx)
	}
	rp.Escalated++
	s.recordDecision(cur.N, "", q, a, decision)
	s.stage()
	return goOn, nil
}

// escalations counts the escalation questions already answered (other
// than "pause") for this role, which keeps question IDs stable.
func (rp *rolePhase) escalations() int { return rp.Escalated }

// releaseGaps returns assigned gaps to OPEN.
func (s *Session) releaseGaps(ids []gap.ID, why string) error {
	for _, id := range ids {
		if g, ok := s.st.Ledger.Get(id); ok && g.State == gap.InProgress {
			if err := s.st.Ledger.Transition(id, gap.Open, s.st.Current.N, s.now(), why); err != nil {
				return err
			}
		}
	}
	return nil
}

// reassign picks new gaps: the IDs named in text when they are assignable,
// else the next ones in assignment order.
func (s *Session) reassign(role RoleName, text string) ([]gap.ID, error) {
	cur := s.st.Current
	rp := cur.role(role)
	if role == Reviewer {
		var picked []gap.ID
		for _, id := range gap.FindIDs(text) {
			if slices.Contains(cur.Reviewed, id) {
				picked = append(picked, id)
			}
		}
		if len(picked) == 0 {
			picked = slices.Clone(cur.Reviewed)
		}
		rp.Gaps = picked
		return picked, nil
	}
	cands := s.assignable()
	gap.AssignmentOrder(cands)
	var picked []gap.ID
	// Named gaps may be any assignable gap or one of the current ones.
	for _, id := range gap.FindIDs(text) {
		if slices.Contains(rp.Gaps, id) || slices.ContainsFunc(cands, func(g gap.Gap) bool { return g.ID == id }) {
			picked = append(picked, id)
		}
	}
	if len(picked) == 0 {
		// No usable IDs named: take the next gaps in assignment order.
		for _, g := range cands {
			if len(picked) < s.cfg.GapsPerRound {
				picked = append(picked, g.ID)
			}
		}
	}
	if len(picked) == 0 {
		return nil, nil
	}
	var release []gap.ID
	for _, id := range rp.Gaps {
		if !slices.Contains(picked, id) {
			release = append(release, id)
		}
	}
	if err := s.releaseGaps(release, "reassigned away by the user"); err != nil {
		return nil, err
	}
	for _, id := range picked {
		if slices.Contains(rp.Gaps, id) {
			continue
		}
		if err := s.st.Ledger.Transition(id, gap.InProgress, cur.N, s.now(), "reassigned to this round by the user"); err != nil {
			return nil, err
		}
	}
	rp.Gaps = picked
	cur.Assigned = picked
	return picked, nil
}

// simplest picks the gap "narrow scope" keeps: lowest severity weight,
// then fewest failed attempts, then ID.
func (s *Session) simplest(rp *rolePhase) gap.ID {
	var gs []gap.Gap
	for _, id := range rp.Gaps {
		if g, ok := s.st.Ledger.Get(id); ok {
			gs = append(gs, g)
		}
	}
	if len(gs) == 0 {
		return rp.Gaps[0]
	}
	failures := map[gap.ID]int{}
	for _, p := range rp.Parts {
		for _, a := range p.Attempts {
			if !a.Success {
				failures[p.Gap]++
			}
		}
	}
	gap.SimplestOrder(gs, s.cfg.Weights, failures)
	return gs[0].ID
}

// askRoundFailed handles a round in which both roles were skipped.
func (s *Session) askRoundFailed(ctx context.Context) (stop, error) {
	cur := s.st.Current
	opts := []Option{
		{Key: "1", Label: "Continue - Start the next round", Effect: "Gaps stay as they are; the next round reassigns them", Recommended: true},
		{Key: "2", Label: "Pause session - Save state for later", Effect: "Session saved, can resume with fresh context"},
		{Key: "3", Label: "Abandon - End the session", Effect: "Session ends as ABANDONED"},
	}
	q := Question{
		ID: fmt.Sprintf("r%d-round-failed", cur.N), Kind: KindRoundFailed, Round: cur.N,
		Title: fmt.Sprintf("Round %d: neither role produced valid output", cur.N),
		Body: fmt.Sprintf("Both the Engineer and the Reviewer failed validation in round %d and were skipped.\n\n"+
			"=== Options ===\n", cur.N) + question.Menu(opts),
		Options: opts,
		Default: "1",
	}
	a, paused, err := s.ask(ctx, q)
	if err != nil || paused {
		return waitIf(paused), err
	}
	opt, _ := q.Option(a.Key)
	s.recordDecision(cur.N, "", q, a, opt.Label)
	switch opt.Key {
	case "2":
		s.st.Pending = append(s.st.Pending, q)
		return waitForAnswer, s.commit(ctx)
	}
	cur.RoundFailedDone = true
	switch opt.Key {
	case "3":
		return sessionEnded, s.finish(ctx, StatusAbandoned, "abandoned by the user after round "+fmt.Sprint(cur.N)+" failed")
	}
	return goOn, s.commit(ctx)
}
