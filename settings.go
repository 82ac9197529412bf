package refine

import (
	"context"
)

// Settings returns the session's current settings.
func (s *Session) Settings() Settings {
	if err := s.lock(context.Background()); err != nil {
		return Settings{}
	}
	defer s.unlock()
	return s.Cfg.Settings
}

// SetSettings changes the session's settings (a higher MaxRounds, another
// RollbackMode, …) and records the change in the session, so later runs,
// in this process or another, use them. It fails with ErrInvalidConfig,
// changing nothing, when the new settings do not validate.
func (s *Session) SetSettings(ctx context.Context, set Settings) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	if err := s.begin(ctx); err != nil {
		return err
	}
	return s.apply(ctx, func() error { return s.ApplySettings(set) })
}
