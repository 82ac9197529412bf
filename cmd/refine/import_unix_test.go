//go:build unix

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// import reads no file above the input limit (a 2 GB sparse file took
// 6.3 GB of memory, issue #24) and says what it skipped and why: links,
// named pipes and names that cannot be keys.
func TestImportLimitsAndListsSkipped(t *testing.T) {
	ctx := context.Background()
	src := filepath.Join(t.TempDir(), "src")
	c, out, errb := newTestCLI()
	if code := c.main(ctx, []string{"run", "--spec", "testdata/basic/spec.md", "--gaps", "testdata/basic/gaps.md", "--dir", src,
		"--llm", "replay", "--replay", "testdata/basic/replay", "--auto"}); code != exitOK {
		t.Fatalf("run exit %d\n%s\n%s", code, out, errb)
	}
	if err := os.Symlink("status.md", filepath.Join(src, "round_001", "link.md")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(src, "pipe.md"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "notes copy.md"), []byte("n"), 0o600); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "root")
	c, out, errb = newTestCLI()
	if code := c.main(ctx, []string{"import", "--dir", src, "--store", "file:" + root, "--session", "s1"}); code != exitOK {
		t.Fatalf("import: exit %d\n%s\n%s", code, out, errb)
	}
	for _, want := range []string{
		"skipped round_001/link.md: a symbolic link",
		"skipped pipe.md: a named pipe",
		`skipped notes copy.md: the name cannot be a session key`,
	} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("stderr does not say %q:\n%s", want, errb)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "s1", "status.md")); err != nil {
		t.Errorf("the session was not imported: %v", err)
	}

	// A sparse file far above the limit is refused from its size, before
	// it is read, and nothing is imported.
	f, err := os.Create(filepath.Join(src, "round_001", "huge.md"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(2 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	c, out, errb = newTestCLI()
	code := c.main(ctx, []string{"import", "--dir", src, "--store", "file:" + root, "--session", "s2"})
	if code != exitUsage || !strings.Contains(errb.String(), "round_001/huge.md is too large") {
		t.Errorf("import with a 2 GB file: exit %d, want %d naming it too large\n%s", code, exitUsage, errb)
	}
	if _, err := os.Stat(filepath.Join(root, "s2")); !os.IsNotExist(err) {
		t.Errorf("a refused import left session s2: %v", err)
	}
	// The limit is the other inputs' one, and the flag moves it.
	if err := os.Truncate(filepath.Join(src, "round_001", "huge.md"), maxInputBytes+1); err != nil {
		t.Fatal(err)
	}
	c, out, errb = newTestCLI()
	if code := c.main(ctx, []string{"import", "--dir", src, "--store", "file:" + root, "--session", "s3"}); code != exitUsage {
		t.Errorf("import with a file one byte above the limit: exit %d, want %d\n%s", code, exitUsage, errb)
	}
	c, out, errb = newTestCLI()
	if code := c.main(ctx, []string{"import", "--dir", src, "--store", "file:" + root, "--session", "s4", "--max-file-bytes", "20000000"}); code != exitOK {
		t.Errorf("import with --max-file-bytes above the file: exit %d\n%s", code, errb)
	}
}
