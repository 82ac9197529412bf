package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
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

	stop chan struct{}
	done chan struct{}

	// testHook, when set by tests, runs inside a commit's transaction just
	// before it commits; an error it returns aborts the commit.
	testHook func(ctx context.Context, tx pgx.Tx) error
}

var (
	_ refine.Store = (*Store)(nil)
	_ io.Closer    = (*Store)(nil)
)

// ID returns the session's ID.
func (s *Store) ID() string { return s.id }

func (s *Store) usable(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("postgres: %s in session %s: %w", op, s.id, err)
	}
	if s.closed {
		return fmt.Errorf("postgres: %s in session %s: the store is closed; open the session again", op, s.id)
	}
	return nil
}

// Get returns the value at key, or an error wrapping refine.ErrNotFound.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	if err := refine.ValidKey(key); err != nil {
		return nil, fmt.Errorf("postgres: get: %w", err)
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
				return nil, fmt.Errorf("postgres: get %s in session %s: %w", key, s.id, refine.ErrNotFound)
			}
			return v, nil
		}
		gen = s.cache.Gen()
	}
	var v []byte
	err := s.db.pool.QueryRow(ctx, `SELECT value FROM refine_entries WHERE session_id = $1 AND key = $2`, s.id, key).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		if s.cache != nil {
			s.cache.Fill(gen, key, nil)
		}
		return nil, fmt.Errorf("postgres: get %s in session %s: %w", key, s.id, refine.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: get %s in session %s: %w", key, s.id, err)
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
		return nil, fmt.Errorf("postgres: %w", err)
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
		all, err := queryKeys(ctx, s.db.pool, `SELECT key FROM refine_entries WHERE session_id = $1 ORDER BY key`, s.id)
		if err != nil {
			return nil, fmt.Errorf("postgres: list %s in session %s: %w", prefix, s.id, err)
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
	q := `SELECT key FROM refine_entries WHERE session_id = $1 ORDER BY key`
	args := []any{s.id}
	if prefix != "" {
		q = `SELECT key FROM refine_entries WHERE session_id = $1 AND key >= $2 AND key < $3 ORDER BY key`
		args = append(args, prefix, sqlkv.PrefixEnd(prefix))
	}
	keys, err := queryKeys(ctx, s.db.pool, q, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: list %s in session %s: %w", prefix, s.id, err)
	}
	return keys, nil
}

type queryer interface {
	Query(ctx context.Context, q string, args ...any) (pgx.Rows, error)
}

func queryKeys(ctx context.Context, db queryer, q string, args ...any) ([]string, error) {
	rows, err := db.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// Commit applies ops in one transaction, all or nothing. It fails with
// refine.ErrReadOnly on a view, and with refine.ErrLocked, applying
// nothing, if this writer's lease was taken over. After a dropped
// connection the commit fails and applies nothing; the next one runs on
// a new connection.
func (s *Store) Commit(ctx context.Context, ops ...refine.Op) error {
	if s.readOnly {
		return fmt.Errorf("postgres: commit to session %s: %w: opened for reading; open the session for writing to change it", s.id, refine.ErrReadOnly)
	}
	final, keys, err := sqlkv.Plan(ops)
	if err != nil {
		return fmt.Errorf("postgres: commit to session %s: %w", s.id, err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.usable(ctx, "commit"); err != nil {
		return err
	}
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	if err := pgx.BeginFunc(ctx, s.db.pool, func(tx pgx.Tx) error { return s.commit(ctx, tx, final, keys) }); err != nil {
		s.cache.Reset() // it may have been applied after all (a dropped COMMIT)
		return fmt.Errorf("postgres: commit to session %s: %w", s.id, err)
	}
	s.cache.Apply(final)
	return nil
}

func (s *Store) commit(ctx context.Context, tx pgx.Tx, final sqlkv.Final, keys []string) error {
	now := s.db.cfg.Now()
	// Fencing: the UPDATE locks the lease row, so no takeover can commit
	// before this transaction ends, and matches only while the lease is
	// still this writer's. A commit is proof of life: it renews the lease.
	tag, err := tx.Exec(ctx, `UPDATE refine_leases SET expires_at = $1 WHERE session_id = $2 AND token = $3`,
		nanos(now.Add(s.db.cfg.LeaseTTL)), s.id, s.token)
	if err != nil {
		return fmt.Errorf("check the lease: %w", err)
	}
	if tag.RowsAffected() != 1 {
		var holder string
		_ = tx.QueryRow(ctx, `SELECT holder FROM refine_leases WHERE session_id = $1`, s.id).Scan(&holder)
		return sqlkv.LostError("postgres", s.id, holder)
	}
	if err := sqlkv.CheckFolders(ctx, final, txLookup{tx, s.id}); err != nil {
		return err
	}
	batch := &pgx.Batch{}
	for _, k := range keys {
		if v := final[k]; v == nil {
			batch.Queue(`DELETE FROM refine_entries WHERE session_id = $1 AND key = $2`, s.id, k)
		} else {
			batch.Queue(`INSERT INTO refine_entries (session_id, key, value) VALUES ($1, $2, $3)
				ON CONFLICT (session_id, key) DO UPDATE SET value = EXCLUDED.value`, s.id, k, v)
		}
	}
	s.queueRowUpdate(batch, final, now)
	if err := tx.SendBatch(ctx, batch).Close(); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	if s.testHook != nil {
		return s.testHook(ctx, tx)
	}
	return nil
}

// queueRowUpdate keeps the session row's summary columns in step with its
// session.json; a session without one shows its last commit's time.
func (s *Store) queueRowUpdate(batch *pgx.Batch, final sqlkv.Final, now time.Time) {
	raw, touched := final[refine.SummaryKey]
	switch {
	case !touched:
		batch.Queue(`UPDATE refine_sessions SET updated_at = $1 WHERE id = $2 AND NOT has_summary`, nanos(now), s.id)
	case raw == nil:
		batch.Queue(`UPDATE refine_sessions SET has_summary = FALSE, updated_at = $1, round = 0, outcome = '', pending = 0, open_gaps = '{}', activity = '' WHERE id = $2`, nanos(now), s.id)
	default:
		c := sqlkv.SummaryColumns(s.id, raw, now)
		var created *int64 // NULL keeps the row's creation time
		if !c.Created.IsZero() {
			n := nanos(c.Created)
			created = &n
		}
		batch.Queue(`UPDATE refine_sessions SET has_summary = TRUE, created_at = COALESCE($1, created_at), updated_at = $2, round = $3, outcome = $4, pending = $5, open_gaps = $6, activity = $7 WHERE id = $8`,
			created, nanos(c.Updated), c.Round, c.Outcome, c.Pending, c.OpenGaps, c.Activity, s.id)
	}
}

// txLookup answers sqlkv.CheckFolders from inside the transaction.
type txLookup struct {
	tx pgx.Tx
	id string
}

func (l txLookup) Existing(ctx context.Context, keys []string) (map[string]bool, error) {
	found, err := queryKeys(ctx, l.tx, `SELECT key FROM refine_entries WHERE session_id = $1 AND key = ANY($2)`, l.id, keys)
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
	ends := make([]string, len(prefixes))
	for i, p := range prefixes {
		ends[i] = sqlkv.PrefixEnd(p)
	}
	return queryKeys(ctx, l.tx, `SELECT e.key FROM refine_entries e JOIN unnest($2::text[], $3::text[]) AS r (lo, hi)
		ON e.key >= r.lo COLLATE "C" AND e.key < r.hi COLLATE "C" WHERE e.session_id = $1 LIMIT $4`,
		l.id, prefixes, ends, limit)
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
				// A failed renewal (a dropped connection) is retried at the
				// next tick; a lease taken over meanwhile shows at the
				// next commit.
				ctx, cancel := context.WithTimeout(context.Background(), s.db.cfg.LeaseTTL/3)
				_, err := s.db.pool.Exec(ctx, `UPDATE refine_leases SET expires_at = $1 WHERE session_id = $2 AND token = $3`,
					nanos(s.db.cfg.Now().Add(s.db.cfg.LeaseTTL)), s.id, s.token)
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
		return fmt.Errorf("postgres: close session %s: release the lease: %w; it expires by itself", s.id, err)
	}
	return nil
}

func (s *Store) release() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := s.db.pool.Exec(ctx, `DELETE FROM refine_leases WHERE session_id = $1 AND token = $2`, s.id, s.token)
	return err
}
