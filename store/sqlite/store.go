package sqlite

import (
	"context"
	"io"

	"github.com/refine-spec/refine/internal/sqlkv"
	"github.com/refine-spec/refine/store"
)

// Store is one session of a DB: its writer (from Create, CreateNamed or
// Session), which holds the session's lease until Close, or a read-only
// view (from View). It is safe for concurrent use.
type Store struct{ kv *sqlkv.Store }

var (
	_ store.Appender = (*Store)(nil)
	_ store.Copier   = (*Store)(nil)
	_ io.Closer      = (*Store)(nil)
)

// ID returns the session's ID.
func (s *Store) ID() string { return s.kv.ID() }

// Get returns the value at key, or an error wrapping store.ErrNotFound.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) { return s.kv.Get(ctx, key) }

// List returns the keys starting with prefix, sorted by byte order.
func (s *Store) List(ctx context.Context, prefix string) ([]string, error) {
	return s.kv.List(ctx, prefix)
}

// Commit applies ops in one transaction, all or nothing. It fails with
// store.ErrReadOnly on a view, and with store.ErrLocked, applying
// nothing, if this writer's lease was taken over.
func (s *Store) Commit(ctx context.Context, ops ...store.Op) error { return s.kv.Commit(ctx, ops...) }

// Appends reports true for a writer: Commit accepts store.OpAppend
// (store.Appender), which adds the bytes to the stored value inside the
// database, so a growing key is not sent whole again.
func (s *Store) Appends() bool { return s.kv.Appends() }

// Copies reports true for a writer: Commit accepts store.OpCopy
// (store.Copier), which copies the value inside the database.
func (s *Store) Copies() bool { return s.kv.Copies() }

// Close ends a writer's heartbeat and gives up its lease; on a view it
// only marks the Store closed. It is idempotent.
func (s *Store) Close() error { return s.kv.Close() }
