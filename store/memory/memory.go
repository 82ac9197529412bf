// Package memory is an in-memory store.Store, for tests and for sessions
// that need not outlive the process.
//
// It follows the same rules as the filesystem store, so code tested against
// it behaves the same on disk: keys are checked with store.ValidKey (which
// also refuses the ".refine" names stores keep for their own files) and
// List prefixes with store.ValidPrefix, a key cannot also be a folder of
// other keys ("a" and "a/b"), values are copied in and out, and a commit is
// applied all-or-nothing under a lock, so a concurrent reader sees every op
// of a commit or none.
package memory

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/refine-spec/refine/store"
)

// Store is an in-memory store.Store. The zero value is not usable; call New.
// A Store is safe for concurrent use.
type Store struct {
	mu sync.RWMutex
	m  map[string][]byte
}

var _ store.Store = (*Store)(nil)

// New returns an empty Store.
func New() *Store {
	return &Store{m: make(map[string][]byte)}
}

// Copies reports true: Commit accepts OpCopy (store.Copier).
func (s *Store) Copies() bool { return true }

// Appends reports true: Commit accepts OpAppend (store.Appender).
func (s *Store) Appends() bool { return true }

// Get returns a copy of the value at key, or an error wrapping
// store.ErrNotFound.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("memory: get %s: %w", key, err)
	}
	if err := store.ValidKey(key); err != nil {
		return nil, fmt.Errorf("memory: get: %w", err)
	}
	s.mu.RLock()
	v, ok := s.m[key]
	s.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("memory: get %s: %w", key, store.ErrNotFound)
	}
	// Stored values are never mutated, only replaced, so copying outside
	// the lock is safe.
	return clone(v), nil
}

// List returns the keys starting with prefix, sorted. The prefix must be
// empty, a valid key, or a valid key followed by '/'.
func (s *Store) List(ctx context.Context, prefix string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("memory: list %s: %w", prefix, err)
	}
	if err := store.ValidPrefix(prefix); err != nil {
		return nil, fmt.Errorf("memory: %w", err)
	}
	s.mu.RLock()
	var keys []string
	for k := range s.m {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	s.mu.RUnlock()
	sort.Strings(keys)
	return keys, nil
}

// Commit applies ops in order, all or nothing. It fails with an error
// wrapping store.ErrInvalidKey, applying nothing, if any key is invalid or
// if the commit would leave a key that is also a folder of another key.
func (s *Store) Commit(ctx context.Context, ops ...store.Op) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memory: commit: %w", err)
	}
	if err := store.ValidStoreOps(ops, true, true); err != nil {
		return fmt.Errorf("memory: commit: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// Ops apply in order; nil means deleted.
	final := make(map[string][]byte, len(ops))
	for _, op := range ops {
		switch op.Kind {
		case store.OpDelete:
			final[op.Key] = nil
			continue
		case store.OpAppend:
			base, staged := final[op.Key]
			if !staged {
				base = s.m[op.Key]
			}
			v := make([]byte, 0, len(base)+len(op.Value))
			final[op.Key] = append(append(v, base...), op.Value...)
			continue
		case store.OpCopy:
			v, staged := final[op.From]
			if !staged {
				v = s.m[op.From]
			}
			if v == nil {
				return fmt.Errorf("memory: commit: copy %s to %s: %w", op.From, op.Key, store.ErrNotFound)
			}
			final[op.Key] = v // values are never changed in place: share it
			continue
		}
		v := clone(op.Value)
		if v == nil {
			v = []byte{} // distinguishes an empty value from a delete
		}
		final[op.Key] = v
	}
	if err := s.checkFolders(final); err != nil {
		return err
	}
	for k, v := range final {
		if v == nil {
			delete(s.m, k)
		} else {
			s.m[k] = v
		}
	}
	return nil
}

// checkFolders rejects a commit that would leave a key with another key
// below it, as a filesystem cannot hold both a file "a" and a folder "a".
// Only pairs involving a put can be new conflicts. s.mu must be held.
func (s *Store) checkFolders(final map[string][]byte) error {
	exists := func(k string) bool {
		if v, ok := final[k]; ok {
			return v != nil
		}
		_, ok := s.m[k]
		return ok
	}
	isPut := func(k string) bool { return final[k] != nil }
	check := func(k string) error {
		for i := strings.LastIndexByte(k, '/'); i > 0; i = strings.LastIndexByte(k[:i], '/') {
			parent := k[:i]
			switch {
			case !exists(parent):
			case isPut(k):
				return fmt.Errorf("memory: commit %s: %w: %q is a key, so nothing can be stored below it; delete it in the same commit to turn it into a folder",
					k, store.ErrInvalidKey, parent)
			case isPut(parent):
				return fmt.Errorf("memory: commit %s: %w: %q is stored below it, so it is a folder; delete the keys below it in the same commit to turn it into a key",
					parent, store.ErrInvalidKey, k)
			}
		}
		return nil
	}
	anyPut := false
	for k, v := range final {
		if v == nil {
			continue
		}
		anyPut = true
		if err := check(k); err != nil {
			return err
		}
	}
	if !anyPut {
		return nil // deletes cannot create a conflict
	}
	for k := range s.m {
		if _, ok := final[k]; ok {
			continue // already checked above, or deleted
		}
		if err := check(k); err != nil {
			return err
		}
	}
	return nil
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}
