package main

import (
	"context"
	"path/filepath"
	"sync"

	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/fs"
)

// lazyStore is the cold store of run and resume (--cold-dir): a session
// needs it only when it ends with archives, so the folder is opened, and
// its lock taken, on first use, and held until the command ends. Sessions
// sharing one cold folder then only contend while one of them moves its
// archives.
type lazyStore struct {
	dir  string
	open func(dir string) (*fs.Store, error)

	mu  sync.Mutex
	st  *fs.Store
	err error
}

func (l *lazyStore) store() (*fs.Store, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.st == nil && l.err == nil {
		l.st, l.err = l.open(l.dir)
	}
	return l.st, l.err
}

func (l *lazyStore) Get(ctx context.Context, key string) ([]byte, error) {
	st, err := l.store()
	if err != nil {
		return nil, err
	}
	return st.Get(ctx, key)
}

func (l *lazyStore) List(ctx context.Context, prefix string) ([]string, error) {
	st, err := l.store()
	if err != nil {
		return nil, err
	}
	return st.List(ctx, prefix)
}

func (l *lazyStore) Commit(ctx context.Context, ops ...store.Op) error {
	st, err := l.store()
	if err != nil {
		return err
	}
	return st.Commit(ctx, ops...)
}

// Close closes the folder if it was opened.
func (l *lazyStore) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.st == nil {
		return nil
	}
	err := l.st.Close()
	l.st, l.err = nil, nil
	return err
}

// closeCold closes the cold store sessionConfig set up, if any.
func (f *sessionFlags) closeCold() {
	if f.cold != nil {
		_ = f.cold.Close()
	}
}

// absPath makes a folder flag absolute, so a session stores a path that
// still names the folder when resumed from elsewhere.
func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}
