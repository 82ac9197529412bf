package sqlkv

import (
	"context"
	"errors"
	"fmt"
)

// Migrate brings a database's schema up to date in one transaction:
// steps[i] takes it from version i to i+1, and the version is kept in a
// table refine_schema, so migrating is idempotent. A database at a newer
// version than len(steps) is refused unchanged. lock, when not nil, runs
// first in the transaction (Postgres serializes migrating processes
// there). where starts every error ("sqlite: open PATH").
func Migrate(ctx context.Context, drv Driver, where string, steps []string, lock func(context.Context, Tx) error) error {
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
		return fmt.Errorf("%s: schema version %d is newer than this refine knows (%d); upgrade refine", where, v, len(steps))
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
