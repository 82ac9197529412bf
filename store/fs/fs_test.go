package fs_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/fs"
	"github.com/refine-spec/refine/storetest"
)

func TestConformance(t *testing.T) {
	storetest.TestStore(t, func(t *testing.T) store.Store { return open(t, t.TempDir()) })
}

func TestConformanceNoSync(t *testing.T) {
	storetest.TestStore(t, func(t *testing.T) store.Store { return open(t, t.TempDir(), fs.NoSync()) })
}

// open opens dir and closes the Store when the test ends.
func open(t *testing.T, dir string, opts ...fs.Option) *fs.Store {
	t.Helper()
	s, err := fs.Open(dir, opts...)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func commit(t *testing.T, s store.Store, ops ...store.Op) {
	t.Helper()
	if err := s.Commit(t.Context(), ops...); err != nil {
		t.Fatalf("Commit: %v", err)
	}
}

// flush waits until the files hold every commit s returned: Commit
// returns before they do (see applier.go).
func flush(t *testing.T, s *fs.Store) {
	t.Helper()
	if err := fs.Flush(s); err != nil {
		t.Fatalf("Flush: %v", err)
	}
}

// tree lists everything under dir, including the store's own files, as
// slash paths with a trailing '/' for folders, and the file contents.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d iofs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel := filepath.ToSlash(p[len(dir)+1:])
		switch {
		case d.IsDir():
			m[rel+"/"] = ""
		case d.Type()&iofs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			m[rel] = "-> " + target
			return err
		default:
			b, err := os.ReadFile(p)
			m[rel] = string(b)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestLayout(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "session")
	s, err := fs.Open(dir, fs.WithoutIdleCheckpoints()) // no idle spares in the listing below
	if err != nil {
		t.Fatal(err)
	}
	commit(t, s,
		store.Put("state.json", []byte(`{"schema": 1}`)),
		store.Put("round_003/engineer.md", []byte("# Engineer")),
		store.Put("round_003/attempts/engineer-1.md", []byte("raw")),
	)
	commit(t, s, store.Delete("round_003/attempts/engineer-1.md"))
	flush(t, s)
	keys := map[string]string{
		"state.json":            `{"schema": 1}`,
		"round_003/":            "",
		"round_003/engineer.md": "# Engineer",
		// round_003/attempts/ was pruned when its last key went.
	}
	if diff := cmp.Diff(keys, userTree(t, dir)); diff != "" {
		t.Errorf("session folder after two commits (-want +got):\n%s", diff)
	}
	// Both commits are in the log file.
	own := []string{".refine-wal/", ".refine-wal/log", ".refine.lock"}
	if diff := cmp.Diff(own, ownFiles(t, dir)); diff != "" {
		t.Errorf("store's own files after two commits (-want +got):\n%s", diff)
	}
	if got := s.Dir(); got != dir {
		t.Errorf("Dir() = %q, want %q", got, dir)
	}
	// Close does not checkpoint: the log keeps both commits until the
	// thresholds call for one, the files hold them.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n, err := fs.LoggedRecords(dir); n != 2 || err != nil {
		t.Errorf("after Close the log holds %d commits to replay (%v), want 2", n, err)
	}
	if diff := cmp.Diff(own, ownFiles(t, dir)); diff != "" {
		t.Errorf("store's own files after Close (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(keys, userTree(t, dir)); diff != "" {
		t.Errorf("session folder after Close (-want +got):\n%s", diff)
	}
}

// userTree is tree without the store's own files.
func userTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := tree(t, dir)
	for p := range m {
		if strings.HasPrefix(p, ".refine") {
			delete(m, p)
		}
	}
	return m
}

// ownFiles lists the store's own files and folders under dir, sorted.
func ownFiles(t *testing.T, dir string) []string {
	t.Helper()
	var own []string
	// Names only: the applier and its checkpoints may remove a file of
	// their own between the listing and a read.
	err := filepath.WalkDir(dir, func(p string, d iofs.DirEntry, err error) error {
		if errors.Is(err, iofs.ErrNotExist) {
			return nil
		}
		if err != nil || p == dir {
			return err
		}
		rel := filepath.ToSlash(p[len(dir)+1:])
		if d.IsDir() {
			rel += "/"
		}
		if strings.HasPrefix(rel, ".refine") {
			own = append(own, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(own)
	return own
}

func TestPermissions(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows has no Unix permission bits")
	}
	dir := filepath.Join(t.TempDir(), "new", "session")
	s := open(t, dir)
	commit(t, s,
		store.Put("state.json", []byte("{}")),
		store.Put("round_003/attempts/engineer-1.md", []byte("raw")),
	)
	flush(t, s)
	want := map[string]iofs.FileMode{
		"":                                 0o700,
		".refine.lock":                     0o600,
		".refine-wal":                      0o700,
		".refine-wal/log":                  0o600,
		"state.json":                       0o600,
		"round_003":                        0o700,
		"round_003/attempts":               0o700,
		"round_003/attempts/engineer-1.md": 0o600,
	}
	got := map[string]iofs.FileMode{}
	for rel := range want {
		fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		got[rel] = fi.Mode().Perm()
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("permissions (-want +got):\n%s", diff)
	}
	// A record too big for the log file goes to a record file.
	commit(t, s, store.Put("big.md", make([]byte, 17<<20)))
	if fi, err := os.Stat(filepath.Join(dir, ".refine-wal", "00000000000000000002.rec")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("record file: %v, %v; want mode 0600", fi, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestLocked(t *testing.T) {
	dir := t.TempDir()
	s, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = fs.Open(dir)
	if !errors.Is(err, store.ErrLocked) {
		t.Fatalf("second Open error = %v, want ErrLocked", err)
	}
	if !strings.Contains(err.Error(), dir) {
		t.Errorf("ErrLocked error %q does not name the folder %s", err, dir)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
	s2 := open(t, dir) // the lock was released
	commit(t, s2, store.Put("a", []byte("1")))
}

// TestLockChild is the child of TestLockedAcrossProcesses: it holds the
// lock until its stdin closes.
func TestLockChild(t *testing.T) {
	dir := os.Getenv("REFINE_FS_LOCK_DIR")
	if dir == "" {
		t.Skip("helper process for TestLockedAcrossProcesses")
	}
	s, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
}

func TestLockedAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	child := startChild(t, "TestLockChild", "REFINE_FS_LOCK_DIR="+dir)
	_, err := fs.Open(dir)
	if !errors.Is(err, store.ErrLocked) {
		t.Fatalf("Open while another process holds the folder: error = %v, want ErrLocked", err)
	}
	if want := fmt.Sprintf("process %d holds", child.cmd.Process.Pid); !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), dir) {
		t.Errorf("ErrLocked error %q should name the folder and contain %q", err, want)
	}
	// A read-only open works while the folder is locked.
	ro, err := fs.OpenReadOnly(dir)
	if err != nil {
		t.Fatalf("OpenReadOnly while locked: %v", err)
	}
	ro.Close()

	child.stdin.Close()
	if err := child.cmd.Wait(); err != nil {
		t.Fatalf("lock child: %v\n%s", err, child.stderr.String())
	}
	open(t, dir)
}

type childProcess struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *bytes.Buffer
}

// startChild runs this test binary's test name in a new process with env
// added, and returns once the child has printed "ready".
func startChild(t *testing.T, name string, env ...string) *childProcess {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.count=1", "-test.timeout=5m")
	cmd.Env = append(os.Environ(), env...)
	stderr := new(bytes.Buffer)
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &childProcess{cmd: cmd, stdin: stdin, stderr: stderr}
	t.Cleanup(func() {
		// A child still running here means the test failed early.
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	sc := bufio.NewScanner(stdout)
	var out []string
	for sc.Scan() {
		if sc.Text() == "ready" {
			return c
		}
		out = append(out, sc.Text())
	}
	cmd.Wait()
	t.Fatalf("child %s exited before it was ready:\n%s\n%s", name, strings.Join(out, "\n"), stderr)
	return nil
}

func TestReadOnly(t *testing.T) {
	dir := t.TempDir()
	w := open(t, dir)
	commit(t, w, store.Put("state.json", []byte("v1")))
	// A reader without the writer's overlay sees a commit once it is
	// applied to the files.
	flush(t, w)

	ro, err := fs.OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	ctx := t.Context()
	if got, err := ro.Get(ctx, "state.json"); err != nil || string(got) != "v1" {
		t.Errorf("read-only Get = %q, %v; want v1", got, err)
	}
	commit(t, w, store.Put("state.json", []byte("v2")), store.Put("round_001/summary.md", []byte("s")))
	flush(t, w)
	if got, err := ro.Get(ctx, "state.json"); err != nil || string(got) != "v2" {
		t.Errorf("read-only Get after a commit = %q, %v; want v2", got, err)
	}
	if keys, err := ro.List(ctx, ""); err != nil || !cmp.Equal(keys, []string{"round_001/summary.md", "state.json"}) {
		t.Errorf("read-only List = %q, %v", keys, err)
	}
	err = ro.Commit(ctx, store.Put("state.json", []byte("v3")))
	if !errors.Is(err, fs.ErrReadOnly) || !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("read-only Commit error = %v, want fs.ErrReadOnly and refine.ErrReadOnly (#24)", err)
	}
	if got, _ := w.Get(ctx, "state.json"); string(got) != "v2" {
		t.Errorf("a rejected read-only commit changed state.json to %q", got)
	}

	missing := filepath.Join(t.TempDir(), "missing")
	if _, err := fs.OpenReadOnly(missing); !errors.Is(err, iofs.ErrNotExist) {
		t.Errorf("OpenReadOnly(missing folder) error = %v, want ErrNotExist", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, iofs.ErrNotExist) {
		t.Errorf("OpenReadOnly created %s", missing)
	}
}

func TestReservedKeys(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	ctx := t.Context()
	for _, key := range []string{
		".refine.lock", ".refine-wal/00000000000000000001.rec", ".refine-wal/checkpoint", ".refine-x",
		".REFINE.lock", ".Refine-wal", ".refinery/notes.md",
	} {
		if _, err := s.Get(ctx, key); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("Get(%q) error = %v, want ErrInvalidKey", key, err)
		}
		if err := s.Commit(ctx, store.Put(key, []byte("x"))); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("Commit(put %q) error = %v, want ErrInvalidKey", key, err)
		}
		if err := s.Commit(ctx, store.Delete(key)); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("Commit(delete %q) error = %v, want ErrInvalidKey", key, err)
		}
	}
	// Only the first segment is reserved, and only names starting .refine.
	commit(t, s, store.Put("x/.refine-notes", []byte("1")), store.Put("refine.md", []byte("2")), store.Put(".git/x", []byte("3")))
	// A reserved prefix is an invalid prefix: no key can start with it.
	for _, prefix := range []string{".refine", ".refine-wal/", ".refine.lock", ".REFINE-wal/", ".Refine"} {
		if keys, err := s.List(ctx, prefix); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("List(%q) = %q, %v; want ErrInvalidKey", prefix, keys, err)
		}
	}
	// Prefixes that merely could match the store's files never show them.
	for _, prefix := range []string{"", ".r", ".refin"} {
		keys, err := s.List(ctx, prefix)
		if err != nil {
			t.Fatalf("List(%q): %v", prefix, err)
		}
		for _, k := range keys {
			if strings.HasPrefix(k, ".refine") {
				t.Errorf("List(%q) shows the store's own file %q", prefix, k)
			}
		}
	}
	if own := ownFiles(t, dir); len(own) < 3 {
		t.Fatalf("test bug: expected the store's files on disk, found %q", own)
	}
	if keys, _ := s.List(ctx, ""); !cmp.Equal(keys, []string{".git/x", "refine.md", "x/.refine-notes"}) {
		t.Errorf("List = %q", keys)
	}
}

func TestSymlinksNotFollowed(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s := open(t, dir)
	commit(t, s, store.Put("real/file.md", []byte("ok")))
	flush(t, s)
	// Links planted in the folder, as an agent with file tools might.
	for link, target := range map[string]string{
		"leak.md":          secret,
		"linkdir":          outside,
		"real/relative.md": "../../" + filepath.Base(outside) + "/secret.txt",
		"inside.md":        "real/file.md", // even a link that stays inside
	} {
		if err := os.Symlink(target, filepath.Join(dir, filepath.FromSlash(link))); err != nil {
			t.Fatal(err)
		}
	}
	ctx := t.Context()
	for _, key := range []string{"leak.md", "linkdir/secret.txt", "real/relative.md", "inside.md"} {
		got, err := s.Get(ctx, key)
		if err == nil || bytes.Contains(got, []byte("SECRET")) {
			t.Errorf("Get(%q) = %q, %v; want an error and no content", key, got, err)
		} else if !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("Get(%q) error %q should say a link was refused", key, err)
		}
	}
	if keys, err := s.List(ctx, ""); err != nil || !cmp.Equal(keys, []string{"real/file.md"}) {
		t.Errorf("List(\"\") = %q, %v; want only the real file", keys, err)
	}
	if err := os.Mkdir(filepath.Join(outside, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, prefix := range []string{"linkdir/", "linkdir/sub/", "linkdir/s"} {
		if keys, err := s.List(ctx, prefix); err != nil || len(keys) != 0 {
			t.Errorf("List(%q) = %q, %v; want nothing", prefix, keys, err)
		}
	}
	// Writing below a linked folder fails and writes nothing outside.
	if err := s.Commit(ctx, store.Put("linkdir/new.md", []byte("x"))); err == nil {
		t.Error("Commit(put linkdir/new.md) succeeded through a link")
	}
	// Deleting below a linked folder does not delete outside.
	commit(t, s, store.Delete("linkdir/secret.txt"))
	// A put at a link replaces the link; a delete removes the link only.
	commit(t, s, store.Put("leak.md", []byte("replaced")), store.Delete("real/relative.md"))
	flush(t, s)
	if diff := cmp.Diff(map[string]string{"secret.txt": "SECRET", "sub/": ""}, tree(t, outside)); diff != "" {
		t.Errorf("folder outside the store changed (-want +got):\n%s", diff)
	}
	if got, err := s.Get(ctx, "leak.md"); err != nil || string(got) != "replaced" {
		t.Errorf("Get(leak.md) after replacing the link = %q, %v", got, err)
	}
}

func TestIgnoresFilesThatAreNotKeys(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	commit(t, s, store.Put("notes/a.md", []byte("a")))
	flush(t, s)
	for _, name := range []string{"notes/draft copy.md", "notes/caf\u00e9.md"} {
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o700); err != nil {
		t.Fatal(err)
	}
	keys, err := s.List(t.Context(), "")
	if err != nil || !cmp.Equal(keys, []string{"notes/a.md"}) {
		t.Errorf("List = %q, %v; want only the valid key", keys, err)
	}
	if _, err := s.Get(t.Context(), "empty"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get(a folder) error = %v, want ErrNotFound", err)
	}
}

func TestPutReplacesEmptiedFolder(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	commit(t, s, store.Put("doc/a/b.md", []byte("1")))
	flush(t, s)
	// Folders with no keys in them do not stop a key taking the folder's place.
	if err := os.MkdirAll(filepath.Join(dir, "doc", "empty", "deeper"), 0o700); err != nil {
		t.Fatal(err)
	}
	commit(t, s, store.Delete("doc/a/b.md"), store.Put("doc", []byte("now a key")))
	flush(t, s)
	if diff := cmp.Diff(map[string]string{"doc": "now a key"}, userTree(t, dir)); diff != "" {
		t.Errorf("folder (-want +got):\n%s", diff)
	}
	// A file that is not a key still blocks it.
	commit(t, s, store.Delete("doc"), store.Put("dir/k.md", []byte("k")))
	flush(t, s)
	if err := os.WriteFile(filepath.Join(dir, "dir", "not a key.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := s.Commit(t.Context(), store.Delete("dir/k.md"), store.Put("dir", []byte("x")))
	if !errors.Is(err, store.ErrInvalidKey) || !strings.Contains(err.Error(), "not a key.txt") {
		t.Errorf("Commit over a folder holding a stray file: error = %v, want ErrInvalidKey naming the file", err)
	}
	if got, err := s.Get(t.Context(), "dir/k.md"); err != nil || string(got) != "k" {
		t.Errorf("rejected commit changed dir/k.md: %q, %v", got, err)
	}
}

func TestClosed(t *testing.T) {
	s, err := fs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	_, getErr := s.Get(ctx, "a")
	_, listErr := s.List(ctx, "")
	commitErr := s.Commit(ctx, store.Put("a", nil))
	for name, err := range map[string]error{"Get": getErr, "List": listErr, "Commit": commitErr} {
		if err == nil || !strings.Contains(err.Error(), "closed") {
			t.Errorf("%s after Close: error = %v, want one saying the store is closed", name, err)
		}
	}
}

func TestErrorsNameTheKey(t *testing.T) {
	s := open(t, t.TempDir())
	ctx := t.Context()
	commit(t, s, store.Put("round_003/engineer.md", []byte("x")))
	_, getErr := s.Get(ctx, "round_003/reviewer.md")
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"get absent", getErr, "fs: get round_003/reviewer.md: not found"},
		{"key under a key", s.Commit(ctx, store.Put("round_003/engineer.md/x", nil)), `fs: commit round_003/engineer.md/x: invalid store key: "round_003/engineer.md" is a key`},
		{"key over a folder", s.Commit(ctx, store.Put("round_003", nil)), `fs: commit round_003: invalid store key: "round_003/engineer.md" is stored below it`},
	}
	for _, tc := range tests {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: error = %v, want it to contain %q", tc.name, tc.err, tc.want)
		}
	}
}

func TestEmptyValueIsAFile(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	commit(t, s, store.Put("empty.md", nil))
	flush(t, s)
	fi, err := os.Stat(filepath.Join(dir, "empty.md"))
	if err != nil || fi.Size() != 0 {
		t.Fatalf("empty value on disk: %v, %v", fi, err)
	}
	keys, err := s.List(t.Context(), "")
	if diff := cmp.Diff([]string{"empty.md"}, keys, cmpopts.EquateEmpty()); diff != "" || err != nil {
		t.Errorf("List (-want +got), err %v:\n%s", err, diff)
	}
}

// BenchmarkCommit commits four 4 KB files, the size of a round's outputs,
// to the same keys each time.
func BenchmarkCommit(b *testing.B) {
	v := bytes.Repeat([]byte("x"), 4096)
	ops := []store.Op{
		store.Put("round_003/engineer.md", v),
		store.Put("round_003/reviewer.md", v),
		store.Put("round_003/summary.md", v),
		store.Put("state.json", v),
	}
	benchCommit(b, func(int) []store.Op { return ops })
}

// BenchmarkCommitEngine commits what the session engine typically commits
// at once: six keys, 31 KB in all. Three are rewritten by every commit
// (state and its two renderings); three are new files (an attempt's prompt
// and raw response, and a round's output, six commits to a round), so the
// log's checkpoints have as many files to fsync as in a real session.
func BenchmarkCommitEngine(b *testing.B) {
	val := func(n int) []byte { return bytes.Repeat([]byte("y"), n) }
	state, status, decisions, prompt, attempt, output := val(10<<10), val(6<<10), val(3<<10), val(6<<10), val(3<<10), val(3<<10)
	benchCommit(b, func(i int) []store.Op {
		round := i / 6
		return []store.Op{
			store.Put("state.json", state),
			store.Put("status.md", status),
			store.Put("decisions.md", decisions),
			store.Put(fmt.Sprintf("round_%03d/prompts/engineer-%d.md", round, i), prompt),
			store.Put(fmt.Sprintf("round_%03d/attempts/engineer-%d.md", round, i), attempt),
			store.Put(fmt.Sprintf("round_%03d/engineer.md", round), output),
		}
	})
}

// BenchmarkOpenWithRecords opens and closes a session folder whose log
// holds 60 commits of BenchmarkCommitEngine's kind (about ten rounds) that
// a clean Close left applied: what every Open pays until the thresholds
// call for a checkpoint, since Open reads the log and compares each key
// it names with its file (rewriting nothing, syncing nothing).
func BenchmarkOpenWithRecords(b *testing.B) {
	dir := b.TempDir()
	s, err := fs.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	val := func(n int) []byte { return bytes.Repeat([]byte("y"), n) }
	for i := range 60 {
		round := i / 6
		err := s.Commit(b.Context(),
			store.Put("state.json", val(10<<10+i)),
			store.Put("status.md", val(6<<10+i)),
			store.Put("decisions.md", val(3<<10+i)),
			store.Put(fmt.Sprintf("round_%03d/prompts/engineer-%d.md", round, i), val(6<<10)),
			store.Put(fmt.Sprintf("round_%03d/attempts/engineer-%d.md", round, i), val(3<<10)),
			store.Put(fmt.Sprintf("round_%03d/engineer.md", round), val(3<<10+i)))
		if err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	if n, err := fs.LoggedRecords(dir); n != 60 || err != nil {
		b.Fatalf("the log holds %d records (%v), want 60", n, err)
	}
	for b.Loop() {
		s, err := fs.Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

func benchCommit(b *testing.B, ops func(i int) []store.Op) {
	size := 0
	for _, op := range ops(0) {
		size += len(op.Value)
	}
	for _, bc := range []struct {
		name string
		opts []fs.Option
	}{
		{"fsync", nil},
		// Commit latency alone: the log is never checkpointed, as in a
		// session of fewer than 64 commits.
		{"fsync-no-checkpoint", []fs.Option{fs.WithCheckpointThresholds(1<<30, 1<<40)}},
		{"nosync", []fs.Option{fs.NoSync()}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var syncs fs.SyncCounts
			s, err := fs.Open(b.TempDir(), append(bc.opts, fs.WithSyncCounter(&syncs))...)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			syncs.Reset()
			ctx := b.Context()
			b.SetBytes(int64(size))
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := s.Commit(ctx, ops(i)...); err != nil {
					b.Fatal(err)
				}
				i++
			}
			// Every commit applied, and the checkpoints they made due.
			if err := fs.Flush(s); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(fs.FileOps(s))/float64(i), "fileops/op")
			counts := syncs.Counts()
			b.ReportMetric(float64(counts["commit"])/float64(i), "commit-syncs/op")
			b.ReportMetric(float64(counts["commit"]+counts["checkpoint"])/float64(i), "syncs/op")
		})
	}
}

// TestPlantedReservedLinks plants links under the store's own names: Open
// must neither delete nor overwrite what they point to.
func TestPlantedReservedLinks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "precious.txt"), []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	want := tree(t, outside)

	for _, name := range []string{".refine-wal", ".refine-staging"} {
		dir := t.TempDir()
		if err := os.Symlink(outside, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
		// A log or staging folder that is a link is not the store's:
		// Open must remove the link only, and never write through it.
		s := open(t, dir)
		commit(t, s, store.Put("a.md", []byte("a")))
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, tree(t, outside)); diff != "" {
			t.Errorf("Open with a planted %s link changed the folder outside (-want +got):\n%s", name, diff)
		}
		if fi, err := os.Lstat(filepath.Join(dir, ".refine-wal")); err != nil || !fi.IsDir() {
			t.Errorf("log folder after a planted %s link: %v, %v; want a real folder", name, fi, err)
		}
	}

	dir2 := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir2, "state.json"), []byte("state"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("state.json", filepath.Join(dir2, ".refine.lock")); err != nil {
		t.Fatal(err)
	}
	if s, err := fs.Open(dir2); err == nil {
		s.Close()
		t.Error("Open took a lock file that is a link")
	}
	if b, _ := os.ReadFile(filepath.Join(dir2, "state.json")); string(b) != "state" {
		t.Errorf("Open through a planted lock link overwrote state.json: %q", b)
	}
}
