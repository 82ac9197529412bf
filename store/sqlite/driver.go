package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/refine-spec/refine/internal/sqlkv"
)

// conn adapts database/sql to sqlkv.Driver; txConn does for a
// transaction. A statement that waited its busy timeout for another
// connection's write lock fails with lockedError.
type conn struct {
	db   *sql.DB
	path string
	busy time.Duration    // the busy timeout, for messages
	now  func() time.Time // for the live leases a message names
}

type txConn struct{ tx *sql.Tx }

// execQueryer is what *sql.DB and *sql.Tx share.
type execQueryer interface {
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

func exec(ctx context.Context, db execQueryer, q string, args []any) (int64, error) {
	res, err := db.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func query(ctx context.Context, db execQueryer, q string, args []any) (sqlkv.Rows, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

// sqlRows drops the error of Close, which Err reports.
type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { r.Rows.Close() }

func (c conn) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	n, err := exec(ctx, c.db, q, args)
	return n, c.locked(ctx, err)
}

func (c conn) Query(ctx context.Context, q string, args ...any) (sqlkv.Rows, error) {
	return query(ctx, c.db, q, args)
}

func (c conn) Begin(ctx context.Context) (sqlkv.Tx, error) {
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, c.locked(ctx, err)
	}
	return txConn{tx}, nil
}

func (c conn) Close() error { return c.db.Close() }

func (t txConn) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	return exec(ctx, t.tx, q, args)
}

func (t txConn) Query(ctx context.Context, q string, args ...any) (sqlkv.Rows, error) {
	return query(ctx, t.tx, q, args)
}

// Batch runs the statements one by one: SQLite is in-process, so there
// are no round trips to save.
func (t txConn) Batch(ctx context.Context, stmts []sqlkv.Stmt) error {
	for _, s := range stmts {
		if _, err := t.tx.ExecContext(ctx, s.SQL, s.Args...); err != nil {
			return fmt.Errorf("%s: %w", s.What, err)
		}
	}
	return nil
}

func (t txConn) Commit(context.Context) error { return t.tx.Commit() }

func (t txConn) Rollback(context.Context) { _ = t.tx.Rollback() }
