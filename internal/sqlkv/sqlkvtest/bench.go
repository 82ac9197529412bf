package sqlkvtest

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/internal/storebench"
)

// Sessions1000 lists 1,000 sessions of db that each have a summary
// record, and reports ms/Sessions.
func Sessions1000(b *testing.B, db refine.Backend) {
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

// Commit4KB commits one 4 KB value per commit to a session of db, and
// reports commits/s.
func Commit4KB(b *testing.B, db refine.Backend) {
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

// Overhead runs storebench.Overhead on sessions db creates.
func Overhead(b *testing.B, db refine.Backend) {
	storebench.Overhead(b, func(b *testing.B) refine.Store {
		_, st, err := db.Create(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		return st
	})
}
