package sqlkv

import (
	"context"
	"errors"
)

// Querier runs SQL on a connection pool or inside a transaction. It is
// what a backend package adapts its driver to (database/sql, pgx), so the
// session logic here runs on either.
type Querier interface {
	// Exec runs a statement and returns how many rows it changed.
	Exec(ctx context.Context, q string, args ...any) (int64, error)
	// Query runs a query; the caller closes the Rows.
	Query(ctx context.Context, q string, args ...any) (Rows, error)
}

// Rows is the result of Query, read as database/sql and pgx both do:
// Next until false, then Err; Close releases the connection.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// Stmt is one statement of a batch; What names it in an error when the
// driver runs the batch one statement at a time.
type Stmt struct {
	SQL  string
	Args []any
	What string
}

// Tx is a transaction.
type Tx interface {
	Querier
	// Batch runs the statements in order, in as few round trips as the
	// driver can; the first failure stops it.
	Batch(ctx context.Context, stmts []Stmt) error
	Commit(ctx context.Context) error
	// Rollback ends the transaction if Commit did not; after Commit it
	// does nothing.
	Rollback(ctx context.Context)
}

// Driver is a database: a Querier outside transactions, and Begin.
type Driver interface {
	Querier
	Begin(ctx context.Context) (Tx, error)
	Close() error
}

// errNoRows is what queryRow returns when the query found nothing.
var errNoRows = errors.New("no rows in result set")

// queryRow scans the first row of a query into dest, or returns errNoRows.
func queryRow(ctx context.Context, db Querier, q string, args []any, dest ...any) error {
	rows, err := db.Query(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return errNoRows
	}
	if err := rows.Scan(dest...); err != nil {
		return err
	}
	rows.Close()
	return rows.Err()
}

// QueryKeys runs a query whose rows are one string each (keys) and
// returns them in order.
func QueryKeys(ctx context.Context, db Querier, q string, args ...any) ([]string, error) {
	rows, err := db.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var keys []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, rows.Err()
}
