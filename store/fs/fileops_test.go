package fs_test

import (
	"fmt"
	"testing"

	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/fs"
)

// TestCommitFileOps bounds the file operations (lookups, opens, creates,
// renames, removals, counted by the store) that a commit and its apply
// cost: each key's folder is opened once for the commit's checks and
// once for its apply, however many of the commit's keys it holds and
// however deep it is, and each put then costs four operations (a lookup
// before the commit, its temporary file, a lookup and a rename when
// applied), where resolving each key's path from the session folder cost
// two or three operations a path component, again for every key.
func TestCommitFileOps(t *testing.T) {
	const keys, depth = 10, 3
	// No idle work (spares made while idle), so that what is counted is the
	// commits' alone; the spares the commits' own swaps leave are used.
	s, err := fs.Open(t.TempDir(), fs.NoSync(), fs.WithIdleDelay(-1))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ops := make([]store.Op, keys)
	measure := func(what string, fn func() error) int64 {
		t.Helper()
		if err := fs.Flush(s); err != nil {
			t.Fatal(err)
		}
		before := fs.FileOps(s)
		if err := fn(); err != nil {
			t.Fatal(err)
		}
		if err := fs.Flush(s); err != nil {
			t.Fatal(err)
		}
		n := fs.FileOps(s) - before
		t.Logf("%s: %d file operations", what, n)
		return n
	}
	put := func(v string) func() error {
		return func() error {
			for i := range ops {
				ops[i] = store.Put(fmt.Sprintf("a/b/c/k%02d.md", i), []byte(v))
			}
			return s.Commit(t.Context(), ops...)
		}
	}
	// New folders: one failed open before the commit, then each
	// level opened (failing), created and opened when applied.
	if n, want := measure("a commit creating its folders", put("v1")), int64(1+3*depth+3*keys); n > want {
		t.Errorf("a commit of %d new keys %d folders deep: %d file operations, want at most %d", keys, depth, n, want)
	}
	// The second rewrite writes the spares the first one's swaps left.
	for _, v := range []string{"v1.1", "v2"} {
		if n, want := measure("a commit rewriting its keys", put(v)), int64(2*depth+4*keys); n > want {
			t.Errorf("a commit rewriting %d keys %d folders deep: %d file operations, want at most %d", keys, depth, n, want)
		}
	}
	if n, want := measure("a Get", func() error {
		b, err := s.Get(t.Context(), "a/b/c/k03.md")
		if string(b) != "v2" {
			return fmt.Errorf("Get = %q, %v; want v2", b, err)
		}
		return err
	}), int64(depth+2); n > want {
		t.Errorf("a Get %d folders deep: %d file operations, want at most %d", depth, n, want)
	}
	// Deleting every key: each looked up and removed, and each
	// emptied folder pruned once.
	del := func() error {
		for i := range ops {
			ops[i] = store.Delete(fmt.Sprintf("a/b/c/k%02d.md", i))
		}
		return s.Commit(t.Context(), ops...)
	}
	if n, want := measure("a commit deleting its keys", del), int64(depth+2*keys+depth); n > want {
		t.Errorf("a commit deleting %d keys %d folders deep: %d file operations, want at most %d", keys, depth, n, want)
	}
}

// TestSessionFileOps bounds the file operations a refine session makes
// on store/fs through Session.Run, per commit (its checks, its apply, and
// the engine's reads between commits). The applier does no idle work, so
// the idle work does not count: puts create their temporary files rather
// than rewrite spares, one operation either way. The count still varies a
// little from run to run: a Get of a key whose commit is not yet applied
// is answered from memory, without touching the files. Before the store kept folder handles, strace
// counted about 195 file system calls a commit for the same session (see
// docs/benchmarks.md, #30).
func TestSessionFileOps(t *testing.T) {
	s, err := fs.Open(t.TempDir(), fs.NoSync(), fs.WithIdleDelay(-1))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	before := fs.FileOps(s)
	runSession(t, s, 5)
	if err := fs.Flush(s); err != nil {
		t.Fatal(err)
	}
	commits := fs.Commits(s)
	n := fs.FileOps(s) - before
	perCommit := float64(n) / float64(commits)
	t.Logf("%d commits: %d file operations through the folder handles, %.1f a commit", commits, n, perCommit)
	if want := 60.0; perCommit > want {
		t.Errorf("%.1f file operations a commit, want at most %.0f", perCommit, want)
	}
}
