package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyDir copies a session folder (files and folders, not links).
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The demo has a rollback; a session with one must still export and
// roll back to every earlier round (issue #23: the state backups were
// rebuilt across a whole snapshot that a later state.json replaced).
func TestDemoExportsAndRollsBackAfterItsRollback(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	c, out, errb := newTestCLI()
	if code := c.main(ctx, []string{"demo", "--dir", filepath.Join(root, "d"), "--quiet"}); code != exitOK {
		t.Fatalf("demo exit %d\n%s\n%s", code, out, errb)
	}
	c, out, errb = newTestCLI()
	if code := c.main(ctx, []string{"export", "--store", "file:" + root, "--session", "d", "--dir", filepath.Join(t.TempDir(), "x")}); code != exitOK {
		t.Fatalf("export exit %d\n%s\n%s", code, out, errb)
	}
	for _, to := range []string{"2", "3"} {
		t.Run("to "+to, func(t *testing.T) {
			cp := filepath.Join(t.TempDir(), "copy")
			copyDir(t, filepath.Join(root, "d"), cp)
			c, out, errb := newTestCLI()
			if code := c.main(ctx, []string{"rollback", "--dir", cp, "--to", to, "--reason", "r"}); code != exitPaused {
				t.Fatalf("rollback exit %d, want %d (the options question)\n%s\n%s", code, exitPaused, out, errb)
			}
			c, out, errb = newTestCLI()
			if code := c.main(ctx, []string{"resume", "--dir", cp, "--answer", "1"}); code != exitOK && code != exitPaused {
				t.Fatalf("resume --answer 1 exit %d\n%s\n%s", code, out, errb)
			}
			// The demo's undone rounds decided nothing about the spec: the
			// first rollback's dialog answers and the archive cleanup are
			// not archived again for recovery.
			if strings.Contains(out.String(), "DECISION RECOVERY") {
				t.Errorf("a decision-recovery question offers the earlier rollback's dialog answers:\n%s", out)
			}
			if !strings.Contains(out.String(), "stops before its next role call") {
				t.Errorf("resume without a backend does not say how to go on:\n%s", out)
			}
			// The rolled-back copy exports too.
			c, out, errb = newTestCLI()
			if code := c.main(ctx, []string{"export", "--store", "file:" + filepath.Dir(cp), "--session", "copy", "--dir", filepath.Join(t.TempDir(), "x")}); code != exitOK {
				t.Fatalf("export of the rolled-back copy: exit %d\n%s\n%s", code, out, errb)
			}
		})
	}
}
