package fs

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/store"
)

// TestReplace overwrites keys, and a planted link, both by swapping files
// and by the rename fallback: the key always ends up holding the new value
// and the old one leaves nothing behind.
func TestReplace(t *testing.T) {
	for _, swap := range []bool{true, false} {
		name := "rename"
		if swap {
			name = "exchange"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s := mustOpen(t, dir)
			defer s.Close()
			s.noExchange.Store(!swap)
			ctx := context.Background()
			if err := commitApplied(s, store.Put("a.md", []byte("1")), store.Put("d/b.md", []byte("1"))); err != nil {
				t.Fatal(err)
			}
			if runtime.GOOS != "windows" {
				if err := os.Symlink("a.md", filepath.Join(dir, "link.md")); err != nil {
					t.Fatal(err)
				}
			}
			ops := []store.Op{store.Put("a.md", []byte("2")), store.Put("d/b.md", []byte("2")), store.Put("link.md", []byte("2"))}
			if err := commitApplied(s, ops...); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"a.md": "2", "d/b.md": "2", "link.md": "2"}
			if diff := cmp.Diff(want, readKeys(t, s)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if fi, err := os.Lstat(filepath.Join(dir, "link.md")); err != nil || !fi.Mode().IsRegular() {
				t.Errorf("link.md after a put: %v, %v; want the link replaced by a file", fi, err)
			}
			// Swapped-out old values stay as spares (the link does not) until
			// Close; renamed-over ones are gone at once.
			records, spares := 0, 0
			for _, name := range logFiles(t, dir) {
				switch {
				case name == logName:
					records++
				case strings.HasSuffix(name, tempSuffix):
					spares++
				default:
					t.Errorf("log folder holds %q", name)
				}
			}
			wantSpares := 0
			if swap && !s.noExchange.Load() {
				wantSpares = 2
			}
			if records != 1 || spares != wantSpares {
				t.Errorf("log folder: %d log files, %d spares; want 1 and %d", records, spares, wantSpares)
			}
			// The spares are rewritten by the next commit, not created anew.
			commitVals := []store.Op{store.Put("a.md", []byte("3")), store.Put("d/b.md", []byte("3"))}
			if err := s.Commit(ctx, commitVals...); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(map[string]string{"a.md": "3", "d/b.md": "3", "link.md": "2"}, readKeys(t, s)); diff != "" {
				t.Errorf("after reusing spares (-want +got):\n%s", diff)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if got := logFiles(t, dir); !slices.Equal(got, []string{logName}) {
				t.Errorf("log folder after Close = %q, want only the log file (no old values left)", got)
			}
			if swap && runtime.GOOS == "linux" && (runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64") && s.noExchange.Load() {
				t.Error("renameat2(RENAME_EXCHANGE) failed on this Linux file system; puts fell back to rename")
			}
		})
	}
}

// TestSpareHardLink plants a hard link at a key to a file outside the
// folder: the put that swaps it out must not keep it as a spare that a
// later put would write through.
func TestSpareHardLink(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("hard links")
	}
	outside := filepath.Join(t.TempDir(), "precious.txt")
	if err := os.WriteFile(outside, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s := mustOpen(t, dir)
	defer s.Close()
	if err := os.Link(outside, filepath.Join(dir, "a.md")); err != nil {
		t.Skip(err)
	}
	for i := range 4 {
		if err := commitApplied(s, store.Put("a.md", []byte{'0' + byte(i)}), store.Put("b.md", []byte("b"))); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(outside); string(b) != "keep me" {
		t.Errorf("a put wrote through a planted hard link: %q", b)
	}
}
