//go:build unix

package postgres_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/refine-spec/refine/internal/pgtest"
	"github.com/refine-spec/refine/internal/sqlkv/sqlkvtest"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/postgres"
)

// stoppedWriterEnv makes the test binary the writer process of
// TestSIGSTOPWriterLosesTheSession.
const stoppedWriterEnv = "REFINE_PGTEST_STOPPED_WRITER"

// The scene with a real process: a writer (a child process, with
// its heartbeat running) is stopped with SIGSTOP inside its commit's
// transaction. A second writer takes the session over within two lease
// periods; once continued, the first writer's commit is refused with
// ErrLocked; every commit of either writer that succeeded is there.
func TestSIGSTOPWriterLosesTheSession(t *testing.T) {
	const lease = 3 * time.Second
	dsn := pgtest.Database(t)
	ctx := t.Context()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestStoppedWriterProcess$")
	cmd.Env = append(os.Environ(), stoppedWriterEnv+"=1", "REFINE_POSTGRES_DSN="+dsn,
		fmt.Sprintf("REFINE_PGTEST_LEASE=%s", lease))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGCONT)
		cmd.Process.Kill()
		cmd.Wait()
	}()
	lines := bufio.NewScanner(stdout)
	expect := func(want string) string {
		t.Helper()
		for lines.Scan() {
			if l := lines.Text(); strings.HasPrefix(l, want) {
				return l
			}
		}
		t.Fatalf("the writer process ended without saying %q: %v", want, lines.Err())
		return ""
	}
	expect("IN-COMMIT")
	// The writer waits for a line on stdin before it sends COMMIT: stop it
	// first, so it is stopped inside its transaction.
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitStopped(t, cmd.Process.Pid)
	start := time.Now()
	if _, err := io.WriteString(stdin, "go\n"); err != nil {
		t.Fatal(err)
	}

	b := open(t, dsn, postgres.Config{Holder: "host-b", LeaseTTL: lease})
	var wb store.Store
	for tries := 0; ; tries++ {
		tctx, cancel := context.WithDeadline(ctx, start.Add(2*lease))
		wb, err = b.Session(tctx, "s")
		cancel()
		if err == nil {
			break
		}
		if !errors.Is(err, store.ErrLocked) {
			t.Fatalf("Session while the writer is stopped: %v; want ErrLocked", err)
		}
		if time.Since(start) > 2*lease {
			t.Fatalf("after %v and %d tries the second writer has not taken the session over, want within 2 lease periods (%v): %v", time.Since(start), tries, 2*lease, err)
		}
		select { // the lease expires with time: poll
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Logf("taken over %v after SIGSTOP (lease %v)", time.Since(start).Round(time.Millisecond), lease)
	defer wb.(io.Closer).Close()
	sqlkvtest.MustCommit(t, wb, store.Put("state.json", []byte("b1")), store.Put("b/1", []byte("z")))

	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if l := expect("COMMIT "); l != "COMMIT REFUSED" {
		t.Errorf("the stopped writer, continued: %q; want its commit refused with ErrLocked", l)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("writer process: %v", err)
	}
	sqlkvtest.MustCommit(t, wb, store.Put("b/2", []byte("w"))) // still b's
	want := map[string]string{"state.json": "b1", "a/1": "x", "b/1": "z", "b/2": "w"}
	if !equalStores(t, want, dump(t, wb)) {
		t.Error("after the takeover the session lost a commit or kept the refused one")
	}
}

// waitStopped returns once every thread of process pid is stopped, as
// /proc shows (Linux; elsewhere it returns at once). SIGSTOP stops a
// process's threads one after another, and until the last one stops, it
// may still run.
func waitStopped(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
		if err != nil || len(tasks) == 0 {
			return // no /proc here
		}
		running := ""
		for _, task := range tasks {
			b, err := os.ReadFile(task)
			if err != nil {
				continue // the thread ended
			}
			// pid (comm) state ...: the state follows the last ')'.
			if f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:])); len(f) > 0 && f[0] != "T" {
				running = task + ": " + f[0]
			}
		}
		if running == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d not stopped 10 s after SIGSTOP: %s", pid, running)
		}
		time.Sleep(time.Millisecond) // polling /proc: no event tells
	}
}

// TestStoppedWriterProcess is the writer process of
// TestSIGSTOPWriterLosesTheSession; it does nothing in a normal run. It
// says IN-COMMIT from inside its second commit's transaction, waits for a
// line on stdin, and reports what became of that commit.
func TestStoppedWriterProcess(t *testing.T) {
	if os.Getenv(stoppedWriterEnv) != "1" {
		t.Skip("the writer process of TestSIGSTOPWriterLosesTheSession")
	}
	lease, err := time.ParseDuration(os.Getenv("REFINE_PGTEST_LEASE"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	db := open(t, os.Getenv("REFINE_POSTGRES_DSN"), postgres.Config{Holder: "host-a", LeaseTTL: lease})
	st, err := db.CreateNamed(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	sqlkvtest.MustCommit(t, st, store.Put("state.json", []byte("a1")), store.Put("a/1", []byte("x")))
	in := bufio.NewReader(os.Stdin)
	first := true
	postgres.SetCommitHook(st.(*postgres.Store), func(ctx context.Context, tx pgx.Tx) error {
		if first {
			first = false
			fmt.Println("IN-COMMIT")
			if _, err := in.ReadString('\n'); err != nil {
				return err
			}
		}
		return nil
	})
	err = st.Commit(ctx, store.Put("state.json", []byte("a2")), store.Put("a/2", []byte("y")))
	switch {
	case errors.Is(err, store.ErrLocked):
		fmt.Println("COMMIT REFUSED")
	case err == nil:
		fmt.Println("COMMIT APPLIED")
	default:
		fmt.Printf("COMMIT FAILED %v\n", err)
	}
	st.(io.Closer).Close()
}
