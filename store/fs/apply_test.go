package fs

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine"
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
			if err := s.Commit(ctx, refine.Put("a.md", []byte("1")), refine.Put("d/b.md", []byte("1"))); err != nil {
				t.Fatal(err)
			}
			if runtime.GOOS != "windows" {
				if err := os.Symlink("a.md", filepath.Join(dir, "link.md")); err != nil {
					t.Fatal(err)
				}
			}
			ops := []refine.Op{refine.Put("a.md", []byte("2")), refine.Put("d/b.md", []byte("2")), refine.Put("link.md", []byte("2"))}
			if err := s.Commit(ctx, ops...); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"a.md": "2", "d/b.md": "2", "link.md": "2"}
			if diff := cmp.Diff(want, readKeys(t, s)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if fi, err := os.Lstat(filepath.Join(dir, "link.md")); err != nil || !fi.Mode().IsRegular() {
				t.Errorf("link.md after a put: %v, %v; want the link replaced by a file", fi, err)
			}
			if got := logFiles(t, dir); !slices.Equal(got, []string{recordName(1), recordName(2)}) {
				t.Errorf("log folder = %q, want only the two records (no old values left)", got)
			}
			if swap && runtime.GOOS == "linux" && (runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64") && s.noExchange.Load() {
				t.Error("renameat2(RENAME_EXCHANGE) failed on this Linux file system; puts fell back to rename")
			}
		})
	}
}
