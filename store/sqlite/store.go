package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/internal/sqlkv"
)

// Store is one session of a DB: its writer (from Create, CreateNamed or
// Session), which holds the session's lease until Close, or a read-only
// view (from View). It is safe for concurrent use.
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
	cache    *sqlkv.Cache
	commitMu sync.Mutex

	stop chan struct{} // closed by Close to end the heartbeat
	done chan struct{} // closed when the heartbeat has ended

	// testHook, when set by tests, runs inside a commit's transaction just
	// before it commits; an error it returns aborts the commit.
	testHook func() error
}

var (
	_ refine.Store = (*Store)(nil)
	_ io.Closer    = (*Store)(nil)
)

// ID returns the session's ID.
func (s *Store) ID() string { return s.id }

func (s *Store) usable(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sqlite: %s in session %s: %w", op, s.id, err)
	}
	if s.closed {
		return fmt.Errorf("sqlite: %s in session %s: the store is closed; open the session again", op, s.id)
	}
	return nil
}

// Get returns the value at key, or an error wrapping refine.ErrNotFound.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	if err := refine.ValidKey(key); err != nil {
		return nil, fmt.Errorf("sqlite: get: %w", err)
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
				return nil, fmt.Errorf("sqlite: get %s in session %s: %w", key, s.id, refine.ErrNotFound)
			}
			return v, nil
		}
		gen = s.cache.Gen()
	}
	var v []byte
	err := s.db.sql.QueryRowContext(ctx, `SELECT value FROM refine_entries WHERE session_id = ? AND key = ?`, s.id, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		if s.cache != nil {
			s.cache.Fill(gen, key, nil)
		}
		return nil, fmt.Errorf("sqlite: get %s in session %s: %w", key, s.id, refine.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: get %s in session %s: %w", key, s.id, err)
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
	if err := refine.ValidPrefix(prefix); err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
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
		all, err := queryKeys(ctx, s.db.sql, `SELECT key FROM refine_entries WHERE session_id = ? ORDER BY key`, s.id)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list %s in session %s: %w", prefix, s.id, err)
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
	q := `SELECT key FROM refine_entries WHERE session_id = ? ORDER BY key`
	args := []any{s.id}
	if prefix != "" {
		q = `SELECT key FROM refine_entries WHERE session_id = ? AND key >= ? AND key < ? ORDER BY key`
		args = append(args, prefix, sqlkv.PrefixEnd(prefix))
	}
	keys, err := queryKeys(ctx, s.db.sql, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list %s in session %s: %w", prefix, s.id, err)
	}
	return keys, nil
}

type queryer interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

func queryKeys(ctx context.Context, db queryer, q string, args ...any) ([]string, error) {
	rows, err := db.QueryContext(ctx, q, args...)
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

// Commit applies ops in one transaction, all or nothing. It fails with
// refine.ErrReadOnly on a view, and with refine.ErrLocked, applying
// nothing, if this writer's lease was taken over.
func (s *Store) Commit(ctx context.Context, ops ...refine.Op) error {
	if s.readOnly {
		return fmt.Errorf("sqlite: commit to session %s: %w: opened for reading; open the session for writing to change it", s.id, refine.ErrReadOnly)
	}
	final, keys, err := sqlkv.Plan(ops)
	if err != nil {
		return fmt.Errorf("sqlite: commit to session %s: %w", s.id, err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.usable(ctx, "commit"); err != nil {
		return err
	}
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	if err := s.commit(ctx, final, keys); err != nil {
		s.cache.Reset() // it may have been applied after all (a failed COMMIT)
		return fmt.Errorf("sqlite: commit to session %s in %s: %w", s.id, s.db.path, err)
	}
	s.cache.Apply(final)
	return nil
}

func (s *Store) commit(ctx context.Context, final sqlkv.Final, keys []string) error {
	now := s.db.cfg.Now()
	tx, err := s.db.sql.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// Fencing: the lease must still be this writer's, checked under the
	// transaction's write lock so no takeover can slip in before COMMIT.
	// A commit is proof of life, so the check renews the lease too.
	res, err := tx.ExecContext(ctx, `UPDATE refine_leases SET expires_at = ? WHERE session_id = ? AND token = ?`,
		nanos(now.Add(s.db.cfg.LeaseTTL)), s.id, s.token)
	if err != nil {
		return fmt.Errorf("check the lease: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		var holder string
		_ = tx.QueryRowContext(ctx, `SELECT holder FROM refine_leases WHERE session_id = ?`, s.id).Scan(&holder)
		return sqlkv.LostError("sqlite", s.id, holder)
	}
	if err := sqlkv.CheckFolders(ctx, final, txLookup{tx, s.id}); err != nil {
		return err
	}
	for _, k := range keys {
		v := final[k]
		if v == nil {
			_, err = tx.ExecContext(ctx, `DELETE FROM refine_entries WHERE session_id = ? AND key = ?`, s.id, k)
		} else {
			_, err = tx.ExecContext(ctx, `INSERT INTO refine_entries (session_id, key, value) VALUES (?, ?, ?)
				ON CONFLICT (session_id, key) DO UPDATE SET value = excluded.value`, s.id, k, v)
		}
		if err != nil {
			return fmt.Errorf("write %s: %w", k, err)
		}
	}
	if err := s.updateRow(ctx, tx, final, now); err != nil {
		return err
	}
	if s.testHook != nil {
		if err := s.testHook(); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// updateRow keeps the session row's summary columns in step with its
// session.json; a session without one shows its last commit's time.
func (s *Store) updateRow(ctx context.Context, tx *sql.Tx, final sqlkv.Final, now time.Time) error {
	raw, touched := final[refine.SummaryKey]
	var err error
	switch {
	case !touched:
		_, err = tx.ExecContext(ctx, `UPDATE refine_sessions SET updated_at = ? WHERE id = ? AND has_summary = 0`, nanos(now), s.id)
	case raw == nil:
		_, err = tx.ExecContext(ctx, `UPDATE refine_sessions SET has_summary = 0, updated_at = ?, round = 0, outcome = '', pending = 0, open_gaps = '{}', activity = '' WHERE id = ?`, nanos(now), s.id)
	default:
		c := sqlkv.SummaryColumns(s.id, raw, now)
		var created any // NULL keeps the row's creation time
		if !c.Created.IsZero() {
			created = nanos(c.Created)
		}
		_, err = tx.ExecContext(ctx, `UPDATE refine_sessions SET has_summary = 1, created_at = COALESCE(?, created_at), updated_at = ?, round = ?, outcome = ?, pending = ?, open_gaps = ?, activity = ? WHERE id = ?`,
			created, nanos(c.Updated), c.Round, c.Outcome, c.Pending, c.OpenGaps, c.Activity, s.id)
	}
	if err != nil {
		return fmt.Errorf("update the session row: %w", err)
	}
	return nil
}

// txLookup answers sqlkv.CheckFolders from inside the transaction.
type txLookup struct {
	tx *sql.Tx
	id string
}

func (l txLookup) Existing(ctx context.Context, keys []string) (map[string]bool, error) {
	q := `SELECT key FROM refine_entries WHERE session_id = ? AND key IN (?` + strings.Repeat(", ?", len(keys)-1) + `)`
	args := []any{l.id}
	for _, k := range keys {
		args = append(args, k)
	}
	found, err := queryKeys(ctx, l.tx, q, args...)
	if err != nil {
		return nil, err
	}
	m := make(map[string]bool, len(found))
	for _, k := range found {
		m[k] = true
	}
	return m, nil
}

func (l txLookup) Below(ctx context.Context, prefixes []string, limit int) ([]string, error) {
	const chunk = 200 // well under SQLite's limit on bound parameters
	var found []string
	for len(prefixes) > 0 && len(found) < limit {
		n := min(chunk, len(prefixes))
		var q strings.Builder
		q.WriteString(`SELECT key FROM refine_entries WHERE session_id = ? AND (`)
		args := []any{l.id}
		for i, p := range prefixes[:n] {
			if i > 0 {
				q.WriteString(" OR ")
			}
			q.WriteString("(key >= ? AND key < ?)")
			args = append(args, p, sqlkv.PrefixEnd(p))
		}
		q.WriteString(") LIMIT ?")
		args = append(args, limit-len(found))
		keys, err := queryKeys(ctx, l.tx, q.String(), args...)
		if err != nil {
			return nil, err
		}
		found = append(found, keys...)
		prefixes = prefixes[n:]
	}
	return found, nil
}

// startHeartbeat renews the lease every Config.Heartbeat until Close.
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
				// A failed renewal is retried at the next tick; a lease
				// taken over meanwhile shows at the next commit.
				ctx, cancel := context.WithTimeout(context.Background(), s.db.cfg.LeaseTTL/3)
				err := s.renew(ctx)
				cancel()
				if beat != nil {
					beat(err)
				}
			}
		}
	}()
}

// renew extends the lease if it is still this writer's.
func (s *Store) renew(ctx context.Context) error {
	_, err := s.db.sql.ExecContext(ctx, `UPDATE refine_leases SET expires_at = ? WHERE session_id = ? AND token = ?`,
		nanos(s.db.cfg.Now().Add(s.db.cfg.LeaseTTL)), s.id, s.token)
	return err
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
		return fmt.Errorf("sqlite: close session %s: release the lease: %w; it expires by itself", s.id, err)
	}
	return nil
}

func (s *Store) release() error {
	ctx, cancel := context.WithTimeout(context.Background(), s.db.cfg.BusyTimeout+time.Second)
	defer cancel()
	_, err := s.db.sql.ExecContext(ctx, `DELETE FROM refine_leases WHERE session_id = ? AND token = ?`, s.id, s.token)
	return err
}
