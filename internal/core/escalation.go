package core

import (
	"fmt"

	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/question"
	"github.com/refine-spec/refine/retry"
	"github.com/refine-spec/refine/rollback"
)

// escalate asks the user what to do after role spent its attempts (FLOW-001
// §5) and applies the answer.
func (s *Engine) escalate(role llm.RoleName) (stop, error) {
	cur := s.st.Current
	rp := cur.Role(role)
	last, attempts, err := rp.LastFailure()
	if err != nil {
		return goOn, fmt.Errorf("round %d %s: %w", cur.N, role, err)
	}
	// FLOW-001 §10: validation failures can trigger a rollback (FLOW-007).
	q := retry.EscalationQuestion(string(role), cur.N, last.FailureType, attempts, s.rollbackAvailable())
	q.ID = fmt.Sprintf("r%d-%s-escalation-%d", cur.N, role, rp.Escalated+1)
	s.emit(Event{Kind: EventEscalation, Role: role, FailureType: last.FailureType, Message: q.Title})
	a, paused, err := s.ask(q)
	if err != nil || paused {
		return waitIf(paused), err
	}
	opt, _ := q.Option(a.Key)
	switch opt.Key {
	case retry.OptionRollback:
		reason := fmt.Sprintf("%s exhausted its retries in round %d (%s)", role.Title(), cur.N, last.FailureType)
		first := state.FlowDecision{Question: question.Question{ID: q.ID, Kind: q.Kind, Round: q.Round, Title: q.Title}, Answer: a, Decision: opt.Label}
		return s.startRollbackFromQuestion(a, rollback.TriggerValidation, reason, originEscalation+string(role), first)
	case retry.OptionPause:
		// Offer the same decision again when the session resumes.
		s.st.Pending = append(s.st.Pending, q)
		recordDecision(s.st, s.at(), cur.N, "", q, a, opt.Label)
		return waitForAnswer, s.checkpoint()
	}
	p := DecideEscalation(s.st, role, EscalationAnswer{Key: opt.Key, Label: opt.Label, Text: a.Text, FailureType: last.FailureType}, assignable(s.st), &s.cfg)
	if err := ApplyEscalation(s.st, role, p, s.at); err != nil {
		return goOn, err
	}
	rp.Escalated++
	recordDecision(s.st, s.at(), cur.N, "", q, a, p.Decision)
	s.stage()
	return goOn, nil
}

// askRoundFailed handles a round in which both roles were skipped.
func (s *Engine) askRoundFailed() (stop, error) {
	cur := s.st.Current
	q := roundFailedQuestion(cur.N)
	a, paused, err := s.ask(q)
	if err != nil || paused {
		return waitIf(paused), err
	}
	opt, _ := q.Option(a.Key)
	recordDecision(s.st, s.at(), cur.N, "", q, a, opt.Label)
	switch opt.Key {
	case "2":
		s.st.Pending = append(s.st.Pending, q)
		return waitForAnswer, s.checkpoint()
	}
	cur.RoundFailedDone = true
	switch opt.Key {
	case "3":
		return sessionEnded, s.finish(StatusAbandoned, "abandoned by the user after round "+fmt.Sprint(cur.N)+" failed")
	}
	return goOn, s.checkpoint()
}
