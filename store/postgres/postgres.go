// Package postgres is a refine.Backend in a PostgreSQL database holding
// many sessions, on github.com/jackc/pgx/v5 (pgxpool).
//
// Each Store commit is one transaction, so every op of it is applied or
// none is, also when the process dies or the connection drops mid-way.
// Values are bytea; keys and IDs compare byte-wise (collation "C"), so
// List sorts as every refine Store does.
//
// # One writer per session
//
// A session's writer holds a lease: a row naming the holder (host and
// process ID by default), a random token and an expiry. The writer renews
// it from a background goroutine while its Store is open and deletes it
// on Close. Another writer, on any machine, is refused with an error
// wrapping refine.ErrLocked that names the holder until the lease expires,
// so a crashed holder's session (or one whose connection was lost for
// longer than the lease) can be taken over. Every commit locks the lease
// row and checks its token inside its own transaction: a writer whose
// lease was taken over cannot commit, and its Commit fails with ErrLocked
// applying nothing. Lease times come from the writers' clocks, so hosts
// sharing a database need clocks within a small part of the lease (NTP).
//
// # Listing
//
// A session's summary record (refine.SummaryKey, session.json) is copied
// into columns of its session row by the commit that writes it, so
// Sessions lists thousands of sessions from one indexed table.
//
// # Schema
//
// Open creates the tables and migrates an older schema in one transaction
// under an advisory lock, so two processes opening a new database at once
// do not race; the schema version is kept in the database, opening is
// idempotent, and a database written by a newer refine is refused.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/internal/sessionid"
	"github.com/refine-spec/refine/internal/sqlkv"
)

// Config tunes a DB. The zero value is usable: every field has a default.
type Config struct {
	// Holder names this process in lease rows and in the ErrLocked errors
	// other writers get. Default: host name and process ID.
	Holder string
	// LeaseTTL is how long a writer's lease lasts without renewal, so how
	// long a crashed writer's session stays locked. Default 30 s.
	LeaseTTL time.Duration
	// Heartbeat is how often an open writer renews its lease. Default
	// LeaseTTL/3; negative turns renewal off (tests drive expiry with Now).
	Heartbeat time.Duration
	// Now is the clock for lease expiry and session times. Default
	// time.Now.
	Now func() time.Time
	// NewID makes the ID of a session Create starts. Default: the time
	// and random digits ("20250301-141502-3fa9c1").
	NewID func() string
}

// Validate reports a Config that cannot work.
func (c Config) Validate() error {
	switch {
	case c.LeaseTTL < 0:
		return fmt.Errorf("postgres: config: LeaseTTL %v is negative", c.LeaseTTL)
	case c.Heartbeat > 0 && c.LeaseTTL > 0 && c.Heartbeat >= c.LeaseTTL:
		return fmt.Errorf("postgres: config: Heartbeat %v must be shorter than LeaseTTL %v, or the lease lapses between renewals", c.Heartbeat, c.LeaseTTL)
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.Holder == "" {
		c.Holder = sqlkv.DefaultHolder()
	}
	if c.LeaseTTL == 0 {
		c.LeaseTTL = 30 * time.Second
	}
	if c.Heartbeat == 0 {
		c.Heartbeat = c.LeaseTTL / 3
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.NewID == nil {
		c.NewID = sessionid.Generator{Now: c.Now}.New
	}
	return c
}

// DB is a refine.Backend in one PostgreSQL database. It is safe for
// concurrent use; Close it when done.
type DB struct {
	pool *pgxpool.Pool
	cfg  Config

	mu      sync.Mutex
	writers map[*Store]struct{}

	// testTick and testBeat, set by tests before a writer opens, replace
	// the heartbeat's ticker and report each renewal.
	testTick <-chan time.Time
	testBeat func(error)
	closed   bool
}

var (
	_ refine.Backend      = (*DB)(nil)
	_ refine.NamedCreator = (*DB)(nil)
)

// Open connects to the database at dsn (a postgres:// URL or key=value
// string) and brings its schema up to date.
func Open(ctx context.Context, dsn string, cfg Config) (*DB, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: open: %w; check the postgres:// URL", err)
	}
	d := &DB{pool: pool, cfg: cfg.withDefaults(), writers: map[*Store]struct{}{}}
	if err := d.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return d, nil
}

// migrateLock is the advisory lock key Open holds while migrating
// ("refine" in ASCII).
const migrateLock = 0x726566696e65

// migrations are the schema versions in order; migrations[i] brings a
// database from version i to i+1.
var migrations = []string{
	`CREATE TABLE refine_sessions (
		id          TEXT COLLATE "C" PRIMARY KEY,
		created_at  BIGINT NOT NULL,
		updated_at  BIGINT NOT NULL,
		has_summary BOOLEAN NOT NULL DEFAULT FALSE,
		round       INTEGER NOT NULL DEFAULT 0,
		outcome     TEXT NOT NULL DEFAULT '',
		pending     INTEGER NOT NULL DEFAULT 0,
		open_gaps   TEXT NOT NULL DEFAULT '{}',
		activity    TEXT NOT NULL DEFAULT ''
	);
	CREATE INDEX refine_sessions_by_activity ON refine_sessions (updated_at DESC, id);
	CREATE TABLE refine_entries (
		session_id TEXT COLLATE "C" NOT NULL REFERENCES refine_sessions (id) ON DELETE CASCADE,
		key        TEXT COLLATE "C" NOT NULL,
		value      BYTEA NOT NULL,
		PRIMARY KEY (session_id, key)
	);
	CREATE TABLE refine_leases (
		session_id TEXT COLLATE "C" PRIMARY KEY REFERENCES refine_sessions (id) ON DELETE CASCADE,
		holder     TEXT NOT NULL,
		token      TEXT NOT NULL,
		expires_at BIGINT NOT NULL
	);`,
}

// SchemaVersion is the schema version this package writes.
var SchemaVersion = len(migrations)

func (d *DB) migrate(ctx context.Context) error {
	return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		// Serializes migrations across processes; released at COMMIT.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrateLock)); err != nil {
			return fmt.Errorf("postgres: open: lock for migration: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS refine_schema (version INTEGER NOT NULL)`); err != nil {
			return fmt.Errorf("postgres: open: %w", err)
		}
		var v int
		switch err := tx.QueryRow(ctx, `SELECT version FROM refine_schema`).Scan(&v); {
		case errors.Is(err, pgx.ErrNoRows):
			if _, err := tx.Exec(ctx, `INSERT INTO refine_schema (version) VALUES (0)`); err != nil {
				return fmt.Errorf("postgres: open: %w", err)
			}
		case err != nil:
			return fmt.Errorf("postgres: open: read the schema version: %w", err)
		}
		if v > len(migrations) {
			return fmt.Errorf("postgres: open: schema version %d is newer than this refine knows (%d); upgrade refine", v, len(migrations))
		}
		for ; v < len(migrations); v++ {
			if _, err := tx.Exec(ctx, migrations[v]); err != nil {
				return fmt.Errorf("postgres: open: migrate the schema to version %d: %w", v+1, err)
			}
		}
		if _, err := tx.Exec(ctx, `UPDATE refine_schema SET version = $1`, v); err != nil {
			return fmt.Errorf("postgres: open: %w", err)
		}
		return nil
	})
}

func nanos(t time.Time) int64 { return t.UnixNano() }

func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

func (d *DB) check(ctx context.Context, op, id string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("postgres: %s %s: %w", op, id, err)
	}
	if err := refine.ValidSessionID(id); err != nil {
		return fmt.Errorf("postgres: %s: %w", op, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return fmt.Errorf("postgres: %s %s: the database connection is closed", op, id)
	}
	return nil
}

func notFound(op, id string) error {
	return fmt.Errorf("postgres: %s %s: %w: no such session; refine sessions lists them", op, id, refine.ErrNotFound)
}

// Create starts a new, empty session under a fresh ID and returns its
// writer.
func (d *DB) Create(ctx context.Context) (string, refine.Store, error) {
	for range 10 {
		id := d.cfg.NewID()
		st, err := d.CreateNamed(ctx, id)
		if errors.Is(err, refine.ErrSessionExists) {
			continue
		}
		return id, st, err
	}
	return "", nil, fmt.Errorf("postgres: create: the ID function returned taken IDs 10 times in a row: %w", refine.ErrSessionExists)
}

// CreateNamed starts a new, empty session under id and returns its
// writer; an existing id fails with refine.ErrSessionExists.
func (d *DB) CreateNamed(ctx context.Context, id string) (refine.Store, error) {
	return d.acquire(ctx, "create", id, true)
}

// Session opens session id for writing, taking its lease.
func (d *DB) Session(ctx context.Context, id string) (refine.Store, error) {
	return d.acquire(ctx, "session", id, false)
}

func (d *DB) acquire(ctx context.Context, op, id string, create bool) (refine.Store, error) {
	if err := d.check(ctx, op, id); err != nil {
		return nil, err
	}
	now := d.cfg.Now()
	token := sqlkv.NewToken()
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		if create {
			tag, err := tx.Exec(ctx, `INSERT INTO refine_sessions (id, created_at, updated_at) VALUES ($1, $2, $2) ON CONFLICT (id) DO NOTHING`, id, nanos(now))
			if err != nil {
				return fmt.Errorf("postgres: create %s: %w", id, err)
			}
			if tag.RowsAffected() == 0 {
				return fmt.Errorf("postgres: create %s: %w; pick another ID or open it with --session", id, refine.ErrSessionExists)
			}
		} else {
			var one int
			err := tx.QueryRow(ctx, `SELECT 1 FROM refine_sessions WHERE id = $1 FOR SHARE`, id).Scan(&one)
			if errors.Is(err, pgx.ErrNoRows) {
				return notFound(op, id)
			}
			if err != nil {
				return fmt.Errorf("postgres: %s %s: %w", op, id, err)
			}
		}
		// Take the lease if there is none or it expired (a crashed
		// writer's); the row lock makes this atomic across processes.
		var got string
		err := tx.QueryRow(ctx, `INSERT INTO refine_leases (session_id, holder, token, expires_at) VALUES ($1, $2, $3, $4)
			ON CONFLICT (session_id) DO UPDATE SET holder = EXCLUDED.holder, token = EXCLUDED.token, expires_at = EXCLUDED.expires_at
			WHERE refine_leases.expires_at <= $5
			RETURNING token`, id, d.cfg.Holder, token, nanos(now.Add(d.cfg.LeaseTTL)), nanos(now)).Scan(&got)
		if errors.Is(err, pgx.ErrNoRows) {
			var holder string
			var expires int64
			if err := tx.QueryRow(ctx, `SELECT holder, expires_at FROM refine_leases WHERE session_id = $1`, id).Scan(&holder, &expires); err != nil {
				return fmt.Errorf("postgres: %s %s: read the lease: %w", op, id, err)
			}
			return sqlkv.LockedError("postgres", id, holder, fromNanos(expires))
		}
		if err != nil {
			return fmt.Errorf("postgres: %s %s: take the lease: %w", op, id, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s := &Store{db: d, id: id, token: token, cache: sqlkv.NewCache()}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		s.release()
		return nil, fmt.Errorf("postgres: %s %s: the database connection is closed", op, id)
	}
	d.writers[s] = struct{}{}
	d.mu.Unlock()
	s.startHeartbeat()
	return s, nil
}

// View opens session id for reading: it takes no lease, and Commit fails
// with refine.ErrReadOnly.
func (d *DB) View(ctx context.Context, id string) (refine.Store, error) {
	if err := d.check(ctx, "view", id); err != nil {
		return nil, err
	}
	var one int
	err := d.pool.QueryRow(ctx, `SELECT 1 FROM refine_sessions WHERE id = $1`, id).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("view", id)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: view %s: %w", id, err)
	}
	return &Store{db: d, id: id, readOnly: true}, nil
}

// Sessions lists every session, newest activity first, from the summary
// columns of the session rows.
func (d *DB) Sessions(ctx context.Context) ([]refine.SessionInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("postgres: sessions: %w", err)
	}
	rows, err := d.pool.Query(ctx, `SELECT id, created_at, updated_at, round, outcome, pending, open_gaps, activity
		FROM refine_sessions ORDER BY updated_at DESC, id`)
	if err != nil {
		return nil, fmt.Errorf("postgres: sessions: %w", err)
	}
	defer rows.Close()
	var infos []refine.SessionInfo
	for rows.Next() {
		var (
			id               string
			created, updated int64
			c                sqlkv.Columns
		)
		if err := rows.Scan(&id, &created, &updated, &c.Round, &c.Outcome, &c.Pending, &c.OpenGaps, &c.Activity); err != nil {
			return nil, fmt.Errorf("postgres: sessions: %w", err)
		}
		c.Created, c.Updated = fromNanos(created), fromNanos(updated)
		infos = append(infos, c.Info(id))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: sessions: %w", err)
	}
	return infos, nil
}

// Delete removes session id and everything in it. A session with a live
// lease is refused with refine.ErrLocked.
func (d *DB) Delete(ctx context.Context, id string) error {
	if err := d.check(ctx, "delete", id); err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		var one int
		err := tx.QueryRow(ctx, `SELECT 1 FROM refine_sessions WHERE id = $1 FOR UPDATE`, id).Scan(&one)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("delete", id)
		}
		if err != nil {
			return fmt.Errorf("postgres: delete %s: %w", id, err)
		}
		var holder string
		var expires int64
		err = tx.QueryRow(ctx, `SELECT holder, expires_at FROM refine_leases WHERE session_id = $1 FOR UPDATE`, id).Scan(&holder, &expires)
		switch {
		case err == nil && expires > nanos(d.cfg.Now()):
			return sqlkv.LockedError("postgres", id, holder, fromNanos(expires))
		case err != nil && !errors.Is(err, pgx.ErrNoRows):
			return fmt.Errorf("postgres: delete %s: read the lease: %w", id, err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM refine_sessions WHERE id = $1`, id); err != nil {
			return fmt.Errorf("postgres: delete %s: %w", id, err)
		}
		return nil // entries and lease go with it (ON DELETE CASCADE)
	})
}

// Close releases every writer still open (their leases too) and closes
// the connection pool.
func (d *DB) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	open := make([]*Store, 0, len(d.writers))
	for s := range d.writers {
		open = append(open, s)
	}
	d.mu.Unlock()
	var errs []error
	for _, s := range open {
		errs = append(errs, s.Close())
	}
	d.pool.Close()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("postgres: close: %w", err)
	}
	return nil
}
