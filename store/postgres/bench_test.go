package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/refine-spec/refine/store"

	"github.com/refine-spec/refine/internal/pgtest"
	"github.com/refine-spec/refine/internal/sqlkv/sqlkvtest"
	"github.com/refine-spec/refine/store/postgres"
)

// BenchmarkSessions1000 lists 1,000 sessions with summary records; the
// target is under 50 ms per call.
func BenchmarkSessions1000(b *testing.B) {
	sqlkvtest.Sessions1000(b, open(b, pgtest.Database(b), postgres.Config{}))
}

// BenchmarkCommit4KB commits one 4 KB value per commit over loopback.
func BenchmarkCommit4KB(b *testing.B) {
	sqlkvtest.Commit4KB(b, open(b, pgtest.Database(b), postgres.Config{}))
}

// BenchmarkOverhead: a 5-round session with 20 ms roles on a PostgreSQL
// session over loopback; the target is total/role-latency ≤ 1.15.
func BenchmarkOverhead(b *testing.B) {
	sqlkvtest.Overhead(b, open(b, pgtest.Database(b), postgres.Config{}))
}

// BenchmarkJournalGrowth: a journal key growing by 1 KB records, appended
// (what the engine does now) or put whole (before #30).
func BenchmarkJournalGrowth(b *testing.B) {
	sqlkvtest.JournalGrowth(b, open(b, pgtest.Database(b), postgres.Config{}))
}

// BenchmarkSessionsPageScaling lists pages of 50 (the first and one in the
// middle) on databases of 1,000 and 100,000 sessions and reports the
// ratio: keyset pages on the activity index keep it near 1 (issue #30:
// ≤ 2).
func BenchmarkSessionsPageScaling(b *testing.B) {
	ctx := context.Background()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	per := map[int]time.Duration{}
	for _, n := range []int{1000, 100000} {
		dsn := pgtest.Database(b)
		db := open(b, dsn, postgres.Config{})
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			b.Fatal(err)
		}
		_, err = conn.Exec(ctx, `INSERT INTO refine_sessions (id, created_at, updated_at, has_summary, round, outcome, pending, open_gaps, activity)
			SELECT 's-' || lpad(i::text, 6, '0'), $1::bigint, $1::bigint + i::bigint * 1000000000, TRUE, 3, 'PAUSED', 1, '{"HIGH":1}', 'waiting'
			FROM generate_series(0, $2::int - 1) AS i`, base.UnixNano(), n)
		if err == nil {
			_, err = conn.Exec(ctx, `ANALYZE refine_sessions`)
		}
		conn.Close(ctx)
		if err != nil {
			b.Fatal(err)
		}
		mid := store.SessionCursor(store.SessionInfo{ID: fmt.Sprintf("s-%06d", n/2), SessionSummary: store.SessionSummary{Updated: base.Add(time.Duration(n/2) * time.Second)}})
		reqs := []store.PageRequest{{Limit: 50}, {After: mid, Limit: 50}, {Before: mid, Limit: 50}}
		list := func() {
			for _, r := range reqs {
				p, err := store.ListSessions(ctx, db, r)
				if err != nil || len(p.Sessions) != 50 {
					b.Fatalf("ListSessions(%+v): %d sessions, %v", r, len(p.Sessions), err)
				}
			}
		}
		list()
		start := time.Now()
		for range b.N {
			list()
		}
		per[n] = time.Since(start) / time.Duration(b.N*len(reqs))
	}
	b.ReportMetric(float64(per[1000].Microseconds()), "µs/page@1k")
	b.ReportMetric(float64(per[100000].Microseconds()), "µs/page@100k")
	b.ReportMetric(float64(per[100000])/float64(per[1000]), "100k/1k")
}
