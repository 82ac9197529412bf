package main

import (
	"context"
	"encoding/binary"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// logOnly moves every file of the session folder src into one record of
// the filesystem store's write-ahead log in a new folder, as if the
// session's first commit reached its commit point and the process died (or
// the disk filled) before any file was applied. The layout is the one
// store/fs documents in wal.go: "REFWAL1\n", seq, count, ops, CRC-32C.
func logOnly(t *testing.T, src string) string {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() && strings.HasPrefix(d.Name(), ".refine") {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() && !strings.HasPrefix(d.Name(), ".refine") {
			b, err := os.ReadFile(p)
			files[filepath.ToSlash(rel)] = b
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(files))
	for k := range files {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	rec := []byte("REFWAL1\n")
	rec = binary.LittleEndian.AppendUint64(rec, 1)
	rec = binary.LittleEndian.AppendUint32(rec, uint32(len(keys)))
	for _, k := range keys {
		rec = append(rec, 1)
		rec = binary.LittleEndian.AppendUint16(rec, uint16(len(k)))
		rec = append(rec, k...)
		rec = binary.LittleEndian.AppendUint64(rec, uint64(len(files[k])))
		rec = append(rec, files[k]...)
	}
	rec = binary.LittleEndian.AppendUint32(rec, crc32.Checksum(rec, crc32.MakeTable(crc32.Castagnoli)))
	dst := filepath.Join(t.TempDir(), "logged")
	if err := os.MkdirAll(filepath.Join(dst, ".refine-wal"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, ".refine-wal", "00000000000000000001.rec"), rec, 0o600); err != nil {
		t.Fatal(err)
	}
	return dst
}

// A first commit that is in the log but not applied is a session: status
// and resume open the store (which redoes the commit) before deciding.
func TestStatusAndResumeRedoALoggedFirstCommit(t *testing.T) {
	ctx := context.Background()
	paused := runPaused(t)

	dir := logOnly(t, paused)
	c, out, errb := newTestCLI()
	if code := c.main(ctx, []string{"status", "--dir", dir}); code != exitOK || !strings.Contains(out.String(), "PAUSED after round 1") {
		t.Errorf("status on a logged first commit: exit %d\n%s\n%s", code, out, errb)
	}

	dir = logOnly(t, paused)
	c, out, errb = newTestCLI()
	if code := c.main(ctx, []string{"resume", "--dir", dir, "--replay", "testdata/basic/replay", "--auto", "--quiet"}); code != exitOK || !strings.Contains(out.String(), "COMPLETE") {
		t.Errorf("resume on a logged first commit: exit %d\n%s\n%s", code, out, errb)
	}
}

// Without a session the commands say which command starts one, and leave
// an unrelated folder as it was.
func TestNoSessionNamesTheCommand(t *testing.T) {
	ctx := context.Background()
	for _, cmd := range [][]string{{"status"}, {"resume", "--replay", "testdata/basic/replay"}} {
		dir := t.TempDir()
		c, _, errb := newTestCLI()
		args := append([]string{cmd[0], "--dir", dir}, cmd[1:]...)
		if code := c.main(ctx, args); code != exitUsage {
			t.Errorf("%s on an empty folder: exit %d, want %d", cmd[0], code, exitUsage)
		}
		msg := errb.String()
		if !strings.Contains(msg, "no session") || !strings.Contains(msg, "refine run") || strings.Contains(msg, "New") {
			t.Errorf("%s on an empty folder says %q; want it to name refine run", cmd[0], msg)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("%s left files in a folder holding no session: %v", cmd[0], entries)
		}
	}
}

// What the store's recovery did or refused is shown, not only logged.
func TestStoreRecoveryIsReported(t *testing.T) {
	ctx := context.Background()
	dir := runBasic(t)
	// A file planted where the store's log folder belongs: recovery
	// removes it and warns.
	if err := os.RemoveAll(filepath.Join(dir, ".refine-wal")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".refine-wal"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, out, errb := newTestCLI()
	if code := c.main(ctx, []string{"status", "--dir", dir}); code != exitOK {
		t.Fatalf("status exit %d\n%s\n%s", code, out, errb)
	}
	if !strings.Contains(errb.String(), "level=WARN") || !strings.Contains(errb.String(), "not a log folder") {
		t.Errorf("stderr does not show the recovery's warning:\n%s", errb)
	}

	// A logged commit recovery redoes after a crash is reported too: the
	// lock file still names the writer that never closed.
	paused := logOnly(t, dir)
	if err := os.WriteFile(filepath.Join(paused, ".refine.lock"), []byte("999999\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, out, errb = newTestCLI()
	if code := c.main(ctx, []string{"status", "--dir", paused}); code != exitOK {
		t.Fatalf("status exit %d\n%s\n%s", code, out, errb)
	}
	if !strings.Contains(errb.String(), "recovered after a crash") {
		t.Errorf("stderr does not report the replayed commit:\n%s", errb)
	}
}

// The normal path says nothing on stderr: a clean Close leaves its last
// commits in the log for the next Open by design (#27).
func TestCleanReopenIsQuiet(t *testing.T) {
	ctx := context.Background()
	dir := runBasic(t)
	for _, args := range [][]string{{"status", "--dir", dir}, {"status", "--dir", dir, "--json"}, {"archives", "--dir", dir}} {
		c, out, errb := newTestCLI()
		if code := c.main(ctx, args); code != exitOK {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, out, errb)
		}
		if errb.Len() != 0 {
			t.Errorf("%v writes to stderr on the normal path:\n%s", args, errb)
		}
	}
}
