package refine

import (
	"context"
	"time"

	"github.com/refine-spec/refine/internal/sessionid"
)

// Clock is the Mediator's source of time. Tests inject a fixed clock so
// timestamps and backoff are deterministic.
type Clock interface {
	Now() time.Time
	// Sleep waits d or until ctx is done, returning ctx.Err() in that case.
	Sleep(ctx context.Context, d time.Duration) error
}

// SystemClock is the real clock.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// Sleep waits d or until ctx is done.
func (SystemClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// randomIDs are the IDs Backends hand out (internal/sessionid): the
// clock's time to the second and six random hex digits, so sessions
// started in the same second by two processes still differ.
type randomIDs struct{ clock Clock }

func (r randomIDs) NewID() string { return sessionid.Generator{Now: r.clock.Now}.New() }
