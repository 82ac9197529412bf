package fs_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/fs"
)

// A snapshot reads a folder as its log says and writes nothing to it: a
// file the log holds another value for is read from the log, not
// rewritten; it holds writers off while open and is refused while one
// holds the folder.
func TestOpenSnapshotReadsTheLogAndWritesNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx, store.Put("a.md", []byte("from the log")), store.Put("b/c.md", []byte("c"))); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// The clean Close left the commit in the log; the file is changed
	// behind the store's back (planted, or damaged by the disk).
	if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte("planted, and much longer than the logged value"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := tree(t, dir)
	snap, err := fs.OpenSnapshot(dir)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := snap.Get(ctx, "a.md"); err != nil || string(b) != "from the log" {
		t.Errorf("Get a.md = %q, %v; want the log's value", b, err)
	}
	if n, err := snap.Size(ctx, "a.md"); err != nil || n != int64(len("from the log")) {
		t.Errorf("Size a.md = %d, %v; want the log's value's", n, err)
	}
	if keys, err := snap.List(ctx, ""); err != nil || !cmp.Equal(keys, []string{"a.md", "b/c.md"}) {
		t.Errorf("List = %v, %v", keys, err)
	}
	if err := snap.Commit(ctx, store.Put("x", nil)); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("Commit on a snapshot: %v, want ErrReadOnly", err)
	}
	if _, err := fs.Open(dir); !errors.Is(err, store.ErrLocked) {
		t.Errorf("Open while a snapshot is open: %v, want ErrLocked", err)
	}
	if err := snap.Close(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, tree(t, dir)); diff != "" {
		t.Errorf("the snapshot changed the folder (-before +after):\n%s", diff)
	}

	w, err = fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fs.OpenSnapshot(dir); !errors.Is(err, store.ErrLocked) {
		t.Errorf("OpenSnapshot while a writer holds the folder: %v, want ErrLocked", err)
	}
	w.Close()

	// A folder no writer ever opened gets neither a lock file nor a log.
	plain := t.TempDir()
	if err := os.WriteFile(filepath.Join(plain, "state.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	before = tree(t, plain)
	snap, err = fs.OpenSnapshot(plain)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := snap.Get(ctx, "state.json"); err != nil || string(b) != "{}" {
		t.Errorf("Get state.json = %q, %v", b, err)
	}
	snap.Close()
	if diff := cmp.Diff(before, tree(t, plain)); diff != "" {
		t.Errorf("the snapshot changed a folder without a log (-before +after):\n%s", diff)
	}
}
