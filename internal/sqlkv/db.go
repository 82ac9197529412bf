package sqlkv

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/refine-spec/refine/internal/sessionid"
	"github.com/refine-spec/refine/store"
)

// Settings tune a DB; zero fields get the defaults the backend packages
// document.
type Settings struct {
	// Holder names this process in lease rows. Default: host and process
	// ID.
	Holder string
	// LeaseTTL is how long a lease lasts without renewal. Default 30 s.
	LeaseTTL time.Duration
	// Heartbeat is how often a writer renews its lease. Default
	// LeaseTTL/3; negative turns renewal off.
	Heartbeat time.Duration
	// ReleaseTimeout bounds giving up a lease at Close. Default 10 s.
	ReleaseTimeout time.Duration
	// Reconnect is how long reads and commits keep retrying on a Driver
	// that is a Classifier, after a broken connection or an aborted
	// transaction, before they fail. Default LeaseTTL.
	Reconnect time.Duration
	// AttemptTimeout bounds one attempt of a read or a transaction on a
	// Driver that is a Classifier; an attempt past it counts as a broken
	// connection and is retried. Default LeaseTTL; negative: no bound.
	AttemptTimeout time.Duration
	// Now is the clock for leases and session times. Default time.Now.
	Now func() time.Time
	// NewID makes the ID of a session Create starts. Default: the time
	// and random digits.
	NewID func() string
	// ReadOnly makes the DB a reader: Create, CreateNamed, Session and
	// Delete fail with store.ErrReadOnly; View, Sessions and
	// SessionsPage read.
	ReadOnly bool
}

func (s Settings) withDefaults() Settings {
	if s.Holder == "" {
		s.Holder = DefaultHolder()
	}
	if s.LeaseTTL == 0 {
		s.LeaseTTL = 30 * time.Second
	}
	if s.Heartbeat == 0 {
		s.Heartbeat = s.LeaseTTL / 3
	}
	if s.Reconnect == 0 {
		s.Reconnect = s.LeaseTTL
	}
	if s.AttemptTimeout == 0 {
		s.AttemptTimeout = s.LeaseTTL
	}
	if s.ReleaseTimeout == 0 {
		s.ReleaseTimeout = 10 * time.Second
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	if s.NewID == nil {
		s.NewID = sessionid.Generator{Now: s.Now}.New
	}
	return s
}

// DB is the session logic of a SQL backend: many sessions in one
// database, each with at most one writer holding a lease row, on any
// Driver that speaks the Dialect. It is safe for concurrent use.
type DB struct {
	drv  Driver
	q    *Dialect
	cfg  Settings
	wrap func(*Store) store.Store

	mu      sync.Mutex
	writers map[*Store]struct{} // open writers, released by Close
	closed  bool

	// testTick and testBeat, set by tests before a writer opens, replace
	// the heartbeat's ticker and report each renewal.
	testTick  <-chan time.Time
	testBeat  func(error)
	testFault func(Fault, error)
}

// New returns a DB on drv, whose schema the caller has migrated. wrap
// turns each Store it opens into the backend package's own type; nil
// returns the *Store itself.
func New(drv Driver, q *Dialect, s Settings, wrap func(*Store) store.Store) *DB {
	if wrap == nil {
		wrap = func(s *Store) store.Store { return s }
	}
	return &DB{drv: drv, q: q, cfg: s.withDefaults(), wrap: wrap, writers: map[*Store]struct{}{}}
}

// SetHeartbeat makes writers opened from d renew their lease when tick
// fires, and report each renewal to beat, instead of on a timer. For
// tests.
func SetHeartbeat(d *DB, tick <-chan time.Time, beat func(error)) {
	d.testTick, d.testBeat = tick, beat
}

func nanos(t time.Time) int64 { return t.UnixNano() }

func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

// readOnly refuses op on a reader.
func (d *DB) readOnly(op, id string) error {
	if !d.cfg.ReadOnly {
		return nil
	}
	return fmt.Errorf("%s: %s %s: %w: the database%s was opened for reading (status, sessions, export); open it as a writer to change sessions", d.q.Name, op, id, store.ErrReadOnly, d.q.in())
}

func (d *DB) check(ctx context.Context, op, id string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %s %s: %w", d.q.Name, op, id, err)
	}
	if err := store.ValidSessionID(id); err != nil {
		return fmt.Errorf("%s: %s: %w", d.q.Name, op, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return fmt.Errorf("%s: %s %s: %s", d.q.Name, op, id, d.q.closedMsg())
	}
	return nil
}

func (d *DB) notFound(op, id string) error {
	return fmt.Errorf("%s: %s %s: %w: no such session; refine sessions lists them", d.q.Name, op, id, store.ErrNotFound)
}

// Create starts a new, empty session under a fresh ID and returns its
// writer.
func (d *DB) Create(ctx context.Context) (string, store.Store, error) {
	for range 10 {
		id := d.cfg.NewID()
		st, err := d.CreateNamed(ctx, id)
		if errors.Is(err, store.ErrSessionExists) {
			continue
		}
		return id, st, err
	}
	return "", nil, fmt.Errorf("%s: create: the ID function returned taken IDs 10 times in a row: %w", d.q.Name, store.ErrSessionExists)
}

// CreateNamed starts a new, empty session under id and returns its
// writer; an existing id fails with store.ErrSessionExists.
func (d *DB) CreateNamed(ctx context.Context, id string) (store.Store, error) {
	return d.acquire(ctx, "create", id, true)
}

// Session opens session id for writing, taking its lease.
func (d *DB) Session(ctx context.Context, id string) (store.Store, error) {
	return d.acquire(ctx, "session", id, false)
}

func (d *DB) acquire(ctx context.Context, op, id string, create bool) (store.Store, error) {
	if err := d.check(ctx, op, id); err != nil {
		return nil, err
	}
	if err := d.readOnly(op, id); err != nil {
		return nil, err
	}
	// One token for every attempt, so an attempt whose COMMIT failed but
	// landed is recognised as this writer's own by the next one.
	token := NewToken()
	var (
		r     *retrier
		maybe bool // an earlier attempt's COMMIT failed: it may have landed
	)
	for {
		actx, cancel := d.attempt(ctx)
		atCommit, err := d.acquireOnce(actx, op, id, token, create, maybe)
		f := d.fault(ctx, actx, err)
		cancel()
		if err == nil {
			break
		}
		if f == FaultNone {
			return nil, err
		}
		if f == FaultBroken && atCommit {
			maybe = true
		}
		if r == nil {
			r = d.newRetrier()
		}
		if !r.pause(ctx) {
			return nil, err
		}
	}
	s := &Store{db: d, id: id, token: token, cache: NewCache()}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		s.release()
		return nil, fmt.Errorf("%s: %s %s: %s", d.q.Name, op, id, d.q.closedMsg())
	}
	d.writers[s] = struct{}{}
	d.mu.Unlock()
	s.startHeartbeat()
	return d.wrap(s), nil
}

// acquireOnce is one attempt of acquire in one transaction; atCommit
// tells that the error came from its COMMIT.
func (d *DB) acquireOnce(ctx context.Context, op, id, token string, create, maybe bool) (atCommit bool, err error) {
	tx, err := d.drv.Begin(ctx)
	if err != nil {
		return false, fmt.Errorf("%s: %s %s: %w", d.q.Name, op, id, err)
	}
	defer tx.Rollback(ctx)
	landed, err := d.takeLease(ctx, tx, op, id, token, create, maybe)
	if err != nil || landed {
		return false, err
	}
	if err := tx.Commit(ctx); err != nil {
		return true, fmt.Errorf("%s: %s %s: %w", d.q.Name, op, id, err)
	}
	return false, nil
}

// takeLease creates the session row or checks it is there, then takes
// the lease if there is none or it expired (a crashed writer's); the
// transaction makes this atomic across processes. Locks follow the order
// documented at Driver: the session row, then the lease row. landed
// reports that an earlier attempt with token (maybe set) already created
// the session.
func (d *DB) takeLease(ctx context.Context, tx Tx, op, id, token string, create, maybe bool) (landed bool, err error) {
	now := d.cfg.Now()
	if create {
		n, err := tx.Exec(ctx, d.q.InsertSession, id, nanos(now), nanos(now))
		if err != nil {
			return false, fmt.Errorf("%s: create %s: %w", d.q.Name, id, err)
		}
		if n == 0 {
			if maybe {
				var got string
				if err := queryRow(ctx, tx, d.q.ReadToken, []any{id}, &got); err == nil && got == token {
					return true, nil
				}
			}
			return false, fmt.Errorf("%s: create %s: %w; pick another ID, or open the existing session (Backend.Open)", d.q.Name, id, store.ErrSessionExists)
		}
	} else {
		var one int
		err := queryRow(ctx, tx, d.q.SessionForWrite, []any{id}, &one)
		if errors.Is(err, errNoRows) {
			return false, d.notFound(op, id)
		}
		if err != nil {
			return false, fmt.Errorf("%s: %s %s: %w", d.q.Name, op, id, err)
		}
	}
	var got string
	err = queryRow(ctx, tx, d.q.TakeLease, []any{id, d.cfg.Holder, token, nanos(now.Add(d.cfg.LeaseTTL)), nanos(now)}, &got)
	if d.aborted(ctx, err) {
		// The lease row stayed locked past the lock timeout: its writer is
		// inside a commit (or stopped there, until the server ends that
		// transaction). Report the lease as it was last committed.
		var holder string
		var expires int64
		if rerr := queryRow(ctx, d.drv, d.q.ReadLease, []any{id}, &holder, &expires); rerr == nil {
			return false, LockedError(d.q.Name, id, holder, fromNanos(expires))
		}
		return false, fmt.Errorf("%s: %s %s: take the lease: %w", d.q.Name, op, id, err)
	}
	if errors.Is(err, errNoRows) {
		var holder string
		var expires int64
		if err := queryRow(ctx, tx, d.q.ReadLease, []any{id}, &holder, &expires); err != nil {
			return false, fmt.Errorf("%s: %s %s: read the lease: %w", d.q.Name, op, id, err)
		}
		return false, LockedError(d.q.Name, id, holder, fromNanos(expires))
	}
	if err != nil {
		return false, fmt.Errorf("%s: %s %s: take the lease: %w", d.q.Name, op, id, err)
	}
	return false, nil
}

// View opens session id for reading: it takes no lease, and Commit fails
// with store.ErrReadOnly.
func (d *DB) View(ctx context.Context, id string) (store.Store, error) {
	if err := d.check(ctx, "view", id); err != nil {
		return nil, err
	}
	var one int
	err := d.read(ctx, func(ctx context.Context) error { return queryRow(ctx, d.drv, d.q.SessionExists, []any{id}, &one) })
	if errors.Is(err, errNoRows) {
		return nil, d.notFound("view", id)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: view %s: %w", d.q.Name, id, err)
	}
	return d.wrap(&Store{db: d, id: id, readOnly: true}), nil
}

// LeaseHolder returns who holds session id's live lease, "" when no
// writer does (none, or an expired one). It reads without taking any
// lock, so a reader can tell whether a run is live.
func (d *DB) LeaseHolder(ctx context.Context, id string) (string, error) {
	if err := d.check(ctx, "lease of", id); err != nil {
		return "", err
	}
	var holder string
	var expires int64
	err := d.read(ctx, func(ctx context.Context) error {
		return queryRow(ctx, d.drv, d.q.ReadLease, []any{id}, &holder, &expires)
	})
	switch {
	case errors.Is(err, errNoRows):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("%s: lease of %s: %w", d.q.Name, id, err)
	case expires <= nanos(d.cfg.Now()):
		return "", nil
	}
	return holder, nil
}

// Sessions lists every session, newest activity first, from the summary
// columns of the session rows.
func (d *DB) Sessions(ctx context.Context) ([]store.SessionInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: sessions: %w", d.q.Name, err)
	}
	var infos []store.SessionInfo
	err := d.read(ctx, func(ctx context.Context) error {
		var err error
		infos, err = d.listSessions(ctx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: sessions%s: %w", d.q.Name, d.q.in(), err)
	}
	return infos, nil
}

func (d *DB) listSessions(ctx context.Context) ([]store.SessionInfo, error) {
	return d.querySessions(ctx, d.q.ListSessions)
}

// SessionsPage lists one page of sessions by the index on (updated_at
// DESC, id): a page costs the same however many sessions there are.
func (d *DB) SessionsPage(ctx context.Context, req store.PageRequest) (store.SessionPage, error) {
	req, err := req.Check()
	if err != nil {
		return store.SessionPage{}, fmt.Errorf("%s: sessions: %w", d.q.Name, err)
	}
	if err := ctx.Err(); err != nil {
		return store.SessionPage{}, fmt.Errorf("%s: sessions: %w", d.q.Name, err)
	}
	query, args := d.q.PageFirst, []any{req.Limit + 1}
	cursor := cmp.Or(req.After, req.Before)
	if cursor != "" {
		u, id, _ := store.ParseSessionCursor(cursor)
		query, args = d.q.PageAfter, []any{nanos(u), nanos(u), id, req.Limit + 1}
		if req.Before != "" {
			query = d.q.PageBefore
		}
	}
	var infos []store.SessionInfo
	err = d.read(ctx, func(ctx context.Context) error {
		var err error
		infos, err = d.querySessions(ctx, query, args...)
		return err
	})
	if err != nil {
		return store.SessionPage{}, fmt.Errorf("%s: sessions%s: %w", d.q.Name, d.q.in(), err)
	}
	// One more row than the page says whether there is more that way.
	more := len(infos) > req.Limit
	infos = infos[:min(len(infos), req.Limit)]
	if req.Before != "" {
		slices.Reverse(infos)
	}
	page := store.SessionPage{Sessions: infos}
	if len(infos) == 0 {
		return page, nil
	}
	first, last := store.SessionCursor(infos[0]), store.SessionCursor(infos[len(infos)-1])
	switch {
	case req.Before != "":
		page.Next = last // what led here
		if more {
			page.Prev = first
		}
	case req.After != "":
		page.Prev = first
		if more {
			page.Next = last
		}
	default:
		if more {
			page.Next = last
		}
	}
	return page, nil
}

func (d *DB) querySessions(ctx context.Context, query string, args ...any) ([]store.SessionInfo, error) {
	rows, err := d.drv.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var infos []store.SessionInfo
	for rows.Next() {
		var (
			id               string
			created, updated int64
			c                Columns
		)
		if err := rows.Scan(&id, &created, &updated, &c.Round, &c.Outcome, &c.Pending, &c.OpenGaps, &c.Activity); err != nil {
			return nil, err
		}
		c.Created, c.Updated = fromNanos(created), fromNanos(updated)
		infos = append(infos, c.Info(id))
	}
	return infos, rows.Err()
}

// Delete removes session id and everything in it. A session with a live
// lease is refused with store.ErrLocked.
func (d *DB) Delete(ctx context.Context, id string) error {
	if err := d.check(ctx, "delete", id); err != nil {
		return err
	}
	if err := d.readOnly("delete", id); err != nil {
		return err
	}
	tx, err := d.drv.Begin(ctx)
	if err != nil {
		return fmt.Errorf("%s: delete %s: %w", d.q.Name, id, err)
	}
	defer tx.Rollback(ctx)
	var one int
	err = queryRow(ctx, tx, d.q.SessionForDelete, []any{id}, &one)
	if errors.Is(err, errNoRows) {
		return d.notFound("delete", id)
	}
	if d.aborted(ctx, err) {
		// A writer is inside a commit (or stopped there until the server
		// ends its transaction): its lease is live.
		var holder string
		var expires int64
		if rerr := queryRow(ctx, d.drv, d.q.ReadLease, []any{id}, &holder, &expires); rerr == nil {
			return LockedError(d.q.Name, id, holder, fromNanos(expires))
		}
	}
	if err != nil {
		return fmt.Errorf("%s: delete %s: %w", d.q.Name, id, err)
	}
	var holder string
	var expires int64
	err = queryRow(ctx, tx, d.q.ReadLeaseForDelete, []any{id}, &holder, &expires)
	switch {
	case err == nil && expires > nanos(d.cfg.Now()):
		return LockedError(d.q.Name, id, holder, fromNanos(expires))
	case err != nil && !errors.Is(err, errNoRows):
		return fmt.Errorf("%s: delete %s: read the lease: %w", d.q.Name, id, err)
	}
	for _, q := range d.q.DeleteSession {
		if _, err := tx.Exec(ctx, q, id); err != nil {
			return fmt.Errorf("%s: delete %s: %w", d.q.Name, id, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("%s: delete %s: %w", d.q.Name, id, err)
	}
	return nil
}

// Close releases every writer still open (their leases too) and closes
// the Driver.
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
	errs = append(errs, d.drv.Close())
	if err := errors.Join(errs...); err != nil {
		target := ""
		if d.q.Target != "" {
			target = " " + d.q.Target
		}
		return fmt.Errorf("%s: close%s: %w", d.q.Name, target, err)
	}
	return nil
}
