package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/refine-spec/refine/rollback"
)

// hostileArchive is a rollback archive holding a symbolic link, which
// reading an archive back refuses.
func hostileArchive(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	if err := tw.WriteHeader(&tar.Header{Name: "round_002_rolled_back/evil", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}); err != nil {
		t.Fatal(err)
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

// sessionWithArchives is a finished session with one genuine rollback
// archive (round 2) and one planted, hostile one (round 2, attempt 9).
func sessionWithArchives(t *testing.T) string {
	t.Helper()
	dir := runBasic(t)
	good, err := rollback.BuildArchive(map[string][]byte{"round_002/engineer.md": []byte("# Engineer\n")},
		rollback.Metadata{OriginalRound: 2, AttemptNumber: 1, TargetRound: 1, Reason: "test", RollbackTimestamp: time.Now().UTC()}, "")
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"round_002_rolled_back_1.tar.gz": good, "round_002_rolled_back_9.tar.gz": hostileArchive(t)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestArchivesShowTheSafetyVerdict(t *testing.T) {
	dir := sessionWithArchives(t)
	c, out, errb := newTestCLI()
	if code := c.main(context.Background(), []string{"archives", "--dir", dir}); code != exitOK {
		t.Fatalf("archives exit %d: %s", code, errb)
	}
	var good, bad string
	for _, line := range strings.Split(out.String(), "\n") {
		switch {
		case strings.HasPrefix(line, "round_002_rolled_back_1.tar.gz"):
			good = line
		case strings.HasPrefix(line, "round_002_rolled_back_9.tar.gz"):
			bad = line
		}
	}
	if !strings.Contains(good, " ok") || strings.Contains(good, "UNSAFE") {
		t.Errorf("genuine archive listed as %q, want it ok", good)
	}
	if !strings.Contains(bad, "UNSAFE") || !strings.Contains(bad, "symbolic link") {
		t.Errorf("hostile archive listed as %q, want UNSAFE with the reason", bad)
	}
}

func TestCleanupSkipsUnsafeArchives(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []string{"cold", "delete"} {
		t.Run(mode, func(t *testing.T) {
			dir := sessionWithArchives(t)
			cold := t.TempDir()
			c, out, errb := newTestCLI()
			if code := c.main(ctx, []string{"archives", "--dir", dir, "--cleanup", mode, "--cold-dir", cold}); code != exitOK {
				t.Fatalf("archives exit %d\n%s\n%s", code, out, errb)
			}
			if _, err := os.Stat(filepath.Join(dir, "round_002_rolled_back_9.tar.gz")); err != nil {
				t.Errorf("the unsafe archive left the session: %v", err)
			}
			if _, err := os.Stat(filepath.Join(dir, "round_002_rolled_back_1.tar.gz")); !os.IsNotExist(err) {
				t.Errorf("the genuine archive is still in the session: %v", err)
			}
			if !strings.Contains(out.String()+errb.String(), "--include-unsafe") {
				t.Errorf("output does not say how to include the unsafe archive:\n%s\n%s", out, errb)
			}
			manifest, _ := os.ReadFile(filepath.Join(cold, rollback.ColdWorkflowDir, rollback.ManifestName))
			if bytes.Contains(manifest, []byte("rolled_back_9")) {
				t.Errorf("the unsafe archive went to cold storage:\n%s", manifest)
			}

			c, out, errb = newTestCLI()
			if code := c.main(ctx, []string{"archives", "--dir", dir, "--cleanup", mode, "--cold-dir", cold, "--include-unsafe"}); code != exitOK {
				t.Fatalf("archives --include-unsafe exit %d\n%s\n%s", code, out, errb)
			}
			if _, err := os.Stat(filepath.Join(dir, "round_002_rolled_back_9.tar.gz")); !os.IsNotExist(err) {
				t.Errorf("--include-unsafe kept the unsafe archive in the session: %v", err)
			}
		})
	}
}

// Links planted under the cold-storage root are never followed: nothing
// is written, appended or deleted outside it.
func TestColdStorageFollowsNoLinks(t *testing.T) {
	ctx := context.Background()
	t.Run("workflow folder", func(t *testing.T) {
		dir := sessionWithArchives(t)
		cold, outside := t.TempDir(), t.TempDir()
		if err := os.Symlink(outside, filepath.Join(cold, rollback.ColdWorkflowDir)); err != nil {
			t.Fatal(err)
		}
		c, out, errb := newTestCLI()
		code := c.main(ctx, []string{"archives", "--dir", dir, "--cleanup", "cold", "--cold-dir", cold})
		if entries, _ := os.ReadDir(outside); len(entries) != 0 {
			t.Errorf("wrote through a link out of the cold root: %v", entries)
		}
		if code != exitFailed || !strings.Contains(errb.String(), "link") {
			t.Errorf("exit %d, want %d with an error naming the link\n%s\n%s", code, exitFailed, out, errb)
		}
		if _, err := os.Stat(filepath.Join(dir, "round_002_rolled_back_1.tar.gz")); err != nil {
			t.Errorf("the archive left the session although the move failed: %v", err)
		}
	})
	t.Run("cleanup log", func(t *testing.T) {
		dir := sessionWithArchives(t)
		cold := t.TempDir()
		victim := filepath.Join(t.TempDir(), "victim.txt")
		os.WriteFile(victim, []byte("precious\n"), 0o600)
		if err := os.Symlink(victim, filepath.Join(cold, rollback.CleanupLogName)); err != nil {
			t.Fatal(err)
		}
		c, out, errb := newTestCLI()
		code := c.main(ctx, []string{"archives", "--dir", dir, "--cleanup", "cold", "--cold-dir", cold})
		if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
			t.Errorf("appended through a link out of the cold root: %q", b)
		}
		if code != exitFailed || !strings.Contains(errb.String(), "link") {
			t.Errorf("exit %d, want %d with an error naming the link\n%s\n%s", code, exitFailed, out, errb)
		}
	})
	t.Run("expire", func(t *testing.T) {
		cold, outside := t.TempDir(), t.TempDir()
		moved := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
		plan, err := rollback.ColdPlan(nil, []rollback.ArchiveInfo{{Name: "round_002_rolled_back_1.tar.gz", Size: 1}}, "x", cold, moved)
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(plan.ManifestPath), 0o700)
		os.WriteFile(plan.ManifestPath, plan.Manifest, 0o600)
		victim := filepath.Join(outside, "round_002_rolled_back_1.tar.gz")
		os.WriteFile(victim, []byte("precious"), 0o600)
		if err := os.Symlink(outside, plan.Dir); err != nil {
			t.Fatal(err)
		}
		c, out, errb := newTestCLI()
		code := c.main(ctx, []string{"archives", "--expire", "--cold-dir", cold})
		if _, err := os.Stat(victim); err != nil {
			t.Errorf("--expire deleted a file through a link out of the cold root: %v", err)
		}
		if code != exitFailed || !strings.Contains(errb.String(), "link") {
			t.Errorf("exit %d, want %d with an error naming the link\n%s\n%s", code, exitFailed, out, errb)
		}
	})
}
