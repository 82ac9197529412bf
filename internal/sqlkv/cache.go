package sqlkv

import (
	"slices"
	"sort"
	"strings"
	"sync"
)

// maxCacheBytes bounds the values a Cache keeps; past it the values are
// dropped (the key list stays) and read again as needed.
const maxCacheBytes = 32 << 20

// Cache keeps a session writer's view of its own session in memory, so
// that reads do not cost a database round trip. It is sound only for the
// lease holder: no one else commits to the session while the lease is
// held, and a writer whose lease is taken over can no longer commit, so
// what it read or wrote stays what the database holds. Views have none.
//
// Commits bump a generation; a read that went to the database fills the
// cache only if no commit happened meanwhile, so an old value never
// overwrites a newer one. After a commit whose outcome is unknown (an
// error, possibly after the database applied it) the owner calls Reset.
type Cache struct {
	mu     sync.Mutex
	gen    uint64
	vals   map[string][]byte // nil value: known absent
	bytes  int
	keys   []string // sorted; valid when haveKeys
	haveKs bool
}

// NewCache returns an empty Cache.
func NewCache() *Cache { return &Cache{vals: map[string][]byte{}} }

// Gen returns the generation to pass to Fill and FillKeys.
func (c *Cache) Gen() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// Get returns a copy of key's value; known is false when the cache cannot
// tell, found false when the key is known to be absent.
func (c *Cache) Get(key string) (v []byte, found, known bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cv, ok := c.vals[key]; ok {
		if cv == nil {
			return nil, false, true
		}
		return append([]byte{}, cv...), true, true
	}
	if c.haveKs {
		if _, ok := slices.BinarySearch(c.keys, key); !ok {
			return nil, false, true
		}
	}
	return nil, false, false
}

// Fill records what a database read at generation gen found (v nil:
// absent).
func (c *Cache) Fill(gen uint64, key string, v []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if v != nil {
		v = append([]byte{}, v...)
	}
	c.set(key, v)
}

func (c *Cache) set(key string, v []byte) {
	c.bytes -= len(c.vals[key])
	if len(v) > maxCacheBytes/4 {
		delete(c.vals, key) // too big to keep; read it when needed
		return
	}
	c.vals[key] = v
	c.bytes += len(v)
	if c.bytes > maxCacheBytes {
		c.vals, c.bytes = map[string][]byte{}, 0
	}
}

// List returns the keys starting with prefix, if the key list is known.
func (c *Cache) List(prefix string) ([]string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.haveKs {
		return nil, false
	}
	i := sort.SearchStrings(c.keys, prefix)
	var out []string
	for ; i < len(c.keys) && strings.HasPrefix(c.keys[i], prefix); i++ {
		out = append(out, c.keys[i])
	}
	return out, true
}

// FillKeys records the session's whole key list, sorted, as read at
// generation gen.
func (c *Cache) FillKeys(gen uint64, keys []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	c.keys, c.haveKs = slices.Clone(keys), true
}

// Apply records a commit the database confirmed.
func (c *Cache) Apply(final Final) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for k, v := range final {
		c.set(k, v) // Final's values are already private copies
		if !c.haveKs {
			continue
		}
		i, found := slices.BinarySearch(c.keys, k)
		switch {
		case v == nil && found:
			c.keys = slices.Delete(c.keys, i, i+1)
		case v != nil && !found:
			c.keys = slices.Insert(c.keys, i, k)
		}
	}
}

// Reset forgets everything, after a commit whose outcome is unknown.
func (c *Cache) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.vals, c.bytes, c.keys, c.haveKs = map[string][]byte{}, 0, nil, false
}
