package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/refine-spec/refine/internal/sqlkv"
)

// SetCommitHook makes s call hook inside each commit's transaction, just
// before COMMIT, for tests that break a commit there.
func SetCommitHook(s *Store, hook func(ctx context.Context, tx pgx.Tx) error) {
	if hook == nil {
		sqlkv.SetCommitHook(s.kv, nil)
		return
	}
	sqlkv.SetCommitHook(s.kv, func(ctx context.Context, tx sqlkv.Tx) error { return hook(ctx, tx.(txConn).tx) })
}

// SetAfterCommitHook makes every COMMIT of d that the server confirmed
// return hook's error instead, as when the confirmation is lost with the
// connection.
func SetAfterCommitHook(d *DB, hook func() error) { d.drv.afterCommit = hook }

// SetHeartbeat makes writers opened from d renew their lease when tick
// fires, and report each renewal to beat, instead of on a timer.
func SetHeartbeat(d *DB, tick <-chan time.Time, beat func(error)) {
	sqlkv.SetHeartbeat(d.kv, tick, beat)
}

// SetFaultHook makes d report to hook every error it classified as a
// broken connection or an aborted transaction, with its SQLSTATE ("" when
// the server sent none).
func SetFaultHook(d *DB, hook func(code string, err error)) {
	sqlkv.SetFaultHook(d.kv, func(_ sqlkv.Fault, err error) {
		var pgErr *pgconn.PgError
		code := ""
		if errors.As(err, &pgErr) {
			code = pgErr.Code
		}
		hook(code, err)
	})
}
