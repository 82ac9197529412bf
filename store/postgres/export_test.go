package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// SetCommitHook makes s call hook inside each commit's transaction, just
// before COMMIT, for tests that break a commit there.
func SetCommitHook(s *Store, hook func(ctx context.Context, tx pgx.Tx) error) { s.testHook = hook }

// SetHeartbeat makes writers opened from d renew their lease when tick
// fires, and report each renewal to beat, instead of on a timer.
func SetHeartbeat(d *DB, tick <-chan time.Time, beat func(error)) {
	d.testTick, d.testBeat = tick, beat
}
