package core

import (
	"errors"
	"fmt"
	"strings"

	"github.com/refine-spec/refine/conflict"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/core/render"
	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/question"
)

// ErrBlocked: the session cannot be approved while a CRITICAL conflict is
// unresolved, or while a HIGH one is unresolved and not acknowledged. The
// error names the conflicts; resolve them (answer their questions) or
// acknowledge the HIGH ones (ApproveRequest.AcknowledgeHigh, `refine
// approve --acknowledge-high`).
var ErrBlocked = errors.New("approval blocked by unresolved conflicts")

// ApprovalBlocked is why st cannot be approved: unresolved CRITICAL
// conflicts, or HIGH ones neither resolved nor acknowledged (ack, or an
// earlier acknowledgment). high says HIGH conflicts are unresolved: the
// approval acknowledges them.
func ApprovalBlocked(st *state.State, ack bool) (high bool, err error) {
	var crit, highs []string
	for _, c := range conflict.Pending(st.Conflicts) {
		switch {
		case c.Issue.Severity == gap.Critical:
			crit = append(crit, c.IssueID)
		case c.Issue.Severity.AtLeastHigh():
			highs = append(highs, c.IssueID)
		}
	}
	switch {
	case len(crit) > 0:
		return false, fmt.Errorf("approve: %w: unresolved CRITICAL conflict(s) %s block every ending but abandoning; answer their questions (Session.Answer) first", ErrBlocked, strings.Join(crit, ", "))
	case len(highs) > 0 && !ack && !st.HighAck:
		return false, fmt.Errorf("approve: %w: unresolved HIGH conflict(s) %s need an explicit acknowledgment (ApproveRequest.AcknowledgeHigh)", ErrBlocked, strings.Join(highs, ", "))
	}
	return len(highs) > 0, nil
}

// EndReason is the outcome's reason for an ending the user asked for,
// with the user's note.
func EndReason(base, note string) string {
	if n := strings.TrimSpace(note); n != "" {
		return base + ": " + render.OneLine(n)
	}
	return base
}

// fileEndDecision records an approve/abandon decision and clears what was
// waiting: questions and a rollback in its dialogs.
func (s *Engine) fileEndDecision(title, key, outcome, note string) {
	round := s.st.CurrentRound()
	q := question.Question{ID: fmt.Sprintf("r%d-%s", round, key), Kind: question.KindEarlyTermination, Round: round, Title: title}
	recordProcedural(s.st, s.at(), round, "", q, question.Answer{Key: key, Text: strings.TrimSpace(note)}, "Session ended as "+outcome)
	s.st.Pending, s.st.Answers, s.st.RollbackFlow = nil, nil, nil
}
