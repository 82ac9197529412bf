package refine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/refine-spec/refine/conflict"
	"github.com/refine-spec/refine/gap"
)

// ErrBlocked: the session cannot be approved while a CRITICAL conflict is
// unresolved, or while a HIGH one is unresolved and not acknowledged. The
// error names the conflicts; resolve them (answer their questions) or
// acknowledge the HIGH ones (ApproveRequest.AcknowledgeHigh, `refine
// approve --acknowledge-high`).
var ErrBlocked = errors.New("approval blocked by unresolved conflicts")

// ApproveRequest is the user's approval of the spec as it stands.
type ApproveRequest struct {
	// Note is why, recorded as the outcome's reason and in decisions.md.
	Note string
	// AcknowledgeHigh accepts the spec although HIGH conflicts are
	// unresolved (they become known limitations). CRITICAL conflicts
	// cannot be acknowledged away.
	AcknowledgeHigh bool
}

// Approve ends the session now as USER_APPROVED, whatever round it is in:
// the user accepts the spec with its known gaps. It refuses with an error
// wrapping ErrBlocked, naming the conflicts, while a CRITICAL conflict is
// unresolved or a HIGH one is neither resolved nor acknowledged. Pending
// questions are dropped (the archive cleanup question follows on the next
// Run). Approving a finished session fails with ErrFinished.
func (s *Session) Approve(ctx context.Context, req ApproveRequest) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	if err := s.begin(ctx); err != nil {
		return err
	}
	if s.st.Outcome.Terminal() {
		return fmt.Errorf("approve: %w (%s)", ErrFinished, s.st.Outcome)
	}
	high, err := approvalBlock(s.st.Conflicts, req.AcknowledgeHigh || s.st.HighAck)
	if err != nil {
		return err
	}
	if high {
		s.st.HighAck = true
	}
	reason := endReason("approved by the user", req.Note)
	s.fileEndDecision("Approve the spec as it stands", "approve", "USER_APPROVED", req.Note)
	return s.finish(ctx, StatusUserApproved, reason)
}

// Abandon ends the session now as ABANDONED; it always works on a session
// that is not finished yet (ErrFinished otherwise).
func (s *Session) Abandon(ctx context.Context, reason string) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	if err := s.begin(ctx); err != nil {
		return err
	}
	if s.st.Outcome.Terminal() {
		return fmt.Errorf("abandon: %w (%s)", ErrFinished, s.st.Outcome)
	}
	why := endReason("abandoned by the user", reason)
	s.fileEndDecision("Abandon the session", "abandon", "ABANDONED", reason)
	return s.finish(ctx, StatusAbandoned, why)
}

// approvalBlock decides whether the session may be approved with its
// conflicts: not while a CRITICAL one is unresolved, nor while a HIGH one
// is unresolved and not acknowledged (acked). high reports unresolved HIGH
// conflicts, which the approval acknowledges.
func approvalBlock(conflicts []conflict.Conflict, acked bool) (high bool, err error) {
	var crits, highs []string
	for _, c := range conflict.Pending(conflicts) {
		switch {
		case c.Issue.Severity == gap.Critical:
			crits = append(crits, c.IssueID)
		case c.Issue.Severity.AtLeastHigh():
			highs = append(highs, c.IssueID)
		}
	}
	switch {
	case len(crits) > 0:
		return false, fmt.Errorf("approve: %w: unresolved CRITICAL conflict(s) %s block every ending but abandoning; answer their questions (Session.Answer) first", ErrBlocked, strings.Join(crits, ", "))
	case len(highs) > 0 && !acked:
		return false, fmt.Errorf("approve: %w: unresolved HIGH conflict(s) %s need an explicit acknowledgment (ApproveRequest.AcknowledgeHigh)", ErrBlocked, strings.Join(highs, ", "))
	}
	return len(highs) > 0, nil
}

// endReason is the outcome's reason: what ended the session, and the
// user's note on one line when there is one.
func endReason(what, note string) string {
	if n := strings.TrimSpace(note); n != "" {
		return what + ": " + oneLine(n)
	}
	return what
}

// fileEndDecision records an approve/abandon decision and clears what was
// waiting: questions and a rollback in its dialogs.
func (s *Session) fileEndDecision(title, key, outcome, note string) {
	round := s.currentRound()
	q := Question{ID: fmt.Sprintf("r%d-%s", round, key), Kind: KindEarlyTermination, Round: round, Title: title}
	s.recordProcedural(round, "", q, Answer{Key: key, Text: strings.TrimSpace(note)}, "Session ended as "+outcome)
	s.st.Pending, s.st.Answers, s.st.RollbackFlow = nil, nil, nil
}

// onlyCleanupPending reports whether the session is finished and the only
// questions left are the end-of-session archive cleanup: the session then
// reports its outcome, not PAUSED (the question waits).
func onlyCleanupPending(st *state) bool {
	if !st.Outcome.Terminal() || len(st.Pending) == 0 {
		return false
	}
	for _, q := range st.Pending {
		if !isCleanupQuestion(q) {
			return false
		}
	}
	return true
}

// isCleanupQuestion recognises the session-end archive question.
func isCleanupQuestion(q Question) bool {
	return q.Kind == KindRollback && q.Title == "ARCHIVE CLEANUP"
}
