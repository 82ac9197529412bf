package sqlite_test

import (
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/internal/storebench"
	"github.com/refine-spec/refine/store/sqlite"
)

// BenchmarkSessions1000 lists 1,000 sessions that each have a summary
// record; the target is under 50 ms per call.
func BenchmarkSessions1000(b *testing.B) {
	db := open(b, filepath.Join(b.TempDir(), "refine.db"), sqlite.Config{})
	ctx := b.Context()
	base := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	for i := range 1000 {
		_, st, err := db.Create(ctx)
		if err != nil {
			b.Fatal(err)
		}
		sum, _ := json.Marshal(refine.SessionSummary{Round: i % 7, Outcome: "PAUSED", OpenGaps: map[string]int{"HIGH": 1},
			Created: base, Updated: base.Add(time.Duration(i) * time.Minute), Activity: "waiting: conflict-r2-1"})
		if err := st.Commit(ctx, refine.Put(refine.SummaryKey, sum), refine.Put("state.json", []byte(strings.Repeat("s", 4096)))); err != nil {
			b.Fatal(err)
		}
		st.(io.Closer).Close()
	}
	for b.Loop() {
		infos, err := db.Sessions(ctx)
		if err != nil || len(infos) != 1000 {
			b.Fatalf("Sessions: %d, %v", len(infos), err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()*1000/float64(b.N), "ms/Sessions")
}

// BenchmarkCommit4KB commits one 4 KB value plus the summary record per
// commit, as a session's durable point does, with synchronous=FULL.
func BenchmarkCommit4KB(b *testing.B) {
	db := open(b, filepath.Join(b.TempDir(), "refine.db"), sqlite.Config{})
	ctx := b.Context()
	_, st, err := db.Create(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer st.(io.Closer).Close()
	v := []byte(strings.Repeat("x", 4096))
	b.SetBytes(int64(len(v)))
	for b.Loop() {
		if err := st.Commit(ctx, refine.Put("round_003/engineer.md", v)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
}

// BenchmarkOverhead: a 5-round session with 20 ms roles on a SQLite
// session; the target is total/role-latency ≤ 1.10.
func BenchmarkOverhead(b *testing.B) {
	db := open(b, filepath.Join(b.TempDir(), "refine.db"), sqlite.Config{})
	storebench.Overhead(b, func(b *testing.B) refine.Store {
		_, st, err := db.Create(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		return st
	})
}
