// Package sqlite is a refine.Backend in one SQLite database file holding
// many sessions, on modernc.org/sqlite (pure Go, no cgo).
//
// The database runs in WAL mode with synchronous=FULL, so a commit is
// durable when Commit returns and readers never wait for the writer, and
// with a busy timeout, so processes sharing the file queue for the write
// lock instead of failing. Each Store commit is one transaction: every op
// of it is applied or none is, also when the process is killed mid-way.
//
// # One writer per session
//
// A session's writer holds a lease: a row naming the holder (host and
// process ID by default), a random token and an expiry. The writer renews
// it from a background goroutine while its Store is open (a session's LLM
// calls take minutes) and deletes it on Close. Another writer is refused
// with an error wrapping refine.ErrLocked that names the holder, until the
// lease expires: a crashed holder's session can be taken over once its
// lease runs out. Every commit checks the token inside its own
// transaction, so a writer whose lease was taken over (say it was paused
// longer than the lease) cannot commit: its Commit fails with ErrLocked and
// applies nothing.
//
// Lease times come from the process clock, and SQLite's locking needs a
// local file system: use the file from one host only. For sessions shared
// across machines, use store/postgres.
//
// # Listing
//
// A session's summary record (refine.SummaryKey, session.json) is copied
// into columns of its session row by the commit that writes it, so
// Sessions lists thousands of sessions from one indexed table without
// reading their state.
//
// # Schema
//
// Open creates the tables and migrates an older schema in one transaction;
// the schema version is kept in the database, opening is idempotent, and a
// database written by a newer refine is refused rather than changed.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/internal/sessionid"
	"github.com/refine-spec/refine/internal/sqlkv"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
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
	// BusyTimeout is how long a statement waits for another process's
	// write lock before failing. Default 10 s.
	BusyTimeout time.Duration
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
		return fmt.Errorf("sqlite: config: LeaseTTL %v is negative", c.LeaseTTL)
	case c.BusyTimeout < 0:
		return fmt.Errorf("sqlite: config: BusyTimeout %v is negative", c.BusyTimeout)
	case c.Heartbeat > 0 && c.LeaseTTL > 0 && c.Heartbeat >= c.LeaseTTL:
		return fmt.Errorf("sqlite: config: Heartbeat %v must be shorter than LeaseTTL %v, or the lease lapses between renewals", c.Heartbeat, c.LeaseTTL)
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
	if c.BusyTimeout == 0 {
		c.BusyTimeout = 10 * time.Second
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.NewID == nil {
		c.NewID = sessionid.Generator{Now: c.Now}.New
	}
	return c
}

// DB is a refine.Backend in one SQLite file. It is safe for concurrent
// use; Close it when done.
type DB struct {
	sql  *sql.DB
	path string
	cfg  Config

	mu      sync.Mutex
	writers map[*Store]struct{} // open writers, released by Close

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

// Open opens (creating if needed) the database file at path and brings its
// schema up to date.
func Open(ctx context.Context, path string, cfg Config) (*DB, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if path == "" || strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("sqlite: open %q: want a file path without '?' or '#'", path)
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", cfg.BusyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate") // take the write lock at BEGIN: no upgrade deadlocks
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	d := &DB{sql: db, path: path, cfg: cfg, writers: map[*Store]struct{}{}}
	if err := d.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return d, nil
}

// Path returns the database file's path as given to Open.
func (d *DB) Path() string { return d.path }

// migrations are the schema versions in order; migrations[i] brings a
// database from version i to i+1.
var migrations = []string{
	`CREATE TABLE refine_sessions (
		id          TEXT PRIMARY KEY,
		created_at  INTEGER NOT NULL,
		updated_at  INTEGER NOT NULL,
		has_summary INTEGER NOT NULL DEFAULT 0,
		round       INTEGER NOT NULL DEFAULT 0,
		outcome     TEXT NOT NULL DEFAULT '',
		pending     INTEGER NOT NULL DEFAULT 0,
		open_gaps   TEXT NOT NULL DEFAULT '{}',
		activity    TEXT NOT NULL DEFAULT ''
	);
	CREATE INDEX refine_sessions_by_activity ON refine_sessions (updated_at DESC, id);
	CREATE TABLE refine_entries (
		session_id TEXT NOT NULL REFERENCES refine_sessions (id) ON DELETE CASCADE,
		key        TEXT NOT NULL,
		value      BLOB NOT NULL,
		PRIMARY KEY (session_id, key)
	);
	CREATE TABLE refine_leases (
		session_id TEXT PRIMARY KEY REFERENCES refine_sessions (id) ON DELETE CASCADE,
		holder     TEXT NOT NULL,
		token      TEXT NOT NULL,
		expires_at INTEGER NOT NULL
	);`,
}

// SchemaVersion is the schema version this package writes.
var SchemaVersion = len(migrations)

func (d *DB) migrate(ctx context.Context) error {
	tx, err := d.sql.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: open %s: %w", d.path, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS refine_schema (version INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("sqlite: open %s: %w", d.path, err)
	}
	var v int
	switch err := tx.QueryRowContext(ctx, `SELECT version FROM refine_schema`).Scan(&v); {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := tx.ExecContext(ctx, `INSERT INTO refine_schema (version) VALUES (0)`); err != nil {
			return fmt.Errorf("sqlite: open %s: %w", d.path, err)
		}
	case err != nil:
		return fmt.Errorf("sqlite: open %s: read the schema version: %w", d.path, err)
	}
	if v > len(migrations) {
		return fmt.Errorf("sqlite: open %s: schema version %d is newer than this refine knows (%d); upgrade refine", d.path, v, len(migrations))
	}
	for ; v < len(migrations); v++ {
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			return fmt.Errorf("sqlite: open %s: migrate the schema to version %d: %w", d.path, v+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE refine_schema SET version = ?`, v); err != nil {
		return fmt.Errorf("sqlite: open %s: %w", d.path, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: open %s: %w", d.path, err)
	}
	return nil
}

func nanos(t time.Time) int64 { return t.UnixNano() }

func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

func (d *DB) check(ctx context.Context, op, id string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sqlite: %s %s: %w", op, id, err)
	}
	if err := refine.ValidSessionID(id); err != nil {
		return fmt.Errorf("sqlite: %s: %w", op, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return fmt.Errorf("sqlite: %s %s: the database %s is closed", op, id, d.path)
	}
	return nil
}

func notFound(op, id string) error {
	return fmt.Errorf("sqlite: %s %s: %w: no such session; refine sessions lists them", op, id, refine.ErrNotFound)
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
	return "", nil, fmt.Errorf("sqlite: create: the ID function returned taken IDs 10 times in a row: %w", refine.ErrSessionExists)
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
	tx, err := d.sql.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %s %s: %w", op, id, err)
	}
	defer tx.Rollback()
	var one int
	err = tx.QueryRowContext(ctx, `SELECT 1 FROM refine_sessions WHERE id = ?`, id).Scan(&one)
	switch {
	case create && err == nil:
		return nil, fmt.Errorf("sqlite: create %s: %w; pick another ID or open it with --session", id, refine.ErrSessionExists)
	case create && errors.Is(err, sql.ErrNoRows):
		if _, err := tx.ExecContext(ctx, `INSERT INTO refine_sessions (id, created_at, updated_at) VALUES (?, ?, ?)`, id, nanos(now), nanos(now)); err != nil {
			return nil, fmt.Errorf("sqlite: create %s: %w", id, err)
		}
	case errors.Is(err, sql.ErrNoRows):
		return nil, notFound(op, id)
	case err != nil:
		return nil, fmt.Errorf("sqlite: %s %s: %w", op, id, err)
	}
	var holder string
	var expires int64
	err = tx.QueryRowContext(ctx, `SELECT holder, expires_at FROM refine_leases WHERE session_id = ?`, id).Scan(&holder, &expires)
	switch {
	case err == nil && expires > nanos(now):
		return nil, sqlkv.LockedError("sqlite", id, holder, fromNanos(expires))
	case err != nil && !errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("sqlite: %s %s: read the lease: %w", op, id, err)
	}
	// No lease, or an expired one: a crashed writer's, taken over here.
	if _, err := tx.ExecContext(ctx, `INSERT INTO refine_leases (session_id, holder, token, expires_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (session_id) DO UPDATE SET holder = excluded.holder, token = excluded.token, expires_at = excluded.expires_at`,
		id, d.cfg.Holder, token, nanos(now.Add(d.cfg.LeaseTTL))); err != nil {
		return nil, fmt.Errorf("sqlite: %s %s: take the lease: %w", op, id, err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("sqlite: %s %s: %w", op, id, err)
	}
	s := &Store{db: d, id: id, token: token, cache: sqlkv.NewCache()}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		s.release()
		return nil, fmt.Errorf("sqlite: %s %s: the database %s is closed", op, id, d.path)
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
	err := d.sql.QueryRowContext(ctx, `SELECT 1 FROM refine_sessions WHERE id = ?`, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("view", id)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: view %s: %w", id, err)
	}
	return &Store{db: d, id: id, readOnly: true}, nil
}

// Sessions lists every session, newest activity first, from the summary
// columns of the session rows.
func (d *DB) Sessions(ctx context.Context) ([]refine.SessionInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: sessions: %w", err)
	}
	rows, err := d.sql.QueryContext(ctx, `SELECT id, created_at, updated_at, round, outcome, pending, open_gaps, activity
		FROM refine_sessions ORDER BY updated_at DESC, id`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: sessions in %s: %w", d.path, err)
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
			return nil, fmt.Errorf("sqlite: sessions in %s: %w", d.path, err)
		}
		c.Created, c.Updated = fromNanos(created), fromNanos(updated)
		infos = append(infos, c.Info(id))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: sessions in %s: %w", d.path, err)
	}
	return infos, nil
}

// Delete removes session id and everything in it. A session with a live
// lease is refused with refine.ErrLocked.
func (d *DB) Delete(ctx context.Context, id string) error {
	if err := d.check(ctx, "delete", id); err != nil {
		return err
	}
	tx, err := d.sql.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: delete %s: %w", id, err)
	}
	defer tx.Rollback()
	var one int
	err = tx.QueryRowContext(ctx, `SELECT 1 FROM refine_sessions WHERE id = ?`, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return notFound("delete", id)
	}
	if err != nil {
		return fmt.Errorf("sqlite: delete %s: %w", id, err)
	}
	var holder string
	var expires int64
	err = tx.QueryRowContext(ctx, `SELECT holder, expires_at FROM refine_leases WHERE session_id = ?`, id).Scan(&holder, &expires)
	switch {
	case err == nil && expires > nanos(d.cfg.Now()):
		return sqlkv.LockedError("sqlite", id, holder, fromNanos(expires))
	case err != nil && !errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("sqlite: delete %s: read the lease: %w", id, err)
	}
	for _, q := range []string{
		`DELETE FROM refine_entries WHERE session_id = ?`,
		`DELETE FROM refine_leases WHERE session_id = ?`,
		`DELETE FROM refine_sessions WHERE id = ?`,
	} {
		if _, err := tx.ExecContext(ctx, q, id); err != nil {
			return fmt.Errorf("sqlite: delete %s: %w", id, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: delete %s: %w", id, err)
	}
	return nil
}

// Close releases every writer still open (their leases too) and closes
// the database.
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
	errs = append(errs, d.sql.Close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sqlite: close %s: %w", d.path, err)
	}
	return nil
}
