package main

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/store/sqlite"
)

// pausingReplay writes the responses of a session that pauses on an
// escalation question (three bad Engineer answers) and completes after
// the answer.
func pausingReplay(t *testing.T) (replayDir, gaps string) {
	t.Helper()
	replayDir = t.TempDir()
	for i, name := range []string{"engineer-001.md", "engineer-002.md", "engineer-003.md"} {
		os.WriteFile(filepath.Join(replayDir, name), []byte("not a proposal "+string(rune('a'+i))), 0o600)
	}
	good, _ := os.ReadFile("testdata/basic/replay/engineer-002.md")
	os.WriteFile(filepath.Join(replayDir, "engineer-004.md"), good, 0o600)
	rev, _ := os.ReadFile("testdata/basic/replay/reviewer-001.md")
	os.WriteFile(filepath.Join(replayDir, "reviewer-001.md"), rev, 0o600)
	gaps = filepath.Join(t.TempDir(), "gaps.md")
	os.WriteFile(gaps, []byte("- GAP-HOOK-001 (HIGH): Retry schedule\n"), 0o600)
	return replayDir, gaps
}

// folderKeys lists the files of a session folder as store keys, leaving
// out the store's own files.
// withoutJournal drops the journal and older snapshots from a key list:
// what an exported (compacted) folder holds.
func withoutJournal(keys []string) []string {
	var out []string
	for _, k := range keys {
		if !strings.HasPrefix(k, "journal/") && !strings.HasPrefix(k, "snapshots/") {
			out = append(out, k)
		}
	}
	return out
}

func folderKeys(t *testing.T, dir string) []string {
	t.Helper()
	var keys []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if strings.HasPrefix(rel, ".refine") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() {
			keys = append(keys, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(keys)
	return keys
}

// A session started in a SQLite store pauses, resumes in a second
// invocation, is listed by refine sessions, and refine export writes the
// same folder layout as the same session run in a folder.
func TestSQLiteStorePauseResumeExport(t *testing.T) {
	ctx := context.Background()
	replayDir, gaps := pausingReplay(t)
	db := "sqlite:" + filepath.Join(t.TempDir(), "x.db")

	c, out, errb := newTestCLI()
	code := c.main(ctx, []string{"run", "--spec", "testdata/basic/spec.md", "--gaps", gaps, "--store", db, "--llm", "replay", "--replay", replayDir})
	if code != exitPaused {
		t.Fatalf("run exit %d, want 3 (paused)\n%s\n%s", code, out, errb)
	}
	m := regexp.MustCompile(`Session ID: (\S+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("run did not print the new session's ID:\n%s", out)
	}
	id := m[1]
	if want := "refine resume --store " + db + " --session " + id + " --answer KEY"; !strings.Contains(out.String(), want) {
		t.Errorf("paused output does not say %q:\n%s", want, out)
	}

	c, out, errb = newTestCLI()
	if code := c.main(ctx, []string{"sessions", "--store", db, "--json"}); code != exitOK {
		t.Fatalf("sessions exit %d: %s", code, errb)
	}
	var listed []map[string]any
	if err := json.Unmarshal(out.Bytes(), &listed); err != nil {
		t.Fatalf("sessions --json is not JSON: %v\n%s", err, out)
	}
	if len(listed) != 1 || listed[0]["id"] != id {
		t.Fatalf("sessions --json = %s, want one session %s", out, id)
	}
	for _, k := range []string{"id", "created_at", "updated_at", "round", "outcome"} {
		if _, ok := listed[0][k]; !ok {
			t.Errorf("sessions --json entry lacks %q: %s", k, out)
		}
	}

	c, out, errb = newTestCLI()
	code = c.main(ctx, []string{"resume", "--store", db, "--session", id, "--replay", replayDir, "--answer", "3: Use ## Gap Resolution headers"})
	if code != exitOK || !strings.Contains(out.String(), "COMPLETE") {
		t.Fatalf("resume exit %d, want a COMPLETE session\n%s\n%s", code, out, errb)
	}

	c, out, errb = newTestCLI()
	if code := c.main(ctx, []string{"status", "--store", db, "--session", id, "--json"}); code != exitOK {
		t.Fatalf("status exit %d: %s", code, errb)
	}
	var st map[string]any
	if err := json.Unmarshal(out.Bytes(), &st); err != nil || st["outcome"] != "COMPLETE" {
		t.Errorf("status --json outcome = %v (%v), want COMPLETE", st["outcome"], err)
	}

	exported := filepath.Join(t.TempDir(), "exported")
	c, out, errb = newTestCLI()
	if code := c.main(ctx, []string{"export", "--store", db, "--session", id, "--dir", exported}); code != exitOK {
		t.Fatalf("export exit %d: %s", code, errb)
	}

	// The same session in a folder, for the reference layout.
	ref := filepath.Join(t.TempDir(), "ref")
	c, out, errb = newTestCLI()
	if code := c.main(ctx, []string{"run", "--spec", "testdata/basic/spec.md", "--gaps", gaps, "--dir", ref, "--llm", "replay", "--replay", replayDir}); code != exitPaused {
		t.Fatalf("reference run exit %d\n%s\n%s", code, out, errb)
	}
	c, out, errb = newTestCLI()
	if code := c.main(ctx, []string{"resume", "--dir", ref, "--replay", replayDir, "--answer", "3: Use ## Gap Resolution headers"}); code != exitOK {
		t.Fatalf("reference resume exit %d\n%s\n%s", code, out, errb)
	}
	// The export is compacted: the fs store's layout without the journal.
	if diff := cmp.Diff(withoutJournal(folderKeys(t, ref)), folderKeys(t, exported)); diff != "" {
		t.Errorf("exported folder layout differs from the fs store's (-fs +exported):\n%s", diff)
	}
	for _, f := range []string{"state.json", "status.md", "round_001/engineer.md"} {
		if _, err := os.Stat(filepath.Join(exported, f)); err != nil {
			t.Errorf("exported folder lacks %s", f)
		}
	}

	// The exported folder is a session the folder commands read.
	c, out, errb = newTestCLI()
	if code := c.main(ctx, []string{"status", "--dir", exported}); code != exitOK || !strings.Contains(out.String(), "COMPLETE") {
		t.Errorf("status --dir on the export: exit %d\n%s\n%s", code, out, errb)
	}
	// A second export refuses to mix into a non-empty folder.
	c, _, errb = newTestCLI()
	if code := c.main(ctx, []string{"export", "--store", db, "--session", id, "--dir", exported}); code != exitUsage || !strings.Contains(errb.String(), "not empty") {
		t.Errorf("export into a non-empty folder: exit %d, stderr %s", code, errb)
	}
}

// import is the reverse of export: the folder becomes a session of the
// store under the chosen ID, with the same keys.
func TestImportThenExportRoundTrip(t *testing.T) {
	ctx := context.Background()
	src := filepath.Join(t.TempDir(), "src")
	c, out, errb := newTestCLI()
	if code := c.main(ctx, []string{"run", "--spec", "testdata/basic/spec.md", "--gaps", "testdata/basic/gaps.md", "--dir", src,
		"--llm", "replay", "--replay", "testdata/basic/replay", "--auto"}); code != exitOK {
		t.Fatalf("run exit %d\n%s\n%s", code, out, errb)
	}
	root := "file:" + filepath.Join(t.TempDir(), "root")
	for _, store := range []string{"sqlite:" + filepath.Join(t.TempDir(), "i.db"), root} {
		c, out, errb = newTestCLI()
		if code := c.main(ctx, []string{"import", "--dir", src, "--store", store, "--session", "imported-1"}); code != exitOK {
			t.Fatalf("import into %s: exit %d\n%s\n%s", store, code, out, errb)
		}
		c, out, errb = newTestCLI()
		if code := c.main(ctx, []string{"import", "--dir", src, "--store", store, "--session", "imported-1"}); code != exitUsage {
			t.Errorf("second import under the same ID into %s: exit %d, want 2\n%s", store, code, errb)
		}
		back := filepath.Join(t.TempDir(), "back")
		c, out, errb = newTestCLI()
		if code := c.main(ctx, []string{"export", "--store", store, "--session", "imported-1", "--dir", back}); code != exitOK {
			t.Fatalf("export from %s: exit %d\n%s", store, code, errb)
		}
		if diff := cmp.Diff(withoutJournal(folderKeys(t, src)), folderKeys(t, back)); diff != "" {
			t.Errorf("%s: import then export changed the layout (-src +back):\n%s", store, diff)
		}
		c, out, errb = newTestCLI()
		if code := c.main(ctx, []string{"status", "--store", store, "--session", "imported-1"}); code != exitOK || !strings.Contains(out.String(), "COMPLETE") {
			t.Errorf("status --store %s: exit %d\n%s\n%s", store, code, out, errb)
		}
	}
}

func TestStoreFlagErrors(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "e.db")
	db := "sqlite:" + path
	// A store that does not exist is refused by the commands that read
	// it, and not created (#40).
	for _, args := range [][]string{{"status", "--store", db, "--session", "x"}, {"sessions", "--store", db}, {"export", "--store", db, "--session", "x", "--dir", filepath.Join(t.TempDir(), "out")}} {
		c, _, errb := newTestCLI()
		if code := c.main(ctx, args); code != exitUsage || !strings.Contains(errb.String(), "the database file "+path+" does not exist") {
			t.Errorf("%q: exit %d, stderr %q; want 2 and the missing database named", args, code, errb)
		}
		if _, err := os.Stat(path); err == nil {
			t.Fatalf("%q created %s", args, path)
		}
	}
	created, err := sqlite.Open(ctx, path, sqlite.Config{})
	if err != nil {
		t.Fatal(err)
	}
	created.Close()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"status", "--store", db}, "needs --session ID"},
		{[]string{"status", "--store", db, "--session", "nope"}, "no such session"},
		{[]string{"status", "--store", db, "--session", "../x"}, "--session"},
		{[]string{"status", "--dir", "d", "--store", db, "--session", "x"}, "not both"},
		{[]string{"resume", "--store", "mysql://h/db", "--session", "x", "--llm", "replay", "--replay", "."}, "unknown scheme"},
		{[]string{"sessions"}, "--store URL is required"},
	}
	for _, tc := range tests {
		c, _, errb := newTestCLI()
		if code := c.main(ctx, tc.args); code != exitUsage || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, code, errb, tc.want)
		}
	}
	c, out, _ := newTestCLI()
	if code := c.main(ctx, []string{"sessions", "--store", db, "--json"}); code != exitOK || strings.TrimSpace(out.String()) != "[]" {
		t.Errorf("sessions --json on an empty store: exit %d, %q; want []", code, out)
	}
}

func TestDemoWithSQLiteStore(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "demo.db")
	c, out, errb := newTestCLI()
	if code := c.main(context.Background(), []string{"demo", "--store", db, "--quiet"}); code != exitOK {
		t.Fatalf("demo --store exit %d\n%s\n%s", code, out, errb)
	}
	// A store's session is named as one, not as a folder (#40).
	if !strings.Contains(out.String(), "Session: ") || !strings.Contains(out.String(), " in "+db+"\n") || strings.Contains(out.String(), "Session folder:") {
		t.Errorf("demo --store does not name its session in the store:\n%s", out)
	}
	if !strings.Contains(out.String(), "refine export --store "+db+" --session ") {
		t.Errorf("demo output does not say how to export the session:\n%s", out)
	}
	c, out, errb = newTestCLI()
	if code := c.main(context.Background(), []string{"sessions", "--store", db}); code != exitOK || strings.Count(out.String(), "\n") != 2 {
		t.Errorf("sessions after the demo: exit %d\n%s\n%s", code, out, errb)
	}
}

// With a folder store, --store ROOT --session ID is the folder ROOT/ID:
// the same session the folder commands see.
func TestFileStoreSessionIsAFolder(t *testing.T) {
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "root")
	c, out, errb := newTestCLI()
	if code := c.main(ctx, []string{"run", "--spec", "testdata/basic/spec.md", "--gaps", "testdata/basic/gaps.md", "--store", "file:" + root, "--session", "s1",
		"--llm", "replay", "--replay", "testdata/basic/replay", "--auto"}); code != exitOK {
		t.Fatalf("run exit %d\n%s\n%s", code, out, errb)
	}
	if strings.Contains(out.String(), "Session ID:") {
		t.Errorf("run printed a new ID although --session was given:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(root, "s1", "state.json")); err != nil {
		t.Fatalf("no state.json in ROOT/s1: %v", err)
	}
	c, out, errb = newTestCLI()
	if code := c.main(ctx, []string{"status", "--dir", filepath.Join(root, "s1")}); code != exitOK || !strings.Contains(out.String(), "COMPLETE") {
		t.Errorf("status --dir ROOT/s1: exit %d\n%s\n%s", code, out, errb)
	}
	c, out, errb = newTestCLI()
	if code := c.main(ctx, []string{"sessions", "--store", root}); code != exitOK || !strings.Contains(out.String(), "s1") {
		t.Errorf("sessions --store ROOT: exit %d\n%s\n%s", code, out, errb)
	}
}
