package refine_test

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/store/fs"
	"github.com/refine-spec/refine/store/memory"
	"github.com/refine-spec/refine/store/sqlite"
)

// plainStore hides every optional capability of the Store it wraps: a
// SQL store as it was before it appended and copied (#30).
type plainStore struct{ refine.Store }

// BenchmarkSQLStoreBytes: the 50-round session of BenchmarkStoreBytes
// (one gap a round, realistic output sizes) on store/fs, store/sqlite and
// store/memory, counting the bytes handed to each Store's Commit. It
// reports SQLite's bytes against fs's, for the session and for the worst
// round (target ≤ 1.05), memory's against fs's (Postgres shares SQLite's
// Store code and hands over the same ops as memory:
// sqlkvtest.SessionAppendsAndCopies), and SQLite without Append and Copy,
// as before #30, against fs.
func BenchmarkSQLStoreBytes(b *testing.B) {
	ctx := context.Background()
	eng, rev := realisticRoles(0)
	const rounds = 50
	run := func(st refine.Store) *byteCounter {
		cfg := refinetest.Config(eng, rev, refine.DefaultAsker{}, benchGaps(rounds)...)
		cfg.Spec = realisticSpec()
		cfg.GapsPerRound, cfg.MaxRounds = 1, 60
		c := &byteCounter{Store: st, byRound: map[int]int{}}
		cfg.Store, cfg.Observer = c, c
		s, err := refine.New(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		out, err := s.Run(ctx)
		if err != nil || out.Round != rounds {
			b.Fatalf("%+v %v", out, err)
		}
		if c, ok := st.(io.Closer); ok {
			if err := c.Close(); err != nil {
				b.Fatal(err)
			}
		}
		return c
	}
	var onFS, onSQL, onPlain, inMemory *byteCounter
	for b.Loop() {
		fst, err := fs.Open(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		onFS = run(fst)
		db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "refine.db"), sqlite.Config{})
		if err != nil {
			b.Fatal(err)
		}
		_, st, err := db.Create(ctx)
		if err != nil {
			b.Fatal(err)
		}
		onSQL = run(st)
		_, st, err = db.Create(ctx)
		if err != nil {
			b.Fatal(err)
		}
		onPlain = run(plainStore{st})
		st.(io.Closer).Close()
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
		inMemory = run(memory.New())
	}
	worst := 0.0
	for r := 1; r < rounds; r++ {
		if onFS.byRound[r] > 0 {
			worst = max(worst, float64(onSQL.byRound[r])/float64(onFS.byRound[r]))
		}
	}
	b.ReportMetric(float64(onSQL.total)/float64(onFS.total), "sqlite/fs-bytes")
	b.ReportMetric(worst, "max-round-sqlite/fs-bytes")
	b.ReportMetric(float64(inMemory.total)/float64(onFS.total), "memory/fs-bytes")
	b.ReportMetric(float64(onPlain.total)/float64(onFS.total), "sqlite-before/fs-bytes")
	b.ReportMetric(float64(onSQL.total)/rounds/1024, "sqlite-KiB/round")
	b.ReportMetric(float64(onPlain.total)/rounds/1024, "sqlite-before-KiB/round")
}
