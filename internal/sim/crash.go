package sim

import (
	"context"
	"fmt"
	"sync"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/storetest"
)

// crashStore wraps a branch's Store: it counts the commits that succeed
// and, once armed, fails the chosen one as a crash would — that commit
// and every later one (the process is dead) fail with an error wrapping
// storetest.ErrInjected, and nothing of them is applied. It forwards the
// Appender and Copier capabilities of the Store it wraps.
type crashStore struct {
	refine.Store
	mu      sync.Mutex
	commits int
	failAt  int
	crashed bool
}

func (c *crashStore) Commit(ctx context.Context, ops ...store.Op) error {
	c.mu.Lock()
	if c.crashed || (c.failAt > 0 && c.commits+1 == c.failAt) {
		c.crashed = true
		c.mu.Unlock()
		return fmt.Errorf("sim: crash at commit %d: %w", c.failAt, storetest.ErrInjected)
	}
	c.mu.Unlock()
	if err := c.Store.Commit(ctx, ops...); err != nil {
		return err
	}
	c.mu.Lock()
	c.commits++
	c.mu.Unlock()
	return nil
}

// Appends forwards the wrapped Store's store.Appender capability.
func (c *crashStore) Appends() bool {
	a, ok := c.Store.(store.Appender)
	return ok && a.Appends()
}

// Copies forwards the wrapped Store's store.Copier capability.
func (c *crashStore) Copies() bool {
	k, ok := c.Store.(store.Copier)
	return ok && k.Copies()
}

func (c *crashStore) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.commits
}
