package refine

import (
	"context"
	"fmt"

	"github.com/refine-spec/refine/internal/core"
	"github.com/refine-spec/refine/internal/rollbacktext"
	"github.com/refine-spec/refine/rollback"
)

// RollbackRequest asks to undo whole rounds, back to the end of round To.
type RollbackRequest struct {
	To     int
	Reason string
	// Adjustments are instructions for the retried rounds; they are recorded
	// in the archive metadata and carried into later prompts. In
	// INTERACTIVE mode a rollback without adjustments asks the user for
	// them (the rollback options question).
	Adjustments []string
	// Trigger says what asked for the rollback (default: the user).
	Trigger rollback.Trigger
}

func (r RollbackRequest) core() core.RollbackRequest {
	return core.RollbackRequest{To: r.To, Reason: r.Reason, Adjustments: r.Adjustments, Trigger: r.Trigger}
}

// Rollback undoes whole rounds as one atomic Store commit after the dialogs
// the rollback mode calls for: at the session limit the limit question
// (the rollback does not happen and the error wraps ErrRollbackLimit); in
// AUTO_RETRY mode a round's first rollback retries with automatic
// adjustments and no question; a repeated rollback of a round (or any in
// STRICT mode) asks the repeated-rollback question with its root-cause
// analysis; otherwise, when no adjustments are given, the rollback options
// question. Each undone round's folder goes into round_NNN_rolled_back_K.tar.gz
// with its metadata, its decisions and its analysis.md; the state,
// status.md and decisions.md are restored from the target round's backups.
// A rollback of a finished session reopens it. A target outside the
// rounds played, or whose backups were rotated out, fails at once.
//
// Nothing is committed until the dialogs carry the rollback out or an
// answer is deferred (RollbackReport.Pending): an Asker that fails on a
// rollback question, or the answer "cancel" (offered by every dialog;
// RollbackReport.Cancelled), leaves the session as it was. While a
// rollback waits for its answer, the same request (target, reason,
// adjustments) returns ErrDeferred with its question, and any other is
// refused with an error wrapping ErrRollbackPending that names it
// (PendingRollbackError).
func (s *Session) Rollback(ctx context.Context, req RollbackRequest) (RollbackReport, error) {
	im, ok := s.config.Asker.(Immediate)
	r, err := s.input(ctx, core.Rollback{At: s.now(), Request: req.core(), Asks: true, Immediate: ok && im.Immediate()}, true)
	return r.Rollback, err
}

// SetRollbackMode changes the session's rollback mode and records it with
// the session, so later runs (and `refine resume`) keep it. It is the
// spec's "Don't auto-retry, ask me" (INTERACTIVE) and "Enable auto-retry
// mode" (AUTO_RETRY) override.
func (s *Session) SetRollbackMode(ctx context.Context, m rollback.Mode) error {
	if !m.Valid() {
		return fmt.Errorf("%w: rollback mode %q: want INTERACTIVE, AUTO_RETRY or STRICT", ErrInvalidConfig, m)
	}
	set := s.Settings()
	if set.RollbackMode == m {
		return nil
	}
	set.RollbackMode = m
	s.config.Logger.Info(rollbacktext.OverrideMessage(m == rollback.ModeAutoRetry))
	return s.SetSettings(ctx, set)
}
