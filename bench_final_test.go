package refine_test

import (
	"context"
	"testing"
	"time"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
)

// BenchmarkFinalRound500: a round over 500 gaps that ends the session
// (final_spec.md collects all 500 resolutions) against the same round
// when one HIGH gap stays open. Target: final ÷ non-final ≤ 2.
func BenchmarkFinalRound500(b *testing.B) {
	ctx := context.Background()
	eng, rev, _ := instantRoles(0, 0)
	round := func(extra bool) time.Duration {
		gaps := benchGaps(500)
		if extra {
			gaps = append(gaps, gap.Gap{ID: "GAP-OPEN-001", Title: "left open", Severity: gap.High})
		}
		cfg := refinetest.Config(eng, rev, refine.DefaultAsker{}, gaps...)
		cfg.GapsPerRound = 500
		s, err := refine.New(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		rep, err := s.Step(ctx)
		d := time.Since(start)
		if err != nil || rep.Outcome.Terminal() == extra {
			b.Fatalf("step: %+v %v (want terminal: %v)", rep.Outcome, err, !extra)
		}
		return d
	}
	var final, open time.Duration
	for b.Loop() {
		open += round(true)
		final += round(false)
	}
	b.ReportMetric(float64(final)/float64(open), "final/non-final")
}
