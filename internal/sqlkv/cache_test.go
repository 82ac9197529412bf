package sqlkv

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCacheIgnoresReadsOlderThanACommit(t *testing.T) {
	c := NewCache()
	gen := c.Gen()                              // a reader starts a database read...
	c.Apply(Final{"a": {Value: []byte("new")}}) // ...a commit lands meanwhile...
	c.Fill(gen, "a", []byte("old"))             // ...and the reader's old value comes back
	if v, found, known := c.Get("a"); !known || !found || string(v) != "new" {
		t.Errorf("Get(a) = %q, %v, %v; want new (the stale read must not win)", v, found, known)
	}
	c.FillKeys(gen, []string{"stale"})
	if _, ok := c.List(""); ok {
		t.Error("a key list read before a commit was kept")
	}
}

func TestCacheKeysFollowCommits(t *testing.T) {
	c := NewCache()
	c.FillKeys(c.Gen(), []string{"a/1", "b", "c"})
	c.Apply(Final{"a/0": {Value: []byte("x")}, "b": {Deleted: true}, "d": {Value: []byte{}}})
	got, ok := c.List("")
	if diff := cmp.Diff([]string{"a/0", "a/1", "c", "d"}, got); !ok || diff != "" {
		t.Errorf("List after a commit (-want +got):\n%s", diff)
	}
	if got, _ := c.List("a/"); !cmp.Equal(got, []string{"a/0", "a/1"}) {
		t.Errorf("List(a/) = %q", got)
	}
	if _, found, known := c.Get("zz"); !known || found {
		t.Errorf("Get of a key outside the known list: found %v known %v; want known absent", found, known)
	}
	if v, found, known := c.Get("d"); !known || !found || v == nil || len(v) != 0 {
		t.Errorf("Get(d) = %q, %v, %v; want an empty value", v, found, known)
	}
	v, _, _ := c.Get("a/0")
	v[0] = 'Z'
	if again, _, _ := c.Get("a/0"); string(again) != "x" {
		t.Errorf("mutating a returned value changed the cache: %q", again)
	}
	c.Reset()
	if _, _, known := c.Get("a/0"); known {
		t.Error("Reset kept a value")
	}
}
