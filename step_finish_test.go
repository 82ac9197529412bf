package refine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/storetest"
)

// isIntegration reports whether req is an integration-step call.
func isIntegration(req refine.Request) bool {
	for _, m := range req.Messages {
		if strings.Contains(m.Content, "# Integration: write the refined spec") || strings.Contains(m.Content, "# Consistency review of the integrated spec") {
			return true
		}
	}
	return false
}

// The Step that ends a session also plays what follows the end, as Run
// does: the integration step writes final_spec.md. Before, a host that
// drives with Step alone ended with the appendix form for good (Step on a
// finished session refused with ErrFinished).
func TestStepThatEndsTheSessionIntegrates(t *testing.T) {
	ctx := context.Background()
	cfg, _, _ := hooksSession(t, auto(), []string{integrated(integratedOpts{})}, []string{consistencyReview()})
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := s.Step(ctx)
	if err != nil || !rep.Outcome.Terminal() {
		t.Fatalf("step: %s, %v; want a terminal outcome", rep.Outcome, err)
	}
	st, _ := s.Status(ctx)
	if st.FinalSpec != refine.FinalSpecIntegrated {
		t.Errorf("after the Step that ends the session, final spec %q, want %q", st.FinalSpec, refine.FinalSpecIntegrated)
	}
	if _, err := s.Step(ctx); !errors.Is(err, refine.ErrFinished) {
		t.Errorf("a Step on a finished, integrated session: %v, want ErrFinished", err)
	}
}

// A crash at any commit of the ending Step, then a Step in a new process,
// ends where the uncrashed Step did (found by the simulator, seeds 1425,
// 2114 and 5200: the reopened process integrated where its twin had not,
// or the other way round).
func TestStepAfterACrashFinishesTheSession(t *testing.T) {
	ctx := context.Background()
	play := func(failAt int) (refine.Status, int) {
		cfg, _, _ := hooksSession(t, auto(), nil, nil)
		// Roles that answer by the request, not by how many calls came
		// before: a new process repeats the call in flight.
		var calls int
		cfg.Engineer = refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
			calls++
			if isIntegration(req) {
				return refine.Response{Content: integrated(integratedOpts{})}, nil
			}
			return refine.Response{Content: refinetest.EngineerOutput("GAP-HOOK-001", "GAP-HOOK-002")}, nil
		})
		cfg.Reviewer = refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
			if isIntegration(req) {
				return refine.Response{Content: consistencyReview()}, nil
			}
			return refine.Response{Content: refinetest.ReviewerOutput(1, []gap.ID{"GAP-HOOK-001", "GAP-HOOK-002"})}, nil
		})
		faulty := &storetest.Faulty{Store: cfg.Store}
		if failAt > 0 {
			faulty.FailAt = 1 + failAt // New commits once
		}
		cfg.Store = faulty
		s, err := refine.New(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Step(ctx)
		if failAt > 0 && err != nil {
			faulty.FailAt = 0
			if s, err = refine.Open(ctx, cfg); err != nil {
				t.Fatal(err)
			}
			_, err = s.Step(ctx)
		}
		if err != nil {
			t.Fatalf("crash at commit %d: %v", failAt, err)
		}
		st, _ := s.Status(ctx)
		return st, calls
	}
	want, calls := play(0)
	for k := 1; k <= 12; k++ {
		got, n := play(k)
		if got.Outcome != want.Outcome || got.FinalSpec != want.FinalSpec || len(got.Pending) != len(want.Pending) {
			t.Errorf("crash at commit %d: after reopening, Step ended %s (final spec %q, %d pending); uncrashed: %s (%q, %d pending)",
				k, got.Outcome, got.FinalSpec, len(got.Pending), want.Outcome, want.FinalSpec, len(want.Pending))
		}
		if n > calls+1 {
			t.Errorf("crash at commit %d: %d engineer calls, the uncrashed Step made %d (at most one may repeat)", k, n, calls)
		}
	}
}

// A Step that finishes a rollback ends there, whether the rollback was
// chosen inside the round or resumed from its dialog by a new process
// after a crash; before, the resumed one played on into the next round
// (found by the simulator, seed 9282).
func TestStepAfterACrashInARollbackDialog(t *testing.T) {
	ctx := context.Background()
	type stopAt struct {
		Round, Calls int
		Phase        refine.Phase
		Outcome      refine.OutcomeStatus
		Pending      int
	}
	play := func(failAt int) stopAt {
		eng := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
			return refine.Response{Content: refinetest.EngineerOutput(req.Gaps...)}, nil
		})
		rev := refinetest.Func(func(context.Context, refine.Request) (refine.Response, error) {
			return refine.Response{Content: "no review here"}, nil // fails validation
		})
		// Answers by question, the same in every process.
		ask := refine.AskerFunc(func(_ context.Context, q refine.Question) (refine.Answer, error) {
			switch {
			case strings.HasPrefix(q.Title, "Round 1: Reviewer could not produce valid output"):
				return refine.Answer{Key: "6"}, nil // roll back this round
			case strings.HasPrefix(q.Title, "ROUND 1 ROLLBACK OPTIONS"):
				return refine.Answer{Key: "1"}, nil
			}
			return refine.Answer{}, refine.ErrDeferred
		})
		cfg := refinetest.Config(eng, rev, ask, highGaps(1)...)
		cfg.MaxRetries = 0
		faulty := &storetest.Faulty{Store: cfg.Store}
		if failAt > 0 {
			faulty.FailAt = 1 + failAt // New commits once
		}
		cfg.Store = faulty
		s, err := refine.New(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Step(ctx)
		if failAt > 0 && err != nil {
			faulty.FailAt = 0
			if s, err = refine.Open(ctx, cfg); err != nil {
				t.Fatal(err)
			}
			_, err = s.Step(ctx)
		}
		if err != nil {
			t.Fatalf("crash at commit %d: %v", failAt, err)
		}
		st, _ := s.Status(ctx)
		return stopAt{Round: st.Round, Calls: st.Calls, Phase: st.Phase, Outcome: st.Outcome, Pending: len(st.Pending)}
	}
	want := play(0)
	if want.Round != 0 || want.Outcome != refine.StatusRunning {
		t.Fatalf("uncrashed Step stopped at %+v, want round 0 RUNNING (rolled back)", want)
	}
	for k := 1; k <= 8; k++ {
		if got := play(k); got != want {
			t.Errorf("crash at commit %d: after reopening, Step stopped at %+v; uncrashed at %+v", k, got, want)
		}
	}
}
