package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/refine-spec/refine/internal/sqlkv"
)

// pool adapts a pgxpool.Pool to sqlkv.Driver; txConn does for a
// transaction.
type pool struct{ p *pgxpool.Pool }

type txConn struct{ tx pgx.Tx }

func (p pool) Exec(ctx context.Context, q string, args ...any) (int64, error) {
	tag, err := p.p.Exec(ctx, q, args...)
	return tag.RowsAffected(), err
}

func (p pool) Query(ctx context.Context, q string, args ...any) (sqlkv.Rows, error) {
	return p.p.Query(ctx, q, args...)
}

func (p pool) Begin(ctx context.Context) (sqlkv.Tx, error) {
	tx, err := p.p.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return txConn{tx}, nil
}

func (p pool) Close() error {
	p.p.Close()
	return nil
}

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

func (t txConn) Commit(ctx context.Context) error { return t.tx.Commit(ctx) }

func (t txConn) Rollback(ctx context.Context) { _ = t.tx.Rollback(ctx) }
