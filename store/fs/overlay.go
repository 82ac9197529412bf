package fs

import (
	"sort"
	"strings"
)

// overlay holds what the commits that are durable but not yet applied
// (see applier.go) did to each key: its latest value, or its deletion.
// Reads consult it before the files, so a Store reads its own writes the
// moment Commit returns, while the files catch up in the background.
//
// An entry is dropped once the commit that last changed its key is in the
// files: an earlier commit's apply leaves a later commit's entry alone.
// Values share the memory of the commit's log record, which nothing
// changes, so an entry is never copied in, only out (Get hands out
// copies). The overlay is guarded by Store.mu: entries are added by
// Commit and dropped by the applier under the write lock, and read under
// the read lock, so a reader never sees a key dropped before its file is
// in place.
type overlay struct {
	keys  map[string]pending
	below map[string]int // folder path → number of keys in keys below it
}

// pending is a key's latest change in a commit not yet applied.
type pending struct {
	seq   uint64 // the commit that made it
	value []byte
	del   bool
}

// add records commit seq's changes, which replace any earlier pending
// change of the same keys.
func (o *overlay) add(seq uint64, changes []change) {
	if o.keys == nil {
		o.keys, o.below = map[string]pending{}, map[string]int{}
	}
	for _, c := range changes {
		if _, ok := o.keys[c.key]; !ok {
			forFolders(c.key, func(dir string) { o.below[dir]++ })
		}
		o.keys[c.key] = pending{seq: seq, value: c.value, del: c.del}
	}
}

// applied drops the entries that commit seq, now in the files, was the
// last to change.
func (o *overlay) applied(seq uint64, changes []change) {
	for _, c := range changes {
		if p, ok := o.keys[c.key]; ok && p.seq == seq {
			delete(o.keys, c.key)
			forFolders(c.key, func(dir string) {
				if o.below[dir]--; o.below[dir] == 0 {
					delete(o.below, dir)
				}
			})
		}
	}
}

// lookup returns key's pending change, if it has one. A nil overlay has
// none.
func (o *overlay) lookup(key string) (pending, bool) {
	if o == nil {
		return pending{}, false
	}
	p, ok := o.keys[key]
	return p, ok
}

// len returns the number of keys with a pending change.
func (o *overlay) len() int {
	if o == nil {
		return 0
	}
	return len(o.keys)
}

// entangles reports whether a put in changes has a pending key above it
// (a folder of it that is pending as a key) or below it. The files then
// do not show the layout the commit must be checked against (a key about
// to become a folder, or a folder about to be emptied), and the commit
// waits for the files to catch up. A pending change of the key itself is
// not entangled, checkLayout knows what it leaves; and once a pending put
// of the key is applied nothing is below it (a later commit putting
// something there would have deleted the key).
func (o *overlay) entangles(changes []change) bool {
	if o.len() == 0 {
		return false
	}
	for _, c := range changes {
		if c.del {
			continue
		}
		if p, ok := o.keys[c.key]; !(ok && !p.del) && o.below[c.key] > 0 {
			return true
		}
		above := false
		forFolders(c.key, func(dir string) {
			_, ok := o.keys[dir]
			above = above || ok
		})
		if above {
			return true
		}
	}
	return false
}

// merge returns the keys under prefix once the pending changes are in the
// files: those the files hold (disk), less the pending deletions, plus the
// pending puts, sorted.
func (o *overlay) merge(prefix string, disk []string) []string {
	if o.len() == 0 {
		return disk
	}
	set := make(map[string]bool, len(disk)+len(o.keys))
	for _, k := range disk {
		set[k] = true
	}
	for k, p := range o.keys {
		if strings.HasPrefix(k, prefix) {
			set[k] = !p.del
		}
	}
	keys := make([]string, 0, len(set))
	for k, present := range set {
		if present {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// forFolders calls fn with each folder above key, outermost first:
// "a/b/c" gives "a", "a/b".
func forFolders(key string, fn func(dir string)) {
	for i := strings.IndexByte(key, '/'); i >= 0; i = nextSlash(key, i) {
		fn(key[:i])
	}
}
