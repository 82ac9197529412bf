package web

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/sqlite"
)

// sqliteWithSessions returns a SQLite Backend holding n sessions with
// summaries, written in one transaction (creating them one by one would
// take minutes at 100,000).
func sqliteWithSessions(b *testing.B, n int) store.Backend {
	b.Helper()
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "sessions.db")
	db, err := sqlite.Open(ctx, path, sqlite.Config{})
	if err != nil {
		b.Fatal(err)
	}
	db.Close()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		b.Fatal(err)
	}
	tx, err := raw.Begin()
	if err != nil {
		b.Fatal(err)
	}
	stmt, err := tx.Prepare(`INSERT INTO refine_sessions (id, created_at, updated_at, has_summary, round, outcome, pending, open_gaps, activity)
		VALUES (?, ?, ?, 1, 3, 'PAUSED', 1, '{"HIGH":1}', 'waiting: conflict-r3-ISSUE-R2-001')`)
	if err != nil {
		b.Fatal(err)
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	for i := range n {
		if _, err := stmt.Exec(fmt.Sprintf("s-%06d", i), base, base+int64(i)*int64(time.Second)); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	raw.Close()
	db, err = sqlite.Open(ctx, path, sqlite.Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

// BenchmarkSessionListScaling times the console's list page and GET
// /api/sessions (pages of 50, first and a deep page) on SQLite Backends
// of 1,000 and 100,000 sessions, and reports the ratio: with keyset pages
// it stays near 1 (issue #30: ≤ 2).
func BenchmarkSessionListScaling(b *testing.B) {
	sizes := []int{1000, 100000}
	perPage := map[int]time.Duration{}
	for _, n := range sizes {
		backend := sqliteWithSessions(b, n)
		srv, err := New(Config{Backend: backend})
		if err != nil {
			b.Fatal(err)
		}
		hs := httptest.NewServer(srv)
		deep := store.SessionCursor(store.SessionInfo{ID: fmt.Sprintf("s-%06d", n/2),
			SessionSummary: store.SessionSummary{Updated: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(n/2) * time.Second)}})
		paths := []string{"/", "/api/sessions", "/?after=" + deep, "/api/sessions?after=" + deep}
		get := func(p string) {
			req, _ := http.NewRequest(http.MethodGet, hs.URL+p, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil || resp.StatusCode != http.StatusOK {
				b.Fatalf("GET %s: %v %v", p, err, resp)
			}
			resp.Body.Close()
		}
		for _, p := range paths {
			get(p) // warm
		}
		start := time.Now()
		for range b.N {
			for _, p := range paths {
				get(p)
			}
		}
		perPage[n] = time.Since(start) / time.Duration(b.N*len(paths))
		hs.Close()
		srv.Close()
	}
	b.ReportMetric(float64(perPage[1000].Microseconds()), "µs/page@1k")
	b.ReportMetric(float64(perPage[100000].Microseconds()), "µs/page@100k")
	b.ReportMetric(float64(perPage[100000])/float64(perPage[1000]), "100k/1k")
}
