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
