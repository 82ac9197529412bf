package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/refine-spec/refine/internal/sqlkv/sqlkvtest"
)

// With a SQLite database's write transaction held by another connection
// (a writer stopped inside a commit), refine status, refine sessions and
// refine export of a session succeed at once: readers open the database
// without the write lock and read through the WAL (issue #39: each failed
// with SQLITE_BUSY after 10 s, for as long as the writer stayed stopped).
func TestReadersIgnoreAFrozenSQLiteWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	db := "sqlite:" + path
	c, out, errb := newTestCLI()
	if code := c.main(context.Background(), []string{"run", "--spec", "testdata/basic/spec.md", "--gaps", "testdata/basic/gaps.md", "--store", db, "--session", "done",
		"--llm", "replay", "--replay", "testdata/basic/replay", "--auto", "--quiet"}); code != exitOK {
		t.Fatalf("run exit %d\n%s\n%s", code, out, errb)
	}

	sqlkvtest.HoldSQLiteWriteLock(t, path)

	for _, args := range [][]string{
		{"status", "--store", db, "--session", "done"},
		{"status", "--store", db, "--session", "done", "--json"},
		{"sessions", "--store", db},
		{"export", "--store", db, "--session", "done", "--dir", filepath.Join(t.TempDir(), "out")},
	} {
		// A bound well below the busy timeout: a reader that waits for the
		// write lock fails here.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c, out, errb := newTestCLI()
		code := c.main(ctx, args)
		cancel()
		if code != exitOK {
			t.Errorf("%s with a write transaction held: exit %d\n%s\n%s", strings.Join(args, " "), code, out, errb)
		}
	}
}
