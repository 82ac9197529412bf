package refine

import (
	"context"

	"github.com/refine-spec/refine/internal/core"
)

// Settings returns the session's current settings.
func (s *Session) Settings() Settings {
	if err := s.lock(context.Background()); err != nil {
		return Settings{}
	}
	defer s.unlock()
	if s.core == nil {
		if p := s.published.Load(); p != nil {
			return p.Settings
		}
		return s.config.Settings
	}
	return s.core.Settings()
}

// SetSettings changes the session's settings (a higher MaxRounds, another
// RollbackMode, …) and records the change in the session, so later runs,
// in this process or another, use them. It fails with ErrInvalidConfig,
// changing nothing, when the new settings do not validate.
func (s *Session) SetSettings(ctx context.Context, set Settings) error {
	_, err := s.input(ctx, core.ChangeSettings{At: s.now(), Settings: set}, false)
	return err
}
