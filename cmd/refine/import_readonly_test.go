package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// folderTree describes every entry of dir, folders included: its type,
// mode, and content hash (files) or target (links).
func folderTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		desc := fi.Mode().String()
		switch {
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			desc += fmt.Sprintf(" %d %x", len(b), sha256.Sum256(b))
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			desc += " -> " + target
		}
		out[rel] = desc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// runPaused runs the basic session until it pauses at its first
// question, and returns its folder.
func runPaused(t *testing.T) string {
	t.Helper()
	paused := filepath.Join(t.TempDir(), "s")
	c, out, errb := newTestCLI()
	if code := c.main(context.Background(), []string{"run", "--spec", "testdata/basic/spec.md", "--gaps", "testdata/basic/gaps.md", "--dir", paused,
		"--llm", "replay", "--replay", "testdata/basic/replay", "--quiet"}); code != exitPaused {
		t.Fatalf("run exit %d, want paused\n%s\n%s", code, out, errb)
	}
	return paused
}

// refine import reads its source folder and never writes it: a folder
// with a log the files do not show yet is imported as the log says and
// left byte-identical, and so is one it refuses (issue #39: import
// replayed the log into the source, rewriting a planted file, and
// recreated .refine-wal even when it refused).
func TestImportLeavesTheSourceByteIdentical(t *testing.T) {
	ctx := context.Background()
	paused := runPaused(t)
	want, err := os.ReadFile(filepath.Join(paused, "status.md"))
	if err != nil {
		t.Fatal(err)
	}

	// The session's commits are in the log only (the writer died before
	// applying them), a file the log replaces is planted at status.md,
	// and the lock file names the writer that never closed.
	src := logOnly(t, paused)
	if err := os.WriteFile(filepath.Join(src, "status.md"), []byte("planted: not what the log says\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, ".refine.lock"), []byte("999999\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := folderTree(t, src)
	root := filepath.Join(t.TempDir(), "root")
	c, out, errb := newTestCLI()
	if code := c.main(ctx, []string{"import", "--dir", src, "--store", "file:" + root, "--session", "s1"}); code != exitOK {
		t.Fatalf("import: exit %d\n%s\n%s", code, out, errb)
	}
	if diff := cmp.Diff(before, folderTree(t, src)); diff != "" {
		t.Errorf("import changed its source (-before +after):\n%s", diff)
	}
	got, err := os.ReadFile(filepath.Join(root, "s1", "status.md"))
	if err != nil || string(got) != string(want) {
		t.Errorf("imported status.md is not the log's:\n%s\n%v", got, err)
	}
	c, out, errb = newTestCLI()
	if code := c.main(ctx, []string{"status", "--store", "file:" + root, "--session", "s1"}); code != exitOK || !strings.Contains(out.String(), "PAUSED after round 1") {
		t.Errorf("status of the imported session: exit %d\n%s\n%s", code, out, errb)
	}

	// A damaged log is refused, and the folder stays as it was: no log
	// folder, no lock file created where there was none.
	bad := logOnly(t, paused)
	rec := filepath.Join(bad, ".refine-wal", "00000000000000000001.rec")
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 1
	if err := os.WriteFile(rec, b, 0o600); err != nil {
		t.Fatal(err)
	}
	before = folderTree(t, bad)
	c, out, errb = newTestCLI()
	if code := c.main(ctx, []string{"import", "--dir", bad, "--store", "file:" + root, "--session", "s2"}); code != exitUsage || !strings.Contains(errb.String(), "corrupt") {
		t.Errorf("import of a damaged log: exit %d, want %d naming it corrupt\n%s", code, exitUsage, errb)
	}
	if diff := cmp.Diff(before, folderTree(t, bad)); diff != "" {
		t.Errorf("a refused import changed its source (-before +after):\n%s", diff)
	}

	// A folder with no log at all gets none.
	plain := filepath.Join(t.TempDir(), "plain")
	if err := os.CopyFS(plain, os.DirFS(paused)); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{".refine-wal", ".refine.lock"} {
		if err := os.RemoveAll(filepath.Join(plain, name)); err != nil {
			t.Fatal(err)
		}
	}
	before = folderTree(t, plain)
	c, out, errb = newTestCLI()
	if code := c.main(ctx, []string{"import", "--dir", plain, "--store", "file:" + root, "--session", "s3"}); code != exitOK {
		t.Fatalf("import of a folder without a log: exit %d\n%s\n%s", code, out, errb)
	}
	if diff := cmp.Diff(before, folderTree(t, plain)); diff != "" {
		t.Errorf("import changed a folder without a log (-before +after):\n%s", diff)
	}
}

// A folder a live run holds is refused, not copied half-way.
func TestImportRefusesALiveRunsFolder(t *testing.T) {
	ctx := context.Background()
	dir := runBasic(t)
	c0, _, _ := newTestCLI()
	st, err := c0.openSession(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, out, errb := newTestCLI()
	if code := c.main(ctx, []string{"import", "--dir", dir, "--store", "file:" + filepath.Join(t.TempDir(), "root")}); code != exitUsage || !strings.Contains(errb.String(), "locked") {
		t.Errorf("import of a live run's folder: exit %d, want %d naming the lock\n%s\n%s", code, exitUsage, out, errb)
	}
}
