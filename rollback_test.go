package refine_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/rollback"
	"github.com/refine-spec/refine/store/memory"
	"github.com/refine-spec/refine/storetest"
)

// roundsSession runs n rounds, each accepting one HIGH gap, and returns the
// session and its config. The Engineer and Reviewer keep answering for
// retried rounds too.
func roundsSession(t *testing.T, n int, more int) (*refine.Session, refine.Config) {
	t.Helper()
	var gaps []gap.Gap
	for i := 1; i <= n+more; i++ {
		gaps = append(gaps, gap.Gap{ID: gap.ID("GAP-RB-00" + string(rune('0'+i))), Title: "gap", Severity: gap.High})
	}
	eng := refinetest.Func(func(ctx context.Context, req refine.Request) (refine.Response, error) {
		return refine.Response{Content: engineerDoc(req.Gaps[0])}, nil
	})
	rev := refinetest.Func(func(ctx context.Context, req refine.Request) (refine.Response, error) {
		return refine.Response{Content: reviewerDoc(req.Round, req.Gaps[0])}, nil
	})
	cfg := refinetest.Config(eng, rev, auto(), gaps...)
	cfg.GapsPerRound = 1
	cfg.MaxRounds = n
	ctx := context.Background()
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := s.Run(ctx); err != nil || out.Round != n {
		t.Fatalf("setup run: %+v %v", out, err)
	}
	return s, cfg
}

func keys(t *testing.T, cfg refine.Config, prefix string) []string {
	t.Helper()
	k, err := cfg.Store.List(context.Background(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestRollbackFinishedSessionReopensIt(t *testing.T) {
	ctx := context.Background()
	s, cfg := roundsSession(t, 2, 0)
	st, _ := s.Status(ctx)
	if st.Outcome != refine.StatusComplete {
		t.Fatalf("setup outcome %s", st.Outcome)
	}
	rep, err := s.Rollback(ctx, refine.RollbackRequest{To: 1, Reason: "round 2 drifted from the API style"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.Undone, []int{2}) || !slices.Equal(rep.Archives, []string{"round_002_rolled_back_1.tar.gz"}) {
		t.Errorf("report = %+v", rep)
	}
	if len(keys(t, cfg, "round_002/")) != 0 {
		t.Errorf("round_002 still live: %v", keys(t, cfg, "round_002/"))
	}
	for _, k := range []string{"final_spec.md", "final_summary.md"} {
		if _, err := cfg.Store.Get(ctx, k); !errors.Is(err, refine.ErrNotFound) {
			t.Errorf("%s survived the rollback of a finished session", k)
		}
	}
	arch, err := cfg.Store.Get(ctx, "round_002_rolled_back_1.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	files, meta, err := rollback.ReadArchive(arch, rollback.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if meta.OriginalRound != 2 || meta.AttemptNumber != 1 || meta.Reason != "round 2 drifted from the API style" {
		t.Errorf("metadata = %+v", meta)
	}
	var names []string
	for k := range files {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, want := range []string{"decisions_from_round_2.md", "engineer.md", "reviewer.md", "rollback_metadata.json", "summary.md"} {
		if !slices.ContainsFunc(names, func(n string) bool { return strings.HasSuffix(n, want) }) {
			t.Errorf("archive lacks %s: %v", want, names)
		}
	}
	st, _ = s.Status(ctx)
	if st.Round != 1 || st.Outcome != refine.StatusRunning || len(st.Convergence) != 1 || len(st.Rollbacks) != 1 {
		t.Errorf("status after rollback: round %d outcome %s conv %d rollbacks %d", st.Round, st.Outcome, len(st.Convergence), len(st.Rollbacks))
	}
	states := map[gap.ID]gap.State{}
	for _, g := range st.Gaps {
		states[g.ID] = g.State
	}
	if states["GAP-RB-001"] != gap.Accepted || states["GAP-RB-002"] != gap.Open {
		t.Errorf("gap states = %v, want as after round 1", states)
	}
	status := get(t, cfg, "status.md")
	for _, want := range []string{"## Rollback History", "### Round 2 - Rollback 1", "round 2 drifted"} {
		if !strings.Contains(status, want) {
			t.Errorf("status.md lacks %q", want)
		}
	}
	if !strings.Contains(get(t, cfg, "decisions.md"), "## Rollback Notice - Round 2") {
		t.Errorf("decisions.md lacks the rollback notice")
	}
	// The session runs on: round 2 again, then COMPLETE.
	out, err := s.Run(ctx)
	if err != nil || out.Status != refine.StatusComplete || out.Round != 2 {
		t.Fatalf("rerun = %+v %v", out, err)
	}
}

func TestRollbackTargetsAndLimit(t *testing.T) {
	ctx := context.Background()
	s, _ := roundsSession(t, 5, 3)
	// Backups kept: rounds 4, 3, 2 (retention 3; backup r = state after r).
	_, err := s.Rollback(ctx, refine.RollbackRequest{To: 1, Reason: "too far"})
	var unavailable *rollback.UnavailableError
	if !errors.As(err, &unavailable) || !strings.Contains(err.Error(), "available targets: 4, 3, 2") {
		t.Fatalf("rollback to N-4 = %v, want refused with the available targets", err)
	}
	if _, err := s.Rollback(ctx, refine.RollbackRequest{To: 2, Reason: "three rounds"}); err != nil {
		t.Fatalf("rollback to N-3: %v", err)
	}
	if _, err := s.Rollback(ctx, refine.RollbackRequest{To: 5, Reason: "x"}); !errors.Is(err, rollback.ErrOutOfRange) {
		t.Errorf("rollback forward = %v", err)
	}
}

func TestRollbackLimitAtEighth(t *testing.T) {
	ctx := context.Background()
	s, _ := roundsSession(t, 1, 1)
	for i := 1; i <= 8; i++ {
		_, err := s.Rollback(ctx, refine.RollbackRequest{To: 0, Reason: "again"})
		if i <= 7 && err != nil {
			t.Fatalf("rollback %d: %v", i, err)
		}
		if i == 8 && !errors.Is(err, refine.ErrRollbackLimit) {
			t.Fatalf("rollback 8 = %v, want ErrRollbackLimit", err)
		}
		if i < 8 {
			if _, err := s.Step(ctx); err != nil {
				t.Fatalf("step after rollback %d: %v", i, err)
			}
		}
	}
	st, _ := s.Status(ctx)
	if len(st.Rollbacks) != 7 || st.Rollbacks[6].Attempt != 7 {
		t.Errorf("rollbacks = %d, last attempt %d", len(st.Rollbacks), st.Rollbacks[len(st.Rollbacks)-1].Attempt)
	}
}

// A Store failing at any operation during a rollback leaves the session as
// it was before the rollback.
func TestRollbackIsAtomicUnderStoreFaults(t *testing.T) {
	ctx := context.Background()
	for failAt := 1; failAt <= 40; failAt++ {
		s, cfg := roundsSession(t, 2, 0)
		before := map[string]string{}
		for _, k := range keys(t, cfg, "") {
			before[k] = get(t, cfg, k)
		}
		faulty := &storetest.Faulty{Store: cfg.Store, CountAll: true}
		cfg2 := cfg
		cfg2.Store = faulty
		s2, err := refine.Open(ctx, cfg2)
		if err != nil {
			t.Fatal(err)
		}
		_ = s
		faulty.FailAt = faulty.Calls() + failAt // fail the failAt-th call of the rollback
		// Adjustments given: no dialog, so the rollback is one commit.
		if _, err := s2.Rollback(ctx, refine.RollbackRequest{To: 1, Reason: "fault", Adjustments: []string{"be concrete"}}); err == nil {
			if faulty.Calls() < faulty.FailAt {
				return // every operation of the rollback has been failed once
			}
			t.Fatalf("failAt %d: rollback succeeded through an injected fault", failAt)
		} else if !errors.Is(err, storetest.ErrInjected) {
			t.Fatalf("failAt %d: %v", failAt, err)
		}
		after := keys(t, cfg, "")
		if len(after) != len(before) {
			t.Errorf("failAt %d: keys changed from %d to %d", failAt, len(before), len(after))
		}
		for _, k := range after {
			if get(t, cfg, k) != before[k] {
				t.Errorf("failAt %d: %s changed", failAt, k)
			}
		}
	}
}

func TestDivergenceRollBack(t *testing.T) {
	ctx := context.Background()
	// Round 1 accepts; rounds 2 and 3 make no progress (REVISE), so the
	// divergence question comes after round 3; the user rolls back.
	eng := refinetest.Func(func(ctx context.Context, req refine.Request) (refine.Response, error) {
		return refine.Response{Content: engineerDoc(req.Gaps...)}, nil
	})
	revCalls := 0
	rev := refinetest.Func(func(ctx context.Context, req refine.Request) (refine.Response, error) {
		revCalls++
		if revCalls == 1 {
			return refine.Response{Content: reviewerDoc(req.Round, req.Gaps[0])}, nil
		}
		return refine.Response{Content: reviewerDoc(req.Round, req.Gaps[0], "HIGH: still wrong")}, nil
	})
	gaps := []gap.Gap{{ID: "GAP-DV-001", Severity: gap.High}, {ID: "GAP-DV-002", Severity: gap.High}}
	var asked []refine.Question
	ask := refine.AskerFunc(func(ctx context.Context, q refine.Question) (refine.Answer, error) {
		asked = append(asked, q)
		switch {
		case q.Kind == refine.KindDivergence && !slices.ContainsFunc(asked[:len(asked)-1], func(p refine.Question) bool { return p.Kind == refine.KindDivergence }):
			return refine.Answer{Key: "rollback", Text: "Focus on the retry schedule only."}, nil
		case q.Kind == refine.KindDivergence:
			return refine.Answer{Key: "force_complete"}, nil
		}
		return refine.DefaultAsker{}.Ask(ctx, q)
	})
	cfg := refinetest.Config(eng, rev, ask, gaps...)
	cfg.GapsPerRound = 1
	s, _ := refine.New(ctx, cfg)
	out, err := s.Run(ctx)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	var kinds []refine.QuestionKind
	for _, q := range asked {
		kinds = append(kinds, q.Kind)
	}
	if !slices.Contains(kinds, refine.KindDivergence) {
		t.Fatalf("questions = %v, want the divergence question", kinds)
	}
	st, _ := s.Status(ctx)
	if len(st.Rollbacks) == 0 || st.Rollbacks[0].Trigger != rollback.TriggerDivergence {
		t.Fatalf("rollbacks = %+v", st.Rollbacks)
	}
	if !strings.Contains(get(t, cfg, "decisions.md"), "Focus on the retry schedule only.") {
		t.Errorf("the rollback's adjustment is not recorded")
	}
	if out.Status != refine.StatusUserApproved {
		t.Errorf("outcome %s, want USER_APPROVED (force complete at the second warning)", out.Status)
	}
}

func TestRollbackModes(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []rollback.Mode{rollback.ModeInteractive, rollback.ModeAutoRetry, rollback.ModeStrict} {
		t.Run(string(mode), func(t *testing.T) {
			eng := refinetest.Func(func(ctx context.Context, req refine.Request) (refine.Response, error) {
				// Abstract and example-free: patterns fire, adjustments are recommended.
				return refine.Response{Content: "## Gap Resolution: " + string(req.Gaps[0]) + "\n\n**Confidence:** LOW\n\n### Proposed Solution\n\nThis should be handled appropriately and robustly, as needed, in a flexible, scalable, appropriate way, etc.\n\n### Trade-offs\n- fine\n"}, nil
			})
			rev := refinetest.Func(func(ctx context.Context, req refine.Request) (refine.Response, error) {
				return refine.Response{Content: reviewerDoc(req.Round, req.Gaps[0])}, nil
			})
			cfg := refinetest.Config(eng, rev, auto(), gap.Gap{ID: "GAP-MD-001", Severity: gap.High}, gap.Gap{ID: "GAP-MD-002", Severity: gap.High})
			cfg.GapsPerRound, cfg.MaxRounds, cfg.RollbackMode = 1, 1, mode
			s, _ := refine.New(ctx, cfg)
			s.Run(ctx)
			rep, err := s.Rollback(ctx, refine.RollbackRequest{To: 0, Reason: "too abstract"})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Adjustments) == 0 {
				t.Fatalf("no adjustments recommended for an abstract output")
			}
			if rep.AutoApplied != (mode == rollback.ModeAutoRetry) {
				t.Errorf("AutoApplied = %v in %s", rep.AutoApplied, mode)
			}
			if !strings.Contains(rep.Analysis, "## Rollback Analysis - Round 1") {
				t.Errorf("no analysis report after the first rollback in %s: %q", mode, rep.Analysis)
			}
			if (rep.RootCause != "") != (mode == rollback.ModeStrict) {
				t.Errorf("root-cause question after the first rollback = %v in %s", rep.RootCause != "", mode)
			}
			st, _ := s.Status(ctx)
			if st.Rollbacks[0].Mode != mode && !(mode == rollback.ModeStrict && st.Rollbacks[0].Mode == rollback.ModeStrict) {
				t.Errorf("recorded mode %s, want %s", st.Rollbacks[0].Mode, mode)
			}
		})
	}
}

func TestSessionEndArchiveCleanup(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name  string
		cold  bool
		key   string
		check func(t *testing.T, cfg refine.Config, cold refine.Store)
	}{
		{"cold storage by default when configured", true, "", func(t *testing.T, cfg refine.Config, cold refine.Store) {
			keys, _ := cold.List(ctx, "")
			joined := strings.Join(keys, " ")
			for _, want := range []string{"spec_refinement_workflow/manifest.json", "cleanup_log.txt", "_session_session-1/round_002_rolled_back_1.tar.gz"} {
				if !strings.Contains(joined, want) {
					t.Errorf("cold store lacks %s: %v", want, keys)
				}
			}
		}},
		{"delete", false, "2", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, cfg := roundsSession(t, 2, 0)
			if _, err := s.Rollback(ctx, refine.RollbackRequest{To: 1, Reason: "redo round 2"}); err != nil {
				t.Fatal(err)
			}
			var cold refine.Store
			if tt.cold {
				cold = memory.New()
				cfg.ColdStore = cold
			}
			var asked []refine.Question
			cfg.Asker = refine.AskerFunc(func(ctx context.Context, q refine.Question) (refine.Answer, error) {
				asked = append(asked, q)
				if q.Title == "ARCHIVE CLEANUP" && tt.key != "" {
					return refine.Answer{Key: tt.key}, nil
				}
				return refine.DefaultAsker{}.Ask(ctx, q)
			})
			s2, err := refine.Open(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			out, err := s2.Run(ctx)
			if err != nil || out.Status != refine.StatusComplete {
				t.Fatalf("rerun = %+v %v", out, err)
			}
			if !slices.ContainsFunc(asked, func(q refine.Question) bool { return q.Title == "ARCHIVE CLEANUP" }) {
				t.Fatalf("no archive cleanup question; asked %v", kindsOf(asked))
			}
			if k := keys(t, cfg, "round_002_rolled_back"); len(k) != 0 {
				t.Errorf("archives still in the session: %v", k)
			}
			if tt.check != nil {
				tt.check(t, cfg, cold)
			}
			// Asked once only.
			n := len(asked)
			s2.Run(ctx)
			if len(asked) != n {
				t.Errorf("cleanup asked again")
			}
		})
	}
}
