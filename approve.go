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
	high, err := approvalBlocked(s.st, req.AcknowledgeHigh)
	if err != nil {
		return err
	}
	if high {
		s.st.HighAck = true
	}
	reason := endReason("approved by the user", req.Note)
	s.fileEndDecision("Approve the spec as it stands", "approve", "USER_APPROVED", req.Note)
	return s.apply(ctx, func() error { return s.finish(StatusUserApproved, reason) })
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
	return s.apply(ctx, func() error { return s.finish(StatusAbandoned, why) })
}

// approvalBlocked is why st cannot be approved: unresolved CRITICAL
// conflicts, or HIGH ones neither resolved nor acknowledged (ack, or an
// earlier acknowledgment). high says HIGH conflicts are unresolved: the
// approval acknowledges them.
func approvalBlocked(st *state, ack bool) (high bool, err error) {
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

// endReason is the outcome's reason for an ending the user asked for,
// with the user's note.
func endReason(base, note string) string {
	if n := strings.TrimSpace(note); n != "" {
		return base + ": " + oneLine(n)
	}
	return base
}

// fileEndDecision records an approve/abandon decision and clears what was
// waiting: questions and a rollback in its dialogs.
func (s *engine) fileEndDecision(title, key, outcome, note string) {
	round := s.st.currentRound()
	q := Question{ID: fmt.Sprintf("r%d-%s", round, key), Kind: KindEarlyTermination, Round: round, Title: title}
	s.st.recordProcedural(s.now(), round, "", q, Answer{Key: key, Text: strings.TrimSpace(note)}, "Session ended as "+outcome)
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
