package refine

import (
	"context"

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
	_, err := s.input(ctx, core.Approve{At: s.now(), Note: req.Note, AcknowledgeHigh: req.AcknowledgeHigh}, false)
	return err
}

// Abandon ends the session now as ABANDONED; it always works on a session
// that is not finished yet (ErrFinished otherwise).
func (s *Session) Abandon(ctx context.Context, reason string) error {
	_, err := s.input(ctx, core.Abandon{At: s.now(), Reason: reason}, false)
	return err
}
