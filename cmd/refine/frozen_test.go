package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/refine-spec/refine/mcpserver"
	"github.com/refine-spec/refine/web"

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

	// The console and the MCP server open the store as a writer (they
	// drive sessions): its schema is current, so opening takes no write
	// lock, and their pages and resources read through the WAL.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	b, err := c.serveBackend(ctx, db)
	if err != nil {
		t.Fatalf("open the store for serve/mcp: %v", err)
	}
	defer b.Close()
	console, err := web.New(web.Config{Backend: b})
	if err != nil {
		t.Fatal(err)
	}
	defer console.Close()
	for _, path := range []string{"/", "/sessions/done", "/api/sessions/done"} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "http://localhost"+path, nil).WithContext(ctx)
		console.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Errorf("console GET %s: %d\n%s", path, rec.Code, rec.Body)
		}
	}
	ms, err := mcpserver.New(mcpserver.Config{Backend: b})
	if err != nil {
		t.Fatal(err)
	}
	defer ms.Close()
	st, cl := mcp.NewInMemoryTransports()
	ss, err := ms.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(ctx, cl, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "refine://sessions/done/status.md"})
	if err != nil || len(res.Contents) == 0 || !strings.Contains(res.Contents[0].Text, "COMPLETE") {
		t.Errorf("MCP resource status.md: %v", err)
	}
}
