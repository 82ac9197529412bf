package sqlkv

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/refine-spec/refine/store"
)

// Store is one session of a DB: its writer, which holds the session's
// lease until Close, or a read-only view. It is safe for concurrent use.
type Store struct {
	db       *DB
	id       string
	token    string // the lease token; "" for a view
	readOnly bool

	mu     sync.RWMutex
	closed bool

	// cache holds the writer's own session in memory (nil for a view);
	// commitMu keeps commits, and so the cache's updates, in the order
	// the database applies them.
	cache    *Cache
	commitMu sync.Mutex
	seq      int64 // the lease row's commit sequence after this writer's last commit; under commitMu

	stop chan struct{} // closed by Close to end the heartbeat
	done chan struct{} // closed when the heartbeat has ended

	// testHook, when set by tests, runs inside a commit's transaction just
	// before it commits; an error it returns aborts the commit.
	testHook func(ctx context.Context, tx Tx) error
}

// SetCommitHook makes s call hook inside each commit's transaction, just
// before COMMIT; an error it returns aborts the commit. For tests.
func SetCommitHook(s *Store, hook func(ctx context.Context, tx Tx) error) { s.testHook = hook }

// ID returns the session's ID.
func (s *Store) ID() string { return s.id }

func (s *Store) usable(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %s in session %s: %w", s.db.q.Name, op, s.id, err)
	}
	if s.closed {
		return fmt.Errorf("%s: %s in session %s: the store is closed; open the session again", s.db.q.Name, op, s.id)
	}
	return nil
}

// Get returns the value at key, or an error wrapping store.ErrNotFound.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	name := s.db.q.Name
	if err := store.ValidKey(key); err != nil {
		return nil, fmt.Errorf("%s: get: %w", name, err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.usable(ctx, "get "+key); err != nil {
		return nil, err
	}
	var gen uint64
	if s.cache != nil {
		if v, found, known := s.cache.Get(key); known {
			if !found {
				return nil, fmt.Errorf("%s: get %s in session %s: %w", name, key, s.id, store.ErrNotFound)
			}
			return v, nil
		}
		gen = s.cache.Gen()
	}
	var v []byte
	err := s.db.read(ctx, func(ctx context.Context) error { return queryRow(ctx, s.db.drv, s.db.q.GetEntry, []any{s.id, key}, &v) })
	if errors.Is(err, errNoRows) {
		if s.cache != nil {
			s.cache.Fill(gen, key, nil)
		}
		return nil, fmt.Errorf("%s: get %s in session %s: %w", name, key, s.id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: get %s in session %s: %w", name, key, s.id, err)
	}
	if v == nil {
		v = []byte{}
	}
	if s.cache != nil {
		s.cache.Fill(gen, key, v)
	}
	return v, nil
}

// List returns the keys starting with prefix, sorted by byte order.
func (s *Store) List(ctx context.Context, prefix string) ([]string, error) {
	name := s.db.q.Name
	if err := store.ValidPrefix(prefix); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.usable(ctx, "list "+prefix); err != nil {
		return nil, err
	}
	if s.cache != nil {
		if keys, ok := s.cache.List(prefix); ok {
			return keys, nil
		}
		// The writer lists its whole session once; commits keep the list.
		gen := s.cache.Gen()
		var all []string
		err := s.db.read(ctx, func(ctx context.Context) (err error) {
			all, err = QueryKeys(ctx, s.db.drv, s.db.q.ListEntries, s.id)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("%s: list %s in session %s: %w", name, prefix, s.id, err)
		}
		s.cache.FillKeys(gen, all)
		var keys []string
		for _, k := range all {
			if strings.HasPrefix(k, prefix) {
				keys = append(keys, k)
			}
		}
		return keys, nil
	}
	q, args := s.db.q.ListEntries, []any{s.id}
	if prefix != "" {
		q, args = s.db.q.ListRange, append(args, prefix, PrefixEnd(prefix))
	}
	var keys []string
	err := s.db.read(ctx, func(ctx context.Context) (err error) {
		keys, err = QueryKeys(ctx, s.db.drv, q, args...)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: list %s in session %s: %w", name, prefix, s.id, err)
	}
	return keys, nil
}

// Commit applies ops in one transaction, all or nothing. It fails with
// store.ErrReadOnly on a view, and with store.ErrLocked, applying
// nothing, if this writer's lease was taken over.
func (s *Store) Commit(ctx context.Context, ops ...store.Op) error {
	name := s.db.q.Name
	if s.readOnly {
		return fmt.Errorf("%s: commit to session %s: %w: opened for reading; open the session for writing to change it", name, s.id, store.ErrReadOnly)
	}
	w, err := Plan(ops, s.Appends(), s.Copies())
	if err != nil {
		return fmt.Errorf("%s: commit to session %s: %w", name, s.id, err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.usable(ctx, "commit"); err != nil {
		return err
	}
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	if err := s.commitRetrying(ctx, w); err != nil {
		s.cache.Reset() // it may have been applied after all (a failed or dropped COMMIT)
		if errors.Is(err, store.ErrLocked) {
			return err // LostError names the session already
		}
		return fmt.Errorf("%s: commit to session %s%s: %w", name, s.id, s.db.q.in(), err)
	}
	s.cache.Apply(w.Final)
	return nil
}

// Appends reports whether Commit accepts store.OpAppend: a writer does
// when its Dialect has AppendEntry (store.Appender). An append is one
// statement that adds the bytes to the stored value in the database.
func (s *Store) Appends() bool { return !s.readOnly && s.db.q.AppendEntry != "" }

// Copies reports whether Commit accepts store.OpCopy: a writer does when
// its Dialect has CopyEntry (store.Copier). A copy is one statement that
// copies the value inside the database.
func (s *Store) Copies() bool { return !s.readOnly && s.db.q.CopyEntry != "" }

// commitRetrying runs the commit's transaction until it is applied once.
// A transaction that failed before its COMMIT, or that the server aborted,
// applied nothing and is run again. One whose COMMIT failed on a broken
// connection may have been applied: the next attempt's lease update, which
// waits for any transaction still holding the lease row, returns the
// commit sequence, and a sequence one past the expected one says the
// earlier attempt landed, so this one is rolled back and the commit
// reported done. Without a commit sequence (Dialect.CommitLease) such a
// commit is not retried.
func (s *Store) commitRetrying(ctx context.Context, w *Writes) error {
	var (
		r     *retrier
		maybe bool // an earlier attempt's COMMIT failed: it may have landed
	)
	for {
		actx, cancel := s.db.attempt(ctx)
		atCommit, err := s.commit(actx, w, maybe)
		f := s.db.fault(ctx, actx, err)
		cancel()
		if err == nil {
			return nil
		}
		switch f {
		case FaultNone:
			return err
		case FaultBroken:
			if atCommit {
				if s.db.q.CommitLease == "" {
					return err
				}
				maybe = true
			}
		}
		if r == nil {
			r = s.db.newRetrier()
		}
		if !r.pause(ctx) {
			if maybe {
				return fmt.Errorf("%w; the database could not be reached again to tell whether it was applied: open the session again (refine resume) to see", err)
			}
			return err
		}
	}
}

// commit is one attempt of a commit in one transaction; atCommit tells
// that the error came from its COMMIT, which may have applied it. maybe
// says an earlier attempt's COMMIT failed that way.
func (s *Store) commit(ctx context.Context, w *Writes, maybe bool) (atCommit bool, err error) {
	q, now := s.db.q, s.db.cfg.Now()
	tx, err := s.db.drv.Begin(ctx)
	if err != nil {
		return false, err
	}
	defer tx.Rollback(ctx)
	// The lock order of Driver: the session row first, then the lease row.
	if q.LockSession != "" {
		var one int
		if err := queryRow(ctx, tx, q.LockSession, []any{s.id}, &one); err != nil {
			if errors.Is(err, errNoRows) {
				return false, LostError(q.Name, s.id, "")
			}
			return false, fmt.Errorf("lock the session row: %w", err)
		}
	}
	// Fencing: the UPDATE takes the lease row's write lock, so no takeover
	// can slip in before COMMIT, and matches only while the lease is still
	// this writer's. A commit is proof of life: it renews the lease too.
	expires := nanos(now.Add(s.db.cfg.LeaseTTL))
	var n int64
	var seq int64
	if q.CommitLease != "" {
		err = queryRow(ctx, tx, q.CommitLease, []any{expires, s.id, s.token}, &seq)
		if errors.Is(err, errNoRows) {
			n, err = 0, nil
		} else if err == nil {
			n = 1
		}
	} else {
		n, err = tx.Exec(ctx, q.RenewLease, expires, s.id, s.token)
	}
	if err != nil {
		return false, fmt.Errorf("check the lease: %w", err)
	}
	if n != 1 {
		var holder string
		var expires int64
		_ = queryRow(ctx, tx, q.ReadLease, []any{s.id}, &holder, &expires)
		if maybe {
			return false, MaybeLostError(q.Name, s.id, holder)
		}
		return false, LostError(q.Name, s.id, holder)
	}
	if q.CommitLease != "" {
		switch {
		case seq == s.seq+1:
		case maybe && seq == s.seq+2:
			// The earlier attempt landed; this one changes nothing.
			s.seq++
			return false, nil
		default:
			return false, fmt.Errorf("check the lease: commit sequence %d, want %d: another process commits with this writer's lease token; open the session again", seq, s.seq+1)
		}
	}
	lookup := q.Lookup(tx, s.id)
	if err := s.checkNeed(ctx, w.Need, lookup); err != nil {
		return false, err
	}
	if err := CheckFolders(ctx, w.Final, lookup); err != nil {
		return false, err
	}
	stmts := make([]Stmt, 0, len(w.Steps)+1)
	for _, op := range w.Steps {
		what := "write " + op.Key
		switch op.Kind {
		case store.OpPut:
			stmts = append(stmts, Stmt{SQL: q.PutEntry, Args: []any{s.id, op.Key, op.Value}, What: what})
		case store.OpDelete:
			stmts = append(stmts, Stmt{SQL: q.DeleteEntry, Args: []any{s.id, op.Key}, What: what})
		case store.OpAppend:
			stmts = append(stmts, Stmt{SQL: q.AppendEntry, Args: []any{s.id, op.Key, op.Value}, What: "append to " + op.Key})
		case store.OpCopy:
			stmts = append(stmts, Stmt{SQL: q.CopyEntry, Args: []any{s.id, op.Key, op.From}, What: "copy " + op.From + " to " + op.Key})
		}
	}
	sum, touched := w.Final[store.SummaryKey]
	if touched && !sum.Deleted && sum.Base != "" {
		// The database worked session.json out (an append, a copy): run
		// the writes, then read it back for the row's columns.
		if err := tx.Batch(ctx, stmts); err != nil {
			return false, err
		}
		if err := queryRow(ctx, tx, q.GetEntry, []any{s.id, store.SummaryKey}, &sum.Value); err != nil {
			return false, fmt.Errorf("read back %s: %w", store.SummaryKey, err)
		}
		stmts = stmts[:0]
	}
	stmts = append(stmts, s.rowUpdate(sum, touched, now))
	if err := tx.Batch(ctx, stmts); err != nil {
		return false, err
	}
	if s.testHook != nil {
		if err := s.testHook(ctx, tx); err != nil {
			return false, err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return true, err
	}
	if q.CommitLease != "" {
		s.seq = seq
	}
	return false, nil
}

// checkNeed fails a commit that copies a key not stored before it, with
// an error wrapping store.ErrNotFound. The writer's cache answers when it
// knows; otherwise the database does, in one query.
func (s *Store) checkNeed(ctx context.Context, need []string, db Lookup) error {
	var ask []string
	for _, k := range need {
		found, known := s.cache.Has(k)
		switch {
		case !known:
			ask = append(ask, k)
		case !found:
			return copyMissing(k)
		}
	}
	if len(ask) == 0 {
		return nil
	}
	stored, err := db.Existing(ctx, ask)
	if err != nil {
		return err
	}
	for _, k := range ask {
		if !slices.Contains(stored, k) {
			return copyMissing(k)
		}
	}
	return nil
}

func copyMissing(key string) error {
	return fmt.Errorf("copy from %s: %w: it is not stored; nothing of the commit was applied; put it first, in this commit or an earlier one", key, store.ErrNotFound)
}

// rowUpdate keeps the session row's summary columns in step with its
// session.json (sum, as the commit leaves it, if touched); a session
// without one shows its last commit's time.
func (s *Store) rowUpdate(sum Entry, touched bool, now time.Time) Stmt {
	const what = "update the session row"
	switch {
	case !touched:
		return Stmt{SQL: s.db.q.TouchSession, Args: []any{nanos(now), s.id}, What: what}
	case sum.Deleted:
		return Stmt{SQL: s.db.q.ClearSummary, Args: []any{nanos(now), s.id}, What: what}
	}
	c := SummaryColumns(s.id, sum.Value, now)
	var created any // NULL keeps the row's creation time
	if !c.Created.IsZero() {
		created = nanos(c.Created)
	}
	return Stmt{SQL: s.db.q.SetSummary, What: what,
		Args: []any{created, nanos(c.Updated), c.Round, c.Outcome, c.Pending, c.OpenGaps, c.Activity, s.id}}
}

// startHeartbeat renews the lease every Settings.Heartbeat until Close.
func (s *Store) startHeartbeat() {
	s.stop = make(chan struct{})
	s.done = make(chan struct{})
	tick, beat := s.db.testTick, s.db.testBeat
	stopTicker := func() {}
	if tick == nil {
		if s.db.cfg.Heartbeat < 0 {
			close(s.done)
			return
		}
		t := time.NewTicker(s.db.cfg.Heartbeat)
		tick, stopTicker = t.C, t.Stop
	}
	go func() {
		defer close(s.done)
		defer stopTicker()
		for {
			select {
			case <-s.stop:
				return
			case <-tick:
				// A renewal only moves the expiry on, so it is retried on a
				// broken connection within a third of the lease; one that
				// still fails (a busy database) is tried again at the next
				// tick, and a lease taken over meanwhile shows at the next
				// commit.
				ctx, cancel := context.WithTimeout(context.Background(), s.db.cfg.LeaseTTL/3)
				err := s.db.read(ctx, func(ctx context.Context) error {
					_, err := s.db.drv.Exec(ctx, s.db.q.RenewLease, nanos(s.db.cfg.Now().Add(s.db.cfg.LeaseTTL)), s.id, s.token)
					return err
				})
				cancel()
				if beat != nil {
					beat(err)
				}
			}
		}
	}()
}

// Close ends a writer's heartbeat and gives up its lease; on a view it
// only marks the Store closed. It is idempotent.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	if s.readOnly {
		return nil
	}
	close(s.stop)
	<-s.done
	s.db.mu.Lock()
	delete(s.db.writers, s)
	s.db.mu.Unlock()
	if err := s.release(); err != nil {
		return fmt.Errorf("%s: close session %s: release the lease: %w; it expires by itself", s.db.q.Name, s.id, err)
	}
	return nil
}

func (s *Store) release() error {
	ctx, cancel := context.WithTimeout(context.Background(), s.db.cfg.ReleaseTimeout)
	defer cancel()
	return s.db.read(ctx, func(ctx context.Context) error { // deleting it twice is harmless
		_, err := s.db.drv.Exec(ctx, s.db.q.ReleaseLease, s.id, s.token)
		return err
	})
}
