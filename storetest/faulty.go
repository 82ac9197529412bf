package storetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/refine-spec/refine/store"
)

// ErrInjected is the error a Faulty returns from the call it was told to
// fail. Match it with errors.Is.
var ErrInjected = errors.New("storetest: injected fault")

// Faulty wraps a Store and fails one chosen call with an error wrapping
// ErrInjected. The failing call is not passed to the wrapped Store, so
// nothing of it is applied: use Faulty to prove that code built on a Store
// leaves the previous state intact when a commit fails.
//
// Calls are numbered from 1. By default only Commit calls are counted, so
// FailAt: 3 fails the third Commit; with CountAll, Get and List calls are
// counted too, so FailAt: 3 fails the third call of any kind. FailAt 0
// never fails. Every call after the failing one goes through again.
//
// Use a Faulty by pointer and do not copy it after first use; it is safe
// for concurrent use if the wrapped Store is.
type Faulty struct {
	// Store is the wrapped Store.
	Store store.Store
	// FailAt is the number of the counted call that fails; 0 for none.
	FailAt int
	// CountAll counts every call, not only Commit.
	CountAll bool

	mu    sync.Mutex
	calls int
}

// Get returns the wrapped Store's value, or ErrInjected if this call is the
// one to fail.
func (f *Faulty) Get(ctx context.Context, key string) ([]byte, error) {
	if err := f.fault("get", f.CountAll); err != nil {
		return nil, err
	}
	return f.Store.Get(ctx, key)
}

// List returns the wrapped Store's keys, or ErrInjected if this call is the
// one to fail.
func (f *Faulty) List(ctx context.Context, prefix string) ([]string, error) {
	if err := f.fault("list", f.CountAll); err != nil {
		return nil, err
	}
	return f.Store.List(ctx, prefix)
}

// Commit commits to the wrapped Store, or returns ErrInjected without
// applying anything if this call is the one to fail.
func (f *Faulty) Commit(ctx context.Context, ops ...store.Op) error {
	if err := f.fault("commit", true); err != nil {
		return err
	}
	return f.Store.Commit(ctx, ops...)
}

// Appends forwards the wrapped Store's store.Appender capability.
func (f *Faulty) Appends() bool {
	a, ok := f.Store.(store.Appender)
	return ok && a.Appends()
}

// Copies forwards the wrapped Store's store.Copier capability.
func (f *Faulty) Copies() bool {
	c, ok := f.Store.(store.Copier)
	return ok && c.Copies()
}

// Close closes the wrapped Store if it is an io.Closer; otherwise it
// does nothing. It is never failed.
func (f *Faulty) Close() error {
	if c, ok := f.Store.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Calls returns how many calls have been counted so far.
func (f *Faulty) Calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func (f *Faulty) fault(op string, counted bool) error {
	if !counted {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.calls != f.FailAt {
		return nil
	}
	return fmt.Errorf("storetest: %s (counted call %d): %w", op, f.calls, ErrInjected)
}
