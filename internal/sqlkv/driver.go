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
//
// # Lock order
//
// Every transaction DB and Store run takes its row locks in one order,
// so two of them can wait for each other only in a line, never in a
// circle (a deadlock):
//
//  1. the session row (refine_sessions): a key-share lock to open a
//     session, a no-key-update lock to commit to it, an update lock to
//     delete it, or the row's own insert to create it;
//  2. the lease row (refine_leases): the upsert that takes the lease,
//     the update that checks and renews it in a commit, the heartbeat's
//     renewal, the release;
//  3. the entry rows (refine_entries), written by a commit only.
//
// A statement that would lock a row further up the list than one the
// transaction holds does not exist. The heartbeat and the release touch
// only the lease row. A backend whose database locks as a whole (SQLite
// takes its write lock at BEGIN) leaves Dialect.LockSession empty.
type Driver interface {
	Querier
	Begin(ctx context.Context) (Tx, error)
	Close() error
}

// Fault is what a Classifier makes of a failed statement.
type Fault int

const (
	// FaultNone is any other error: reported as it is.
	FaultNone Fault = iota
	// FaultBroken is a connection that broke (dropped, terminated by the
	// server, the server restarting): the driver replaces the connection;
	// a COMMIT in flight may or may not have been applied.
	FaultBroken
	// FaultAborted is a transaction the server ended without applying it
	// (a lock wait that timed out, a deadlock, an idle transaction
	// timed out): nothing of it was applied.
	FaultAborted
)

// Classifier is a Driver that tells why a statement failed. On such a
// Driver, DB and Store retry reads and transactions that failed on a
// broken connection or were aborted, for up to Settings.Reconnect, and a
// commit whose COMMIT failed is retried only once the lease row's commit
// sequence (Dialect.CommitLease) shows it was not applied.
type Classifier interface {
	Classify(err error) Fault
	// Reset drops every connection the Driver holds; DB calls it when one
	// broke, since the others most likely did too (a server restart, a
	// network outage) and each would cost an attempt to find out.
	Reset()
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
