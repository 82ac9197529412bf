package sqlite_test

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/refine-spec/refine/internal/sqlkv/sqlkvtest"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/sqlite"
)

// A writer whose lease expired is taken over, and then cannot commit:
// fencing, checked inside the commit's transaction.
func TestLeaseTakeoverFencesTheOldWriter(t *testing.T) {
	sqlkvtest.LeaseTakeover(t, opener(filepath.Join(t.TempDir(), "refine.db")))
}

// A commit that fails inside its transaction (the process dying there is
// the same to SQLite) leaves nothing of itself.
func TestFailedCommitAppliesNothing(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "refine.db"), sqlite.Config{})
	ctx := t.Context()
	_, st, err := db.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sqlkvtest.MustCommit(t, st, store.Put("a", []byte("1")), store.Put("b", []byte("1")))
	boom := errors.New("boom")
	sqlite.SetCommitHook(st.(*sqlite.Store), func() error { return boom })
	if err := st.Commit(ctx, store.Put("a", []byte("2")), store.Delete("b"), store.Put(store.SummaryKey, []byte(`{"round":9}`))); !errors.Is(err, boom) {
		t.Fatalf("Commit error = %v, want the hook's", err)
	}
	sqlite.SetCommitHook(st.(*sqlite.Store), nil)
	if got := sqlkvtest.MustGet(t, st, "a") + sqlkvtest.MustGet(t, st, "b"); got != "11" {
		t.Errorf("after the failed commit a+b = %q, want 11", got)
	}
	infos, err := db.Sessions(ctx)
	if err != nil || len(infos) != 1 || infos[0].Round != 0 {
		t.Errorf("Sessions after the failed commit = %+v, %v; want round 0", infos, err)
	}
}

// Closing the database under a live writer (the SQLite form of a dropped
// connection) gives a clear error, and the session resumes on a new DB.
func TestClosedDatabaseThenResume(t *testing.T) {
	path := filepath.Join(t.TempDir(), "refine.db")
	db, err := sqlite.Open(t.Context(), path, sqlite.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	id, st, err := db.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sqlkvtest.MustCommit(t, st, store.Put("state.json", []byte("1")))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	err = st.Commit(ctx, store.Put("state.json", []byte("2")))
	if err == nil || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("commit after the database closed: error = %v, want one saying it is closed", err)
	}
	db2 := open(t, path, sqlite.Config{})
	st2, err := db2.Session(ctx, id)
	if err != nil {
		t.Fatalf("resume on a new DB: %v", err)
	}
	if got := sqlkvtest.MustGet(t, st2, "state.json"); got != "1" {
		t.Errorf("state.json = %q, want 1", got)
	}
}

func TestSchemaMigrationIsIdempotent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "refine.db")
	ctx := t.Context()
	db := open(t, path, sqlite.Config{})
	id, st, err := db.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sqlkvtest.MustCommit(t, st, store.Put("state.json", []byte("1")))
	st.(io.Closer).Close()
	db.Close()
	again := open(t, path, sqlite.Config{})
	if st, err := again.View(ctx, id); err != nil || sqlkvtest.MustGet(t, st, "state.json") != "1" {
		t.Fatalf("reopening: View: %v", err)
	}
	again.Close()

	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	var v int
	if err := raw.QueryRow(`SELECT version FROM refine_schema`).Scan(&v); err != nil || v != sqlite.SchemaVersion {
		t.Errorf("schema version = %d, %v; want %d", v, err, sqlite.SchemaVersion)
	}
	if _, err := raw.Exec(`UPDATE refine_schema SET version = 99`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	if _, err := sqlite.Open(ctx, path, sqlite.Config{}); err == nil || !strings.Contains(err.Error(), "upgrade refine") {
		t.Errorf("Open of a newer schema: error = %v, want one saying to upgrade refine", err)
	}
}

// child runs the helper process the multi-process tests start: it opens
// the session named by the environment and either holds it until stdin
// closes, or commits forever.
func TestMain(m *testing.M) {
	switch os.Getenv("REFINE_SQLITE_CHILD") {
	case "":
		os.Exit(m.Run())
	case "hold":
		os.Exit(childHold())
	case "commit":
		os.Exit(childCommit())
	case "freeze":
		os.Exit(childFreeze())
	}
}

// childFreeze holds session REFINE_SQLITE_ID's lease and a write
// transaction open, as a writer stopped inside a commit, until stdin
// closes.
func childFreeze() int {
	db, st, err := childOpen()
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	defer db.Close()
	defer st.(io.Closer).Close()
	raw, err := sql.Open("sqlite", "file:"+os.Getenv("REFINE_SQLITE_PATH")+"?_txlock=immediate")
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	defer raw.Close()
	tx, err := raw.Begin()
	if err == nil {
		_, err = tx.Exec(`UPDATE refine_sessions SET round = round + 1`)
	}
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	tx.Rollback()
	return 0
}

func childOpen() (*sqlite.DB, store.Store, error) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, os.Getenv("REFINE_SQLITE_PATH"), sqlite.Config{Holder: "child pid " + strconv.Itoa(os.Getpid())})
	if err != nil {
		return nil, nil, err
	}
	st, err := db.Session(ctx, os.Getenv("REFINE_SQLITE_ID"))
	return db, st, err
}

func childHold() int {
	db, st, err := childOpen()
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	st.(io.Closer).Close()
	db.Close()
	return 0
}

func childCommit() int {
	_, st, err := childOpen()
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	// Large values, so the kill often lands inside a commit.
	pad := strings.Repeat("p", 256<<10)
	for i := 1; ; i++ {
		v := []byte(strconv.Itoa(i) + " " + pad)
		if err := st.Commit(context.Background(), store.Put("pair/a", v), store.Put("pair/b", v), store.Put(fmt.Sprintf("log/%06d", i), nil)); err != nil {
			fmt.Println("error:", err)
			return 1
		}
		fmt.Println("committed", i)
	}
}

func startChild(t *testing.T, mode, path, id string) (*exec.Cmd, io.WriteCloser, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "REFINE_SQLITE_CHILD="+mode, "REFINE_SQLITE_PATH="+path, "REFINE_SQLITE_ID="+id)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, stdin, bufio.NewScanner(out)
}

func newSession(t *testing.T, path string) string {
	t.Helper()
	db := open(t, path, sqlite.Config{})
	id, st, err := db.Create(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	st.(io.Closer).Close()
	db.Close()
	return id
}

// Two processes on one session: the second is refused, told who holds it,
// and gets it once the first closes.
func TestTwoProcessesOneSession(t *testing.T) {
	path := filepath.Join(t.TempDir(), "refine.db")
	id := newSession(t, path)
	cmd, stdin, out := startChild(t, "hold", path, id)
	if !out.Scan() || out.Text() != "ready" {
		t.Fatalf("child: %q", out.Text())
	}
	db := open(t, path, sqlite.Config{})
	_, err := db.Session(t.Context(), id)
	want := fmt.Sprintf("held by child pid %d", cmd.Process.Pid)
	if !errors.Is(err, store.ErrLocked) || !strings.Contains(err.Error(), want) {
		t.Fatalf("Session while the child holds it: error = %v, want ErrLocked containing %q", err, want)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	st, err := db.Session(t.Context(), id)
	if err != nil {
		t.Fatalf("Session after the child closed: %v", err)
	}
	st.(io.Closer).Close()
}

// A writer killed mid-commit leaves every commit whole: the two keys it
// always writes together agree, at least the commits it reported are
// there, and its session is taken over once the lease expires.
func TestWriterKilledMidCommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "refine.db")
	id := newSession(t, path)
	cmd, _, out := startChild(t, "commit", path, id)
	last := 0
	for out.Scan() && last < 20 {
		if _, err := fmt.Sscanf(out.Text(), "committed %d", &last); err != nil {
			t.Fatalf("child: %q", out.Text())
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	for out.Scan() { // reports the kill raced with
		fmt.Sscanf(out.Text(), "committed %d", &last)
	}

	db := open(t, path, sqlite.Config{})
	if _, err := db.Session(t.Context(), id); !errors.Is(err, store.ErrLocked) {
		t.Fatalf("Session right after the kill: error = %v, want ErrLocked (the dead writer's lease is live)", err)
	}
	later := open(t, path, sqlite.Config{Now: func() time.Time { return time.Now().Add(time.Hour) }})
	st, err := later.Session(t.Context(), id)
	if err != nil {
		t.Fatalf("Session after the dead writer's lease expired: %v", err)
	}
	defer st.(io.Closer).Close()
	a, b := sqlkvtest.MustGet(t, st, "pair/a"), sqlkvtest.MustGet(t, st, "pair/b")
	if a != b {
		t.Fatalf("pair/a and pair/b differ (%.10q vs %.10q): a commit was half applied", a, b)
	}
	n, _ := strconv.Atoi(strings.Fields(a)[0])
	logs, err := st.List(t.Context(), "log/")
	if err != nil {
		t.Fatal(err)
	}
	if n < last || len(logs) != n {
		t.Errorf("after the kill: pair holds commit %d with %d log keys; the child reported %d commits", n, len(logs), last)
	}
}

// The heartbeat keeps an idle writer's lease alive (an LLM call takes
// minutes without a commit) and Close ends it.
func TestHeartbeatRenewsTheLease(t *testing.T) {
	sqlkvtest.Heartbeat(t, opener(filepath.Join(t.TempDir(), "refine.db")), func(b store.Backend, tick <-chan time.Time, beat func(error)) {
		sqlite.SetHeartbeat(b.(*sqlite.DB), tick, beat)
	})
}
