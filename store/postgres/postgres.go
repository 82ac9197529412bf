// Package postgres is a store.Backend in a PostgreSQL database holding
// many sessions, on github.com/jackc/pgx/v5 (pgxpool).
//
// Each Store commit is one transaction, so every op of it is applied or
// none is, also when the process dies or the connection drops mid-way.
// Values are bytea; keys and IDs compare byte-wise (collation "C"), so
// List sorts as every refine Store does. A writer is a store.Appender
// and a store.Copier: an append adds its bytes to the stored value, and
// a copy copies a value, inside the database, so neither sends a stored
// value over the network again.
//
// # One writer per session
//
// A session's writer holds a lease: a row naming the holder (host and
// process ID by default), a random token and an expiry. The writer renews
// it from a background goroutine while its Store is open and deletes it
// on Close. Another writer, on any machine, is refused with an error
// wrapping store.ErrLocked that names the holder until the lease expires,
// so a crashed holder's session (or one whose connection was lost for
// longer than the lease) can be taken over. Every commit locks the lease
// row and checks its token inside its own transaction: a writer whose
// lease was taken over cannot commit, and its Commit fails with ErrLocked
// applying nothing. Lease times come from the writers' clocks, so hosts
// sharing a database need clocks within a small part of the lease (NTP).
//
// # Locks, timeouts and reconnecting
//
// Every transaction takes its row locks in one order: the session row,
// then the lease row, then the entries (see dialect.go), so a running
// session and refine status or resume next to it cannot deadlock. Each
// connection sets idle_in_transaction_session_timeout to half the lease
// and lock_timeout to a quarter of it (unless the DSN sets them): a
// writer stopped inside a commit loses that transaction, and its row
// locks, before its lease runs out, so another writer takes the session
// over once the lease has expired and the stopped writer's late commit is
// refused with store.ErrLocked; a statement waiting on such a lock fails
// instead of hanging, and opening the session then reports it locked.
//
// The pool replaces broken connections and checks idle ones. Reads retry
// on a broken connection; a commit is retried when it failed before its
// COMMIT or the server aborted it, and when its COMMIT failed on a broken
// connection it is retried only once the lease row's commit counter,
// read under the row's lock in the retry's own transaction, shows it was
// not applied (if it was, the commit is done). Retries go on for up to
// Config.Reconnect, so a server restart or a terminated connection does
// not end a run.
//
// # Listing
//
// A session's summary record (store.SummaryKey, session.json) is copied
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
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/refine-spec/refine/internal/sqlkv"
	"github.com/refine-spec/refine/store"
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
	// Reconnect is how long a read or a commit keeps retrying after a
	// broken connection (the server restarting, a dropped network) or a
	// transaction the server aborted, before it fails. Default LeaseTTL.
	Reconnect time.Duration
	// AttemptTimeout bounds one read, or one commit's transaction: an
	// attempt still waiting past it counts as a broken connection (a
	// network that drops packets silently, a half-open TCP connection) and
	// is retried on a new one. Default LeaseTTL; negative: no bound.
	AttemptTimeout time.Duration
	// Now is the clock for lease expiry and session times. Default
	// time.Now.
	Now func() time.Time
	// NewID makes the ID of a session Create starts. Default: the time
	// and random digits ("20250301-141502-3fa9c1").
	NewID func() string
	// ReadOnly opens a reader (refine status, sessions, export): the
	// schema is checked, not migrated (a reader takes no lock and writes
	// nothing; an older schema is refused until a writer migrates it),
	// and Create, CreateNamed, Session and Delete fail with
	// store.ErrReadOnly.
	ReadOnly bool
}

// Validate reports a Config that cannot work.
func (c Config) Validate() error {
	switch {
	case c.Reconnect < 0:
		return fmt.Errorf("postgres: config: Reconnect %v is negative", c.Reconnect)
	case c.LeaseTTL < 0:
		return fmt.Errorf("postgres: config: LeaseTTL %v is negative", c.LeaseTTL)
	case c.Heartbeat > 0 && c.LeaseTTL > 0 && c.Heartbeat >= c.LeaseTTL:
		return fmt.Errorf("postgres: config: Heartbeat %v must be shorter than LeaseTTL %v, or the lease lapses between renewals", c.Heartbeat, c.LeaseTTL)
	}
	return nil
}

// DB is a store.Backend in one PostgreSQL database. It is safe for
// concurrent use; Close it when done.
type DB struct {
	kv  *sqlkv.DB
	drv *pool
}

var (
	_ store.Backend      = (*DB)(nil)
	_ store.NamedCreator = (*DB)(nil)
)

// Open connects to the database at dsn (a postgres:// URL or key=value
// string) and brings its schema up to date.
func Open(ctx context.Context, dsn string, cfg Config) (*DB, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	pc, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: open: %w; check the postgres:// URL", err)
	}
	tuneConnections(pc, cfg.LeaseTTL)
	p, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("postgres: open: %w; check the postgres:// URL", err)
	}
	drv := &pool{p: p}
	if cfg.ReadOnly {
		err = sqlkv.CheckSchema(ctx, drv, "postgres: open to read", len(migrations))
	} else {
		err = sqlkv.Migrate(ctx, drv, "postgres: open", migrations, lockMigration)
	}
	if err != nil {
		p.Close()
		return nil, err
	}
	kv := sqlkv.New(drv, dialect(), sqlkv.Settings{
		Holder: cfg.Holder, LeaseTTL: cfg.LeaseTTL, Heartbeat: cfg.Heartbeat, Reconnect: cfg.Reconnect,
		AttemptTimeout: cfg.AttemptTimeout, Now: cfg.Now, NewID: cfg.NewID, ReadOnly: cfg.ReadOnly,
	}, func(s *sqlkv.Store) store.Store { return &Store{s} })
	return &DB{kv: kv, drv: drv}, nil
}

// defaultLeaseTTL is sqlkv's default lease.
const defaultLeaseTTL = 30 * time.Second

// tuneConnections ties the server's timeouts on every connection to the
// lease ttl (0: the default), unless the DSN sets them itself:
// idle_in_transaction_session_timeout ends, and rolls back, a transaction
// whose writer stopped inside it (SIGSTOP, a frozen VM) after half a
// lease, releasing its row locks, so a new writer can take the session
// over once the lease expires and the stopped writer's late COMMIT is
// refused; lock_timeout makes a statement waiting on such a lock fail
// after a quarter lease instead of hanging (opening the session then
// reports it locked). They are set with SET once a connection is made
// rather than as startup parameters, which connection poolers such as
// PgBouncer refuse. Idle connections are checked every third of a lease,
// at most every minute, and connecting gives up after a third of a lease
// (at least a second) unless the DSN sets connect_timeout.
func tuneConnections(pc *pgxpool.Config, ttl time.Duration) {
	if ttl == 0 {
		ttl = defaultLeaseTTL
	}
	var set []string
	for _, p := range []struct {
		name string
		d    time.Duration
	}{
		{"idle_in_transaction_session_timeout", ttl / 2},
		{"lock_timeout", ttl / 4},
	} {
		if _, ok := pc.ConnConfig.RuntimeParams[p.name]; !ok {
			set = append(set, fmt.Sprintf("SET %s = %d", p.name, max(p.d.Milliseconds(), 1)))
		}
	}
	if len(set) > 0 {
		stmt := strings.Join(set, "; ")
		pc.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
			if _, err := c.Exec(ctx, stmt); err != nil {
				return fmt.Errorf("set the lease's timeouts: %w", err)
			}
			return nil
		}
	}
	pc.HealthCheckPeriod = min(max(ttl/3, time.Second), time.Minute)
	if pc.ConnConfig.ConnectTimeout == 0 {
		// A connection attempt into a network that drops packets would
		// otherwise hold a slot of the pool for good.
		pc.ConnConfig.ConnectTimeout = max(ttl/3, time.Second)
	}
}

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
// the connection pool.
func (d *DB) Close() error { return d.kv.Close() }

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
	// Version 2 counts each lease's commits, so a writer whose COMMIT
	// failed on a broken connection can tell whether it was applied.
	`ALTER TABLE refine_leases ADD COLUMN seq BIGINT NOT NULL DEFAULT 0;`,
}

// SchemaVersion is the schema version this package writes.
var SchemaVersion = len(migrations)

// lockMigration serializes migrations across processes; the lock is
// released at COMMIT.
func lockMigration(ctx context.Context, tx sqlkv.Tx) error {
	// Opening waits for another process's migration however long it
	// takes, rather than lock_timeout.
	if _, err := tx.Exec(ctx, `SET LOCAL lock_timeout = 0`); err != nil {
		return fmt.Errorf("postgres: open: %w", err)
	}
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrateLock)); err != nil {
		return fmt.Errorf("postgres: open: lock for migration: %w", err)
	}
	return nil
}
