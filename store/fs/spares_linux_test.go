//go:build linux

package fs

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/refine-spec/refine/store"
)

// TestIdleMakesSpares: once idle, the applier creates spareTarget empty
// spares; a later put to a new key is written into one of them (the key's
// file is a spare's inode), and Close removes the rest.
func TestIdleMakesSpares(t *testing.T) {
	if !recycles {
		t.Skip("spares exist only where files can be exchanged (Linux)")
	}
	dir := t.TempDir()
	ready := make(chan struct{}, 1)
	s := mustOpen(t, dir, withIdleDelay(0), withHook(func(p string) error {
		if p == "spares ready" {
			select {
			case ready <- struct{}{}:
			default:
			}
		}
		return nil
	}))
	if err := commitApplied(s, store.Put("state.json", []byte("1"))); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ready:
	case <-time.After(time.Minute): // a failsafe, not synchronisation
		t.Fatal("no spares made once the applier was idle")
	}
	spares := map[uint64]bool{}
	for _, name := range logFiles(t, dir) {
		if !strings.HasPrefix(name, "spare-") {
			continue
		}
		fi, err := os.Stat(filepath.Join(dir, walName, name))
		if err != nil {
			t.Fatal(err) // nothing else runs: the applier is idle
		}
		if fi.Size() != 0 || fi.Mode().Perm() != 0o600 {
			t.Errorf("spare %s: size %d, mode %v; want an empty 0600 file", name, fi.Size(), fi.Mode().Perm())
		}
		spares[fi.Sys().(*syscall.Stat_t).Ino] = true
	}
	if len(spares) != spareTarget {
		t.Fatalf("%d spares once idle, want %d (log folder %q)", len(spares), spareTarget, logFiles(t, dir))
	}
	if err := commitApplied(s, store.Put("round_001/engineer.md", []byte("# Engineer"))); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, "round_001", "engineer.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !spares[fi.Sys().(*syscall.Stat_t).Ino] {
		t.Error("the new key's file is not one of the spares: the put created a file")
	}
	if got := rawFiles(t, dir)["round_001/engineer.md"]; got != "# Engineer" {
		t.Errorf("round_001/engineer.md = %q", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := logFiles(t, dir); !slices.Equal(got, []string{logName}) {
		t.Errorf("log folder after Close = %q, want the log file only", got)
	}
}
