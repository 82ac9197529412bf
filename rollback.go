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
	current := s.St.CurrentRound()
	if s.St.RollbackFlow != nil {
		return RollbackReport{Pending: slices.Clone(s.St.Pending)}, fmt.Errorf("rollback: a rollback of round %d already waits for an answer: %w", s.St.RollbackFlow.Current, ErrDeferred)
	}
	var rep RollbackReport
	err := s.apply(ctx, func() (err error) {
		rep, err = s.StartRollback(req, current)
		return err
	})
	k := newAsking()
	for s.St.RollbackFlow != nil && (err == nil || errors.Is(err, ErrRollbackLimit)) {
		// The dialog waits for an answer: ask the Asker, then play on.
		answered, aerr := s.askPending(ctx, k)
		if aerr != nil {
			rep, err = RollbackReport{}, aerr
			break
		}
		if !answered {
			break
		}
		err = s.apply(ctx, func() (err error) {
			rep, err = s.DriveRollback()
			if err == nil {
				err = s.Flush()
			}
			return err
		})
	}
	if failedUncommitted(err) {
		// The rollback failed before its commit (a backup that does not
		// read, say): what it changed in memory (its dialog, the questions
		// it set aside) was never stored. The next call reads the session
		// as stored, as a process that opened it would.
		s.Stale = true
	}
	return rep, err
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
