package sqlite

import (
	"context"
	"time"

	"github.com/refine-spec/refine/internal/sqlkv"
)

// SetCommitHook makes s call hook inside each commit's transaction, just
// before COMMIT, for tests that stop a commit there.
func SetCommitHook(s *Store, hook func() error) {
	if hook == nil {
		sqlkv.SetCommitHook(s.kv, nil)
		return
	}
	sqlkv.SetCommitHook(s.kv, func(context.Context, sqlkv.Tx) error { return hook() })
}

// SetHeartbeat makes writers opened from d renew their lease when tick
// fires, and report each renewal to beat, instead of on a timer.
func SetHeartbeat(d *DB, tick <-chan time.Time, beat func(error)) {
	sqlkv.SetHeartbeat(d.kv, tick, beat)
}
