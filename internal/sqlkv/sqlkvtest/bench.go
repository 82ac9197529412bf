package sqlkvtest

import (
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/refine-spec/refine/internal/storebench"
	"github.com/refine-spec/refine/store"
)

// Sessions1000 lists 1,000 sessions of db that each have a summary
// record, and reports ms/Sessions.
func Sessions1000(b *testing.B, db store.Backend) {
	ctx := b.Context()
	base := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	for i := range 1000 {
		_, st, err := db.Create(ctx)
		if err != nil {
			b.Fatal(err)
		}
		sum, _ := json.Marshal(store.SessionSummary{Round: i % 7, Outcome: "PAUSED", OpenGaps: map[string]int{"HIGH": 1},
			Created: base, Updated: base.Add(time.Duration(i) * time.Minute), Activity: "waiting: conflict-r2-1"})
		if err := st.Commit(ctx, store.Put(store.SummaryKey, sum), store.Put("state.json", []byte(strings.Repeat("s", 4096)))); err != nil {
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
func Commit4KB(b *testing.B, db store.Backend) {
	ctx := b.Context()
	_, st, err := db.Create(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer st.(io.Closer).Close()
	v := []byte(strings.Repeat("x", 4096))
	b.SetBytes(int64(len(v)))
	for b.Loop() {
		if err := st.Commit(ctx, store.Put("round_003/engineer.md", v)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
}

// Overhead runs storebench.Overhead on sessions db creates.
func Overhead(b *testing.B, db store.Backend) {
	storebench.Overhead(b, func(b *testing.B) store.Store {
		_, st, err := db.Create(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		return st
	})
}

// JournalGrowth commits 1 KB records to a journal key that grows to 64
// records before the next key starts (a round's segment), as an append
// ("append") and as a put of the whole key so far ("put", what a Store
// without Append is handed), and reports commits/s and the bytes handed
// over per commit.
func JournalGrowth(b *testing.B, db store.Backend) {
	record := []byte(strings.Repeat("r", 1023) + "\n")
	for _, mode := range []string{"append", "put"} {
		b.Run(mode, func(b *testing.B) {
			ctx := b.Context()
			_, st, err := db.Create(ctx)
			if err != nil {
				b.Fatal(err)
			}
			defer st.(io.Closer).Close()
			var seg []byte
			n, handed := 0, 0
			for b.Loop() {
				if n%64 == 0 {
					seg = seg[:0]
				}
				key := "journal/" + strconv.Itoa(n/64) + ".jsonl"
				seg = append(seg, record...)
				op := store.Append(key, record)
				if mode == "put" {
					op = store.Put(key, seg)
				}
				if err := st.Commit(ctx, op); err != nil {
					b.Fatal(err)
				}
				handed += len(op.Value)
				n++
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
			b.ReportMetric(float64(handed)/float64(b.N), "bytes-handed/commit")
		})
	}
}
