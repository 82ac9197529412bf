package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/refine-spec/refine/internal/sqlkv/sqlkvtest"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/sqlite"
)

// A writer frozen inside a write transaction (SIGSTOP, a suspended VM)
// blocks no reader: a reader lists the sessions and reads another session
// through the WAL at once, and a writer is refused within its busy
// timeout with the process holding the lock named (issue #39: status,
// sessions, run and resume all failed with SQLITE_BUSY after 10 s, for
// as long as the writer stayed stopped).
func TestFrozenWriterBlocksNoReader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "refine.db")
	frozen, other := newSession(t, path), newSession(t, path)
	w := open(t, path, sqlite.Config{})
	st, err := w.Session(t.Context(), other)
	if err != nil {
		t.Fatal(err)
	}
	sqlkvtest.MustCommit(t, st, store.Put("state.json", []byte(`{"round":2}`)))
	st.(io.Closer).Close()
	w.Close()

	cmd, stdin, out := startChild(t, "freeze", path, frozen)
	if !out.Scan() || out.Text() != "ready" {
		t.Fatalf("child: %q", out.Text())
	}
	defer stdin.Close()

	// Readers: bounded well below the busy timeout, so a read that waited
	// for the lock fails here.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	r, err := sqlite.Open(ctx, path, sqlite.Config{ReadOnly: true})
	if err != nil {
		t.Fatalf("open a reader: %v", err)
	}
	defer r.Close()
	infos, err := r.Sessions(ctx)
	if err != nil || len(infos) != 2 {
		t.Fatalf("Sessions = %v, %v; want both", infos, err)
	}
	v, err := r.View(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	if got := sqlkvtest.MustGet(t, v, "state.json"); got != `{"round":2}` {
		t.Errorf("View: state.json = %q", got)
	}
	if _, err := r.Session(ctx, other); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("Session on a reader: %v, want ErrReadOnly", err)
	}
	if _, _, err := r.Create(ctx); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("Create on a reader: %v, want ErrReadOnly", err)
	}

	// A writer opens (the schema is current: no write lock), and is
	// refused the session within its busy timeout, naming the holder.
	wctx, wcancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer wcancel()
	w = open(t, path, sqlite.Config{BusyTimeout: 200 * time.Millisecond, LeaseTTL: time.Second})
	_, err = w.Session(wctx, other)
	for _, want := range []string{fmt.Sprintf("process %d", cmd.Process.Pid), fmt.Sprintf("child pid %d (session %s)", cmd.Process.Pid, frozen)} {
		if !errors.Is(err, store.ErrLocked) || err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Session while a writer is frozen: %v, want ErrLocked naming %q", err, want)
		}
	}
}

// In this process the holder is named too: another connection of it.
func TestLockedByThisProcessIsNamed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "refine.db")
	id := newSession(t, path)
	sqlkvtest.HoldSQLiteWriteLock(t, path)
	w := open(t, path, sqlite.Config{BusyTimeout: 100 * time.Millisecond})
	_, err := w.Session(t.Context(), id)
	want := fmt.Sprintf("this process (pid %d)", os.Getpid())
	if !errors.Is(err, store.ErrLocked) || !strings.Contains(err.Error(), want) {
		t.Errorf("Session: %v, want ErrLocked naming %q", err, want)
	}
}

// A reader never creates a database, nor migrates one; a writer creates
// its file 0600.
func TestReaderOpensOnlyWhatAWriterMade(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.db")
	if _, err := sqlite.Open(t.Context(), missing, sqlite.Config{ReadOnly: true}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("reader of a missing file: %v, want ErrNotExist", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a reader created %s", missing)
	}
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.Open(t.Context(), empty, sqlite.Config{ReadOnly: true}); err == nil || !strings.Contains(err.Error(), "a reader does not create the schema") {
		t.Errorf("reader of a database without a schema: %v", err)
	}

	path := filepath.Join(dir, "refine.db")
	newSession(t, path)
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(f)
		if err == nil && fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", filepath.Base(f), fi.Mode().Perm())
		}
	}
}
