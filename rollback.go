package refine

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/refine-spec/refine/internal/core"
	"github.com/refine-spec/refine/internal/rollbacktext"
	"github.com/refine-spec/refine/rollback"
)

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
	if err := s.lock(ctx); err != nil {
		return RollbackReport{}, err
	}
	defer s.unlock()
	if err := s.begin(ctx); err != nil {
		return RollbackReport{}, err
	}
	if req.Trigger == "" {
		req.Trigger = rollback.TriggerUser
	}
	if f := s.St.RollbackFlow; f != nil {
		pending := slices.Clone(s.St.Pending)
		if !f.Requested(req) {
			// Not an answer to that one's dialog: its target and reason
			// would be taken for this request's.
			return RollbackReport{Pending: pending}, pendingRollback(f, pending)
		}
		return RollbackReport{Pending: pending}, fmt.Errorf("rollback: a rollback of round %d already waits for an answer: %w", f.Current, ErrDeferred)
	}
	current := s.St.CurrentRound()
	// Nothing is committed until the dialogs carry the rollback out,
	// cancel it, or wait for an answer: an answer the Asker cannot give
	// (an option not offered, say) leaves the session as it was.
	var rep RollbackReport
	k := newAsking()
	r, err := s.decide(ctx, func() (err error) {
		rep, err = s.StartRollback(req, current)
		return err
	})
	for s.St.RollbackFlow != nil && (err == nil || errors.Is(err, ErrRollbackLimit)) {
		// The dialog waits for an answer: ask the Asker, then play on.
		answered, aerr := s.askPending(ctx, k)
		if aerr != nil {
			s.discard()
			return RollbackReport{}, fmt.Errorf("%w (the session is unchanged)", aerr)
		}
		if !answered {
			break // the question waits, committed with the rollback's dialog
		}
		s.Out = r.writes
		r, err = s.decide(ctx, func() (err error) {
			rep, err = s.DriveRollback()
			if err == nil {
				err = s.Flush()
			}
			return err
		})
	}
	if failedUncommitted(err) || rep.Cancelled {
		// Failed before its commit (a backup that does not read, say), or
		// cancelled: the session stays as stored, untouched.
		s.discard()
		return rep, err
	}
	if perr := s.persist(ctx, r); perr != nil {
		return RollbackReport{}, perr
	}
	return rep, err
}

// discard drops what the decisions since the last commit changed in
// memory and did not commit: the next call reads the session as stored.
func (s *Session) discard() {
	s.unpersisted, s.Stale, s.LastRendered, s.Out = 0, true, nil, nil
}

// pendingRollback is the refusal of a rollback request while the rollback
// f waits in its dialog at the questions pending.
func pendingRollback(f *core.RollbackFlow, pending []Question) error {
	e := &PendingRollbackError{Round: f.Current, To: f.To, Reason: f.Reason, Adjustments: slices.Clone(f.Adjustments)}
	if len(pending) > 0 {
		e.Question = pending[0].ID
	}
	return fmt.Errorf("rollback: %w", e)
}

// SetRollbackMode changes the session's rollback mode and records it with
// the session, so later runs (and `refine resume`) keep it. It is the
// spec's "Don't auto-retry, ask me" (INTERACTIVE) and "Enable auto-retry
// mode" (AUTO_RETRY) override.
func (s *Session) SetRollbackMode(ctx context.Context, m rollback.Mode) error {
	if !m.Valid() {
		return fmt.Errorf("%w: rollback mode %q: want INTERACTIVE, AUTO_RETRY or STRICT", ErrInvalidConfig, m)
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	if err := s.begin(ctx); err != nil {
		return err
	}
	if core.RollbackModeOf(&s.Cfg) == m {
		return nil
	}
	set := s.Cfg.Settings
	set.RollbackMode = m
	s.Log.Info(rollbacktext.OverrideMessage(m == rollback.ModeAutoRetry))
	return s.apply(ctx, func() error { return s.ApplySettings(set) })
}

// failedUncommitted says whether a rollback's error is a failure, not one
// of its dialog's outcomes (waiting for an answer, the limit reached) or
// a cancellation, whose state is kept and committed by the next step.
func failedUncommitted(err error) bool {
	return err != nil && !errors.Is(err, ErrDeferred) && !errors.Is(err, ErrRollbackLimit) &&
		!errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}
