package refine

import (
	"context"
	"fmt"

	"github.com/refine-spec/refine/internal/core"
)

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
	if s.St.Outcome.Terminal() {
		return fmt.Errorf("approve: %w (%s)", ErrFinished, s.St.Outcome)
	}
	high, err := core.ApprovalBlocked(s.St, req.AcknowledgeHigh)
	if err != nil {
		return err
	}
	if high {
		s.St.HighAck = true
	}
	reason := core.EndReason("approved by the user", req.Note)
	s.FileEndDecision("Approve the spec as it stands", "approve", "USER_APPROVED", req.Note)
	return s.apply(ctx, func() error { return s.Finish(StatusUserApproved, reason) })
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
	if s.St.Outcome.Terminal() {
		return fmt.Errorf("abandon: %w (%s)", ErrFinished, s.St.Outcome)
	}
	why := core.EndReason("abandoned by the user", reason)
	s.FileEndDecision("Abandon the session", "abandon", "ABANDONED", reason)
	return s.apply(ctx, func() error { return s.Finish(StatusAbandoned, why) })
}
