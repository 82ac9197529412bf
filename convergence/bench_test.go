package convergence

import (
	"testing"

	"github.com/refine-spec/refine/gap"
)

// benchLedgers builds a 200-gap round: 200 gaps of mixed severity, of which
// the round accepts 20, defers 5, reopens 5, splits 2 and adds 10.
func benchLedgers(b *testing.B) (before, after *gap.Ledger) {
	before = &gap.Ledger{}
	sev := []gap.Severity{gap.Critical, gap.High, gap.Medium, gap.Low}
	for n := 1; n <= 200; n++ {
		if err := before.Add(gap.Gap{ID: gid(n), Severity: sev[n%4]}); err != nil {
			b.Fatal(err)
		}
	}
	for n := 191; n <= 195; n++ {
		accept(b, before, gid(n), 0)
	}
	after = before.Clone()
	for n := 1; n <= 20; n++ {
		accept(b, after, gid(n), 1)
	}
	for n := 21; n <= 25; n++ {
		move(b, after, gid(n), 1, gap.Deferred)
	}
	for n := 191; n <= 195; n++ {
		move(b, after, gid(n), 1, gap.NeedsRevision)
	}
	for _, n := range []int{30, 31} {
		move(b, after, gid(n), 1, gap.Superseded)
		for _, c := range []byte{'a', 'b'} {
			if err := after.Add(gap.Gap{ID: gid(n).Child(c), Parent: gid(n)}); err != nil {
				b.Fatal(err)
			}
		}
	}
	for n := 201; n <= 210; n++ {
		if err := after.Add(gap.Gap{ID: gid(n)}); err != nil {
			b.Fatal(err)
		}
	}
	return before, after
}

func BenchmarkMeasure(b *testing.B) {
	before, after := benchLedgers(b)
	w := gap.DefaultWeights()
	want := Row{Round: 1, GapsStart: 195, Resolved: 20, Deferred: 5, New: 10, Reopened: 5}
	if got := Measure(1, before, after, w); got.Resolved != want.Resolved || got.New != want.New || got.Reopened != want.Reopened || got.Deferred != want.Deferred || got.GapsStart != want.GapsStart {
		b.Fatalf("bench ledgers measure %+v, want counts of %+v", got, want)
	}
	b.ReportAllocs()
	for b.Loop() {
		Measure(1, before, after, w)
	}
}

func BenchmarkTrackerRecord(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		var tr Tracker
		for r := 1; r <= 10; r++ {
			tr.Record(Row{Round: r, Net: r%3 - 1, WeightedNet: r%3 - 1})
		}
	}
}

func BenchmarkSVG99(b *testing.B) {
	rows := svgRows(99)
	b.ReportAllocs()
	for b.Loop() {
		SVG(rows)
	}
}
