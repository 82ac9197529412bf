package refinetest_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
)

// roles answers as a model that writes the formats exactly: a resolution
// for each gap, a review raising one HIGH issue in round 1 and approving
// after.
func roles() (eng, rev *refinetest.Role) {
	eng = refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		return refine.Response{Content: refinetest.EngineerOutput(req.Gaps...), Usage: refine.Usage{PromptTokens: 100, CompletionTokens: 400}}, nil
	})
	rev = refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		var issues []refinetest.Issue
		if req.Round == 1 && len(req.Gaps) > 0 {
			issues = append(issues, refinetest.Issue{Severity: gap.Low, Gap: req.Gaps[0], Summary: "wording"})
		}
		return refine.Response{Content: refinetest.ReviewerOutput(req.Round, req.Gaps, issues...), Usage: refine.Usage{PromptTokens: 100, CompletionTokens: 200}}, nil
	})
	return eng, rev
}

type ending struct {
	Outcome   refine.OutcomeStatus
	Round     int
	Gaps      map[gap.ID]gap.State
	Decisions []string
}

// play runs a three-gap session with both roles wrapped as cfg says and
// returns how it ended, its role calls and the quirks applied.
func play(t *testing.T, cfg *refinetest.QuirkConfig) (ending, int, []refinetest.QuirkRecord) {
	t.Helper()
	ctx := context.Background()
	e, r := roles()
	var eng, rev refine.Role = e, r
	var qe, qr *refinetest.QuirkyRole
	if cfg != nil {
		qe, qr = refinetest.Quirky(e, *cfg), refinetest.Quirky(r, *cfg)
		eng, rev = qe, qr
	}
	c := refinetest.Config(eng, rev, &refinetest.Asker{DefaultAfterScript: true},
		gap.Gap{ID: "GAP-QK-001", Title: "one", Severity: gap.High},
		gap.Gap{ID: "GAP-QK-002", Title: "two", Severity: gap.Medium},
		gap.Gap{ID: "GAP-QK-003", Title: "three", Severity: gap.Low})
	c.GapsPerRound = 2
	s, err := refine.New(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(ctx); err != nil {
		t.Fatalf("Run: %v", err)
	}
	st, _ := s.Status(ctx)
	end := ending{Outcome: st.Outcome, Round: st.Round, Gaps: map[gap.ID]gap.State{}}
	for _, g := range st.Gaps {
		end.Gaps[g.ID] = g.State
	}
	for _, d := range st.Decisions {
		end.Decisions = append(end.Decisions, d.ID+" "+d.Option)
	}
	var applied []refinetest.QuirkRecord
	if qe != nil {
		applied = append(qe.Applied(), qr.Applied()...)
	}
	return end, st.Calls, applied
}

// Benign quirks change the form only: the session reads the same gaps,
// issues and decisions, ends the same way and makes the same calls. Each
// truncation or refusal costs exactly one more call and changes nothing
// else; a transient error costs one transport retry.
func TestQuirkyCostsExactlyWhatItInjects(t *testing.T) {
	base, baseCalls, _ := play(t, nil)
	for _, tc := range []struct {
		name  string
		rates refinetest.QuirkRates
	}{
		{"benign", refinetest.QuirkRates{Benign: 1}},
		{"realistic", refinetest.RealisticRates},
		{"truncate and refuse", refinetest.QuirkRates{Truncate: 0.4, Refuse: 0.3}},
		{"transient", refinetest.QuirkRates{Transient: 0.5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := uint64(1); seed <= 8; seed++ {
				got, calls, applied := play(t, &refinetest.QuirkConfig{Seed: seed, Rates: tc.rates})
				if d := cmp.Diff(base, got); d != "" {
					t.Fatalf("seed %d: the session ended differently with %v (-plain +quirky):\n%s", seed, applied, d)
				}
				extra := 0
				for _, a := range applied {
					if a.FailureType != "" || a.Kind == "transient" {
						extra++
					}
				}
				if calls != baseCalls+extra {
					t.Errorf("seed %d: %d calls, want %d plain + %d for %v", seed, calls, baseCalls, extra, applied)
				}
				if tc.name == "benign" && len(applied) == 0 {
					t.Errorf("seed %d: no benign quirk applied", seed)
				}
			}
		})
	}
}
