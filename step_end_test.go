package refine_test

import (
	"context"
	"errors"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/convergence"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/storetest"
)

// A crash between a round's end and its end-of-round question (answered
// at once) must not make the next Step play a whole round more than the
// uncrashed session's: the check is the rest of the round in progress
// (found by the simulator, seeds 16 and 825).
func TestStepAfterACrashFinishesTheRoundsEnd(t *testing.T) {
	ctx := context.Background()
	eng, rev := approvingRoles()
	gaps := append(highGaps(1), gap.Gap{ID: "GAP-TEST-009", Title: "low", Severity: gap.Low})
	run := func(failAt int) (refine.RoundReport, refine.Status) {
		cfg := refinetest.Config(eng, rev, refinetest.Keys(convergence.KeyContinue, convergence.KeyContinue), gaps...)
		cfg.GapsPerRound = 1
		faulty := &storetest.Faulty{Store: cfg.Store}
		if failAt > 0 {
			faulty.FailAt = 1 + failAt // New commits once
		}
		cfg.Store = faulty
		s, err := refine.New(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := s.Step(ctx)
		if failAt > 0 && err != nil {
			if s, err = refine.Open(ctx, cfg); err != nil {
				t.Fatal(err)
			}
			rep, err = s.Step(ctx)
		}
		if err != nil && !errors.Is(err, refine.ErrFinished) {
			t.Fatal(err)
		}
		st, _ := s.Status(ctx)
		return rep, st
	}
	_, want := run(0)
	for k := 1; k <= 8; k++ {
		_, got := run(k)
		if got.Round != want.Round || got.Calls > want.Calls {
			t.Errorf("crash at commit %d: after reopening, Step stopped at round %d with %d calls; uncrashed: round %d, %d calls", k, got.Round, got.Calls, want.Round, want.Calls)
		}
	}
}
