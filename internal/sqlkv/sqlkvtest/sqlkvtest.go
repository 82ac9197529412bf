// Package sqlkvtest holds the tests and benchmarks that store/sqlite and
// store/postgres share: the same lease, fencing and heartbeat behaviour,
// and the same listing and commit benchmarks, run by each package on its
// own database.
package sqlkvtest

import (
	"io"
	"sync"
	"testing"
	"time"

	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/storetest"
)

// Clock is a settable test clock.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a Clock at a fixed time.
func NewClock() *Clock { return &Clock{t: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

// Add moves the clock on by d.
func (c *Clock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// MustCommit commits ops to st or fails the test.
func MustCommit(t testing.TB, st store.Store, ops ...store.Op) {
	t.Helper()
	if err := st.Commit(t.Context(), ops...); err != nil {
		t.Fatal(err)
	}
}

// MustGet returns the value at key or fails the test.
func MustGet(t testing.TB, st store.Store, key string) string {
	t.Helper()
	b, err := st.Get(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Options are the Config fields the shared tests set.
type Options struct {
	Holder    string
	LeaseTTL  time.Duration
	Heartbeat time.Duration
	Now       func() time.Time
}

// Opener opens one more handle on the database under test, as another
// process would, closed when the test ends.
type Opener func(t testing.TB, o Options) store.Backend

// Stores runs storetest.TestStore on sessions that b creates.
func Stores(t *testing.T, b store.Backend) {
	storetest.TestStore(t, func(t *testing.T) store.Store {
		_, st, err := b.Create(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.(io.Closer).Close() })
		return st
	})
}
