package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/refine-spec/refine/internal/sqlkv"
)

// pool adapts a pgxpool.Pool to sqlkv.Driver and sqlkv.Classifier; txConn
// does for a transaction. pgxpool replaces a broken connection by itself:
// it drops a connection whose statement failed on the network, pings one
// that sat idle before handing it out, and checks idle ones every
// health-check period.
type pool struct {
	p *pgxpool.Pool
	// afterCommit, set by tests, runs after a COMMIT the server
	// confirmed; its error replaces the confirmation, as when the reply
	// is lost on the way back.
	afterCommit func() error
}

type txConn struct {
	tx pgx.Tx
	p  *pool
}

var (
	_ sqlkv.Driver     = (*pool)(nil)
	_ sqlkv.Classifier = (*pool)(nil)
)

func (p *pool) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	tag, err := p.p.Exec(ctx, q, args...)
	return tag.RowsAffected(), err
}

func (p *pool) Query(ctx context.Context, q string, args ...any) (sqlkv.Rows, error) {
	return p.p.Query(ctx, q, args...)
}

func (p *pool) Begin(ctx context.Context) (sqlkv.Tx, error) {
	tx, err := p.p.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return txConn{tx, p}, nil
}

func (p *pool) Close() error {
	p.p.Close()
	return nil
}

// Classify tells a broken connection (the server terminated it, restarted,
// or the network dropped it) and a transaction the server aborted
// (lock_timeout, idle_in_transaction_session_timeout, a deadlock or
// serialization failure) from other errors.
func (p *pool) Classify(err error) sqlkv.Fault {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch code := pgErr.Code; {
		case code == "25P03", // idle_in_transaction_session_timeout: the server rolled back and closed
			code == "55P03", // lock_not_available: lock_timeout
			code == "40P01", // deadlock_detected
			code == "40001": // serialization_failure
			return sqlkv.FaultAborted
		case strings.HasPrefix(code, "08"), // connection exception
			strings.HasPrefix(code, "57P"), // admin/crash shutdown, cannot connect now
			pgErr.Severity == "FATAL", pgErr.Severity == "PANIC":
			return sqlkv.FaultBroken
		}
		return sqlkv.FaultNone
	}
	var connErr *pgconn.ConnectError
	var netErr net.Error
	switch {
	case errors.Is(err, pgx.ErrTxCommitRollback), pgconn.SafeToRetry(err):
		// Rolled back, or never sent: nothing applied.
		return sqlkv.FaultAborted
	case errors.As(err, &connErr), errors.As(err, &netErr),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed):
		return sqlkv.FaultBroken
	}
	return sqlkv.FaultNone
}

// Reset closes every connection of the pool; those in use close when they
// are returned.
func (p *pool) Reset() { p.p.Reset() }

func (t txConn) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	tag, err := t.tx.Exec(ctx, q, args...)
	return tag.RowsAffected(), err
}

func (t txConn) Query(ctx context.Context, q string, args ...any) (sqlkv.Rows, error) {
	return t.tx.Query(ctx, q, args...)
}

// Batch sends the statements in one round trip.
func (t txConn) Batch(ctx context.Context, stmts []sqlkv.Stmt) error {
	batch := &pgx.Batch{}
	for _, s := range stmts {
		batch.Queue(s.SQL, s.Args...)
	}
	if err := t.tx.SendBatch(ctx, batch).Close(); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

func (t txConn) Commit(ctx context.Context) error {
	if err := t.tx.Commit(ctx); err != nil {
		return err
	}
	if t.p.afterCommit != nil {
		return t.p.afterCommit()
	}
	return nil
}

func (t txConn) Rollback(ctx context.Context) { _ = t.tx.Rollback(ctx) }
