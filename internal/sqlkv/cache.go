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
	cv, found, known := c.lookup(key)
	if !found {
		return nil, false, known
	}
	return append([]byte{}, cv...), true, true
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

// Apply records a commit the database confirmed. An entry that starts
// from a value before the commit (an append, a copy) is worked out from
// the cached value; when that is not cached, the entry's value is
// forgotten and read again when needed.
func (c *Cache) Apply(final Final) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	type result struct {
		key   string
		v     []byte // nil: deleted
		known bool
	}
	// Entries read the values from before the commit: work them all out
	// before changing any.
	results := make([]result, 0, len(final))
	for k, e := range final {
		r := result{key: k, known: true}
		switch {
		case e.Deleted:
		case e.Base == "":
			r.v = e.Value // Final's values are already private copies
		default:
			base, found, known := c.lookup(e.Base)
			switch {
			case !known:
				r.known = false
			case !found:
				r.v = concat(nil, e.Value)
			default:
				r.v = concat(base, e.Value)
			}
		}
		results = append(results, r)
	}
	for _, r := range results {
		if r.known {
			c.set(r.key, r.v)
		} else {
			c.bytes -= len(c.vals[r.key])
			delete(c.vals, r.key)
		}
		if !c.haveKs {
			continue
		}
		i, found := slices.BinarySearch(c.keys, r.key)
		exists := !r.known || r.v != nil
		switch {
		case !exists && found:
			c.keys = slices.Delete(c.keys, i, i+1)
		case exists && !found:
			c.keys = slices.Insert(c.keys, i, r.key)
		}
	}
}

// Has reports whether key is stored; known is false when the cache
// cannot tell.
func (c *Cache) Has(key string) (found, known bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cv, ok := c.vals[key]; ok {
		return cv != nil, true
	}
	if c.haveKs {
		_, found = slices.BinarySearch(c.keys, key)
		return found, true
	}
	return false, false
}

// lookup is Get without the copy; c.mu must be held.
func (c *Cache) lookup(key string) (v []byte, found, known bool) {
	if cv, ok := c.vals[key]; ok {
		return cv, cv != nil, true
	}
	if c.haveKs {
		if _, ok := slices.BinarySearch(c.keys, key); !ok {
			return nil, false, true
		}
	}
	return nil, false, false
}

// Reset forgets everything, after a commit whose outcome is unknown.
func (c *Cache) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.vals, c.bytes, c.keys, c.haveKs = map[string][]byte{}, 0, nil, false
}
