package refine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/fs"
	"github.com/refine-spec/refine/store/memory"
)

// damagedSessions returns two long sessions in memory: one that ended
// (state.json is the newest snapshot, older ones are kept for backups)
// and one whose process died just after a background snapshot completed
// (a snapshot under snapshots/ is the newest, state.json older).
func damagedSessions(t *testing.T) map[string]*memory.Store {
	t.Helper()
	ctx := context.Background()
	out := map[string]*memory.Store{}

	ended := memory.New()
	s, err := refine.New(ctx, longSession(t, &commitLog{Store: ended}))
	if err != nil {
		t.Fatal(err)
	}
	if o, err := s.Run(ctx); err != nil || o.Status != refine.StatusComplete {
		t.Fatalf("Run = %+v, %v", o, err)
	}
	out["ended"] = ended

	died := memory.New()
	completed := false
	log := &commitLog{Store: died, crashAt: func(ops []store.Op) bool {
		if completed {
			return true
		}
		var chunk, drop bool
		for _, op := range ops {
			chunk = chunk || op.Kind == store.OpAppend && strings.HasPrefix(op.Key, "snapshots/")
			drop = drop || op.Kind == store.OpDelete && strings.HasPrefix(op.Key, "journal/")
		}
		completed = chunk && drop // the last chunk drops the records it holds
		return false
	}}
	s, err = refine.New(ctx, longSession(t, log))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(ctx); !errors.Is(err, errCrashed) {
		t.Fatalf("Run = %v, want the crash after a background snapshot", err)
	}
	out["died after a snapshot"] = died
	return out
}

// flipOffsets returns the offsets of a file of n bytes to flip a bit at:
// all of its first 80 (the checksum header and the first members), then
// about 60 spread over the rest, and the last 3.
func flipOffsets(n int) []int {
	var offs []int
	for i := 0; i < n && i < 80; i++ {
		offs = append(offs, i)
	}
	for i := 80; i < n-3; i += max(1, (n-83)/60) {
		offs = append(offs, i)
	}
	for i := max(80, n-3); i < n; i++ {
		offs = append(offs, i)
	}
	return offs
}

// stateFiles are the keys of the whole state documents in st: state.json
// and the snapshots.
func stateFiles(t *testing.T, st refine.Store) []string {
	t.Helper()
	keys, err := st.List(context.Background(), "snapshots/")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"state.json"}, keys...)
}

// A flipped bit, or garbage, in state.json, a snapshot or a journal
// record is refused as corrupt, naming the file, or changes nothing the
// session reads: it never makes a reader start from an older snapshot and
// report an older state (issue #24: 8 of 30 flips of state.json did), nor
// applies a damaged record.
func TestDamagedStateNeverRollsBack(t *testing.T) {
	ctx := context.Background()
	for name, mem := range damagedSessions(t) {
		want, err := refine.Inspect(ctx, mem)
		if err != nil {
			t.Fatal(err)
		}
		files := stateFiles(t, mem)
		if name == "died after a snapshot" && len(files) < 2 {
			t.Fatalf("%s: no snapshot under snapshots/: %v", name, files)
		}
		check := func(t *testing.T, what, key string, got refine.Status, err error) {
			t.Helper()
			switch {
			case err != nil && !errors.Is(err, refine.ErrCorrupt):
				t.Errorf("%s: %v, want ErrCorrupt", what, err)
			case err != nil && !strings.Contains(err.Error(), key):
				t.Errorf("%s: the error does not name %s: %v", what, key, err)
			case err == nil:
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s: read a different state (-want +got):\n%s", what, diff)
				}
			}
		}
		t.Run(name+"/memory", func(t *testing.T) {
			segments, err := mem.List(ctx, "journal/")
			if err != nil || len(segments) == 0 {
				t.Fatalf("no journal segments: %v", err)
			}
			// The journal's records carry a checksum too: the last segment
			// (the records a reader applies) is flipped as well.
			for _, key := range append(slices.Clone(files), segments[len(segments)-1]) {
				orig, err := mem.Get(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				damaged := map[string][]byte{"garbage": []byte("garbage\n"), "empty": {}}
				for _, i := range flipOffsets(len(orig)) {
					b := []byte(string(orig))
					b[i] ^= 1 << (i % 8)
					damaged[fmt.Sprintf("bit %d of byte %d", i%8, i)] = b
				}
				for what, b := range damaged {
					if err := mem.Commit(ctx, store.Put(key, b)); err != nil {
						t.Fatal(err)
					}
					got, err := refine.Inspect(ctx, mem)
					check(t, key+": "+what, key, got, err)
				}
				if err := mem.Commit(ctx, store.Put(key, orig)); err != nil {
					t.Fatal(err)
				}
			}
		})
		t.Run(name+"/folder", func(t *testing.T) {
			dir := t.TempDir()
			keys, _ := mem.List(ctx, "")
			for _, k := range keys {
				b, _ := mem.Get(ctx, k)
				p := filepath.Join(dir, filepath.FromSlash(k))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			inspect := func() (refine.Status, error) {
				st, err := fs.OpenReadOnly(dir)
				if err != nil {
					t.Fatal(err)
				}
				defer st.Close()
				return refine.Inspect(ctx, st)
			}
			if got, err := inspect(); err != nil || !cmp.Equal(want, got) {
				t.Fatalf("the folder copy reads differently: %v", err)
			}
			for _, key := range files {
				p := filepath.Join(dir, filepath.FromSlash(key))
				orig, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				offs := []int{-1}
				for n, i := range flipOffsets(len(orig)) {
					if n%4 == 0 {
						offs = append(offs, i)
					}
				}
				for _, i := range offs {
					b := []byte("garbage\n") // `echo garbage > state.json`
					if i >= 0 {
						b = []byte(string(orig))
						b[i] ^= 1 << (i % 8)
					}
					if err := os.WriteFile(p, b, 0o644); err != nil {
						t.Fatal(err)
					}
					got, err := inspect()
					check(t, fmt.Sprintf("%s: byte %d flipped (-1: garbage)", key, i), key, got, err)
				}
				if err := os.WriteFile(p, orig, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
