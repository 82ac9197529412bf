package sqlkv

import (
	"context"
	"errors"
	"fmt"
)

// Migrate brings a database's schema up to date: steps[i] takes it from
// version i to i+1, and the version is kept in a table refine_schema, so
// migrating is idempotent. It first reads the version outside any write
// transaction, so opening a database whose schema is current writes
// nothing and takes no write lock (a writer stopped inside a transaction
// does not block it); otherwise it migrates in one transaction. A
// database at a newer version than len(steps) is refused unchanged. lock,
// when not nil, runs first in that transaction (Postgres serializes
// migrating processes there). where starts every error ("sqlite: open
// PATH").
func Migrate(ctx context.Context, drv Driver, where string, steps []string, lock func(context.Context, Tx) error) error {
	if v, err := schemaVersion(ctx, drv); err == nil {
		switch {
		case v > len(steps):
			return newerSchema(where, v, len(steps))
		case v == len(steps):
			return nil
		}
	}
	tx, err := drv.Begin(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	defer tx.Rollback(ctx)
	if lock != nil {
		if err := lock(ctx, tx); err != nil {
			return err
		}
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS refine_schema (version INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	var v int
	switch err := queryRow(ctx, tx, `SELECT version FROM refine_schema`, nil, &v); {
	case errors.Is(err, errNoRows):
		if _, err := tx.Exec(ctx, `INSERT INTO refine_schema (version) VALUES (0)`); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
	case err != nil:
		return fmt.Errorf("%s: read the schema version: %w", where, err)
	}
	if v > len(steps) {
		return newerSchema(where, v, len(steps))
	}
	for ; v < len(steps); v++ {
		if _, err := tx.Exec(ctx, steps[v]); err != nil {
			return fmt.Errorf("%s: migrate the schema to version %d: %w", where, v+1, err)
		}
	}
	// v is an int this code counted, so it goes into the text: the
	// placeholder syntax differs between dialects.
	if _, err := tx.Exec(ctx, fmt.Sprintf(`UPDATE refine_schema SET version = %d`, v)); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	return nil
}

// CheckSchema is Migrate for a reader, which changes nothing: it reads the
// schema version and refuses a database a writer has not brought to
// version n yet (none, or an older schema: a reader does not migrate; a
// writer opening the database does) or one a newer refine wrote.
func CheckSchema(ctx context.Context, drv Driver, where string, n int) error {
	v, err := schemaVersion(ctx, drv)
	switch {
	case errors.Is(err, errNoRows):
		v = 0
	case err != nil:
		return fmt.Errorf("%s: %w: cannot read the schema version (%v): a reader does not create the schema; start a session here first (refine run --store …), which does", where, ErrNoSchema, err)
	}
	switch {
	case v > n:
		return newerSchema(where, v, n)
	case v < n:
		return fmt.Errorf("%s: %w: the schema is at version %d, older than this refine's %d, and a reader does not migrate it; open it once with a writer of this refine (refine resume or refine run --store …), which does", where, ErrNoSchema, v, n)
	}
	return nil
}

// ErrNoSchema: a reader (CheckSchema) found no schema, or an older one,
// which only a writer migrates.
var ErrNoSchema = errors.New("schema not up to date")

func newerSchema(where string, v, n int) error {
	return fmt.Errorf("%s: schema version %d is newer than this refine knows (%d); upgrade refine", where, v, n)
}

// schemaVersion reads the schema version outside any transaction.
func schemaVersion(ctx context.Context, drv Driver) (int, error) {
	var v int
	err := queryRow(ctx, drv, `SELECT version FROM refine_schema`, nil, &v)
	return v, err
}
