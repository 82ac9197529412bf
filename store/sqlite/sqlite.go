// Package sqlite is a store.Backend in one SQLite database file holding
// many sessions, on modernc.org/sqlite (pure Go, no cgo).
//
// The database runs in WAL mode with synchronous=FULL, so a commit is
// durable when Commit returns and readers never wait for the writer, and
// with a busy timeout, so processes sharing the file queue for the write
// lock instead of failing. Each Store commit is one transaction: every op
// of it is applied or none is, also when the process is killed mid-way.
// A writer is a store.Appender and a store.Copier: an append adds its
// bytes to the stored value, and a copy copies a value, inside the
// database, so neither sends a stored value again.
//
// # One writer per session
//
// A session's writer holds a lease: a row naming the holder (host and
// process ID by default), a random token and an expiry. The writer renews
// it from a background goroutine while its Store is open (a session's LLM
// calls take minutes) and deletes it on Close. Another writer is refused
// with an error wrapping store.ErrLocked that names the holder, until the
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
// A session's summary record (store.SummaryKey, session.json) is copied
// into columns of its session row by the commit that writes it, so
// Sessions lists thousands of sessions from one indexed table without
// reading their state.
//
// # Schema
//
// Open creates the tables and migrates an older schema in one transaction;
// the schema version is kept in the database, opening is idempotent, and a
// database written by a newer refine is refused rather than changed.
// Opening a database whose schema is current takes no write lock. Open
// creates a missing database file with mode 0600 (its -wal and -shm files
// take the same), as the folder store creates its files.
//
// # Readers
//
// A DB opened with Config.ReadOnly is a reader (refine status, sessions,
// export): it opens the file read-only, checks the schema instead of
// migrating it, never creates a database, and runs no statement that
// takes the write lock, so it reads the last committed state through the
// WAL even while a writer is stopped inside a write transaction. A writer
// that cannot get the write lock within its busy timeout (at most its
// lease) fails with an error wrapping store.ErrLocked that names the
// process holding the lock where the platform tells (Linux, the BSDs,
// macOS), and the live leases.
package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/refine-spec/refine/internal/sqlkv"
	"github.com/refine-spec/refine/store"
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
	// write lock before failing, at most LeaseTTL. Default 10 s.
	BusyTimeout time.Duration
	// ReadOnly opens a reader (see the package documentation): the file
	// must exist, and Create, CreateNamed, Session and Delete fail with
	// store.ErrReadOnly.
	ReadOnly bool
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

// DB is a store.Backend in one SQLite file. It is safe for concurrent
// use; Close it when done.
type DB struct {
	kv   *sqlkv.DB
	path string
}

var (
	_ store.Backend      = (*DB)(nil)
	_ store.NamedCreator = (*DB)(nil)
)

// Open opens the database file at path, creating it (mode 0600) if
// needed, and brings its schema up to date; with cfg.ReadOnly it opens a
// reader of an existing file, whose schema must be current.
func Open(ctx context.Context, path string, cfg Config) (*DB, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	lease := cmp.Or(cfg.LeaseTTL, 30*time.Second)
	cfg.BusyTimeout = min(cmp.Or(cfg.BusyTimeout, 10*time.Second), lease)
	if path == "" || strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("sqlite: open %q: want a file path without '?' or '#'", path)
	}
	where := "sqlite: open " + path
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", cfg.BusyTimeout.Milliseconds()))
	if cfg.ReadOnly {
		where += " to read"
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("%s: %w; a reader never creates a database: start a session with refine run --store sqlite:%s", where, err, path)
		}
		q.Set("mode", "ro")
	} else {
		if err := createFile(path); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(FULL)")
		q.Set("_txlock", "immediate") // take the write lock at BEGIN: no upgrade deadlocks
	}
	q.Add("_pragma", "foreign_keys(1)")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	drv := conn{db: db, path: path, busy: cfg.BusyTimeout, now: now}
	if cfg.ReadOnly {
		err = sqlkv.CheckSchema(ctx, drv, where, len(migrations))
	} else {
		err = sqlkv.Migrate(ctx, drv, where, migrations, nil)
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	kv := sqlkv.New(drv, dialect(path), sqlkv.Settings{
		Holder: cfg.Holder, LeaseTTL: cfg.LeaseTTL, Heartbeat: cfg.Heartbeat, Now: cfg.Now, NewID: cfg.NewID,
		ReleaseTimeout: cfg.BusyTimeout + time.Second, ReadOnly: cfg.ReadOnly,
	}, func(s *sqlkv.Store) store.Store { return &Store{s} })
	return &DB{kv: kv, path: path}, nil
}

// createFile creates the database file with mode 0600 when it does not
// exist (an empty file is an empty database), so SQLite, which creates
// its -wal and -shm files with the database file's mode, never makes a
// world-readable one.
func createFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.Close()
}

// Path returns the database file's path as given to Open.
func (d *DB) Path() string { return d.path }

// Create starts a new, empty session under a fresh ID and returns its
// writer, a *Store.
func (d *DB) Create(ctx context.Context) (string, store.Store, error) { return d.kv.Create(ctx) }

// CreateNamed starts a new, empty session under id and returns its
// writer; an existing id fails with store.ErrSessionExists.
func (d *DB) CreateNamed(ctx context.Context, id string) (store.Store, error) {
	return d.kv.CreateNamed(ctx, id)
}

// Session opens session id for writing, taking its lease. Another
// writer's live lease fails it with store.ErrLocked naming the holder.
func (d *DB) Session(ctx context.Context, id string) (store.Store, error) {
	return d.kv.Session(ctx, id)
}

// View opens session id for reading: it takes no lease, and Commit fails
// with store.ErrReadOnly.
func (d *DB) View(ctx context.Context, id string) (store.Store, error) { return d.kv.View(ctx, id) }

// LeaseHolder returns who holds session id's live lease, "" when no
// writer does. It takes no lock: a reader tells from it whether a run is
// live.
func (d *DB) LeaseHolder(ctx context.Context, id string) (string, error) {
	return d.kv.LeaseHolder(ctx, id)
}

// Sessions lists every session, newest activity first, from the summary
// columns of the session rows.
func (d *DB) Sessions(ctx context.Context) ([]store.SessionInfo, error) { return d.kv.Sessions(ctx) }

// SessionsPage lists one page of sessions by the index on their last
// activity (store.SessionPager): a page costs the same at any number of
// sessions.
func (d *DB) SessionsPage(ctx context.Context, req store.PageRequest) (store.SessionPage, error) {
	return d.kv.SessionsPage(ctx, req)
}

// Delete removes session id and everything in it. A session with a live
// lease is refused with store.ErrLocked.
func (d *DB) Delete(ctx context.Context, id string) error { return d.kv.Delete(ctx, id) }

// Close releases every writer still open (their leases too) and closes
// the database.
func (d *DB) Close() error { return d.kv.Close() }

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
