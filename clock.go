package refine

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/refine-spec/refine/examples"
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

// IDSource makes identifiers for sessions.
type IDSource interface {
	NewID() string
}

// timeIDs derives IDs from the clock and a counter: unique per process,
// readable, and without a dependency on a UUID package.
type timeIDs struct {
	clock Clock
	n     atomic.Int64
}

func (t *timeIDs) NewID() string {
	return fmt.Sprintf("%s-%d", t.clock.Now().UTC().Format("20060102T150405Z"), t.n.Add(1))
}

// Tokenizer counts tokens for prompt budgets and example truncation. It is
// examples.Tokenizer: one interface for the whole library.
type Tokenizer = examples.Tokenizer

// CharTokenizer is the spec's estimate of four characters (runes) per
// token, rounded up: the default, with no network access.
type CharTokenizer = examples.CharTokenizer
