package core_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/rollback"
	"github.com/refine-spec/refine/store/memory"
	"github.com/refine-spec/refine/storetest"
)

// Rollback through a whole Session: targets, limits, modes, every dialog
// and its cancel, atomicity under Store faults, decision recovery and the
// archives.

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

// A rollback carried out after its options question is one commit with
// the decision the question recorded: a crash at any commit of that run,
// then a reopen, never keeps the rollback and loses the decision (found
// by the session simulator, #23: seeds 194, 818, 1218, where the decision
// had a commit of its own).
func TestRollbackDialogDecisionsAreDurableWithTheRollback(t *testing.T) {
	ctx := context.Background()
	roles := func() (refine.Role, refine.Role) {
		eng := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
			return refine.Response{Content: refinetest.EngineerOutput(req.Gaps...)}, nil
		})
		rev := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
			return refine.Response{Content: refinetest.ReviewerOutput(req.Round, req.Gaps)}, nil
		})
		return eng, rev
	}
	for failAt := 1; failAt <= 6; failAt++ {
		mem := memory.New()
		eng, rev := roles()
		cfg := refinetest.Config(eng, rev, refine.DeferAsker{},
			gap.Gap{ID: "GAP-TEST-001", Title: "The first gap", Severity: gap.High},
			gap.Gap{ID: "GAP-TEST-002", Title: "The second gap", Severity: gap.High},
			gap.Gap{ID: "GAP-TEST-003", Title: "The third gap", Severity: gap.High})
		cfg.GapsPerRound = 1
		cfg.Store = mem
		s, err := refine.New(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		for st, _ := s.Status(ctx); st.Round < 2; st, _ = s.Status(ctx) {
			if _, err := s.Step(ctx); err != nil {
				t.Fatal(err)
			}
		}
		rep, err := s.Rollback(ctx, refine.RollbackRequest{To: 1, Reason: "retry round 2"})
		if err != nil || len(rep.Pending) != 1 {
			t.Fatalf("Rollback = %+v, %v; want the options question", rep, err)
		}
		q := rep.Pending[0]
		key := q.Default
		a := refine.Answer{Key: key}
		if slices.Contains(q.TextRequired, key) {
			a.Text = "be concrete"
		}
		if err := s.Answer(ctx, q.ID, a); err != nil {
			t.Fatal(err)
		}
		// The run that carries the rollback out crashes at its failAt-th commit.
		cfg.Store = &crashingStore{Store: mem, failAt: failAt}
		crashing, err := refine.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := crashing.Run(ctx); err != nil && !errors.Is(err, errCrash) {
			t.Fatalf("failAt %d: Run = %v", failAt, err)
		}
		cfg.Store = mem
		reopened, err := refine.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := reopened.Status(ctx)
		if len(st.Rollbacks) == 0 {
			continue // crashed before the rollback: nothing to lose
		}
		if !slices.ContainsFunc(st.Decisions, func(d refine.DecisionStatus) bool { return d.Option == key }) {
			t.Errorf("failAt %d: the rollback is durable but the options question's decision (%q) is not: decisions %+v", failAt, key, st.Decisions)
		}
	}
}

// storeBytes reads every key of the session's store.
func storeBytes(t *testing.T, cfg refine.Config) map[string]string {
	t.Helper()
	ctx := context.Background()
	ks, err := cfg.Store.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, k := range ks {
		b, err := cfg.Store.Get(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		out[k] = string(b)
	}
	return out
}

// failingAsker refuses every question, as `refine rollback --option` does
// with an option the question does not offer.
type failingAsker struct{ asked []refine.Question }

func (a *failingAsker) Ask(_ context.Context, q refine.Question) (refine.Answer, error) {
	a.asked = append(a.asked, q)
	return refine.Answer{}, errors.New("--option: 9 is not offered")
}

// A rollback whose question the Asker cannot answer changes nothing: no
// question left pending, no write (#40 item 1).
func TestRollbackAskerFailureChangesNothing(t *testing.T) {
	ctx := context.Background()
	_, cfg := roundsSession(t, 2, 0)
	before := storeBytes(t, cfg)
	a := &failingAsker{}
	cfg.Asker = a
	s, err := refine.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := s.Rollback(ctx, refine.RollbackRequest{To: 1, Reason: "first try"})
	if err == nil || len(a.asked) != 1 || len(rep.Undone) != 0 {
		t.Fatalf("rollback = %+v, %v after %d questions; want the Asker's error after one", rep, err, len(a.asked))
	}
	if diff := cmp.Diff(before, storeBytes(t, cfg)); diff != "" {
		t.Errorf("the store changed (-before +after):\n%s", diff)
	}
	st, err := s.Status(ctx)
	if err != nil || st.Outcome != refine.StatusComplete || len(st.Pending) != 0 {
		t.Errorf("status after the refusal = %s with %d pending, %v; want COMPLETE with none", st.Outcome, len(st.Pending), err)
	}
}

// Every rollback dialog offers "cancel", which leaves the session exactly
// as before the request (#40 item 1; DESIGN §12).
func TestRollbackCancelInEveryDialog(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, title string
		setup       func(*refine.Settings)
		earlier     bool // a first rollback (not cancelled) before the one cancelled
	}{
		{"options", "ROUND 2 ROLLBACK OPTIONS", nil, false},
		{"root-cause analysis", "ROLLBACK ROOT CAUSE ANALYSIS", func(c *refine.Settings) { c.RollbackMode = rollback.ModeStrict }, false},
		{"repeated rollback", "REPEATED ROLLBACK DETECTED", nil, true},
		{"limit", "SESSION ROLLBACK LIMIT REACHED", func(c *refine.Settings) { c.RollbackLimit = 1 }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, cfg := roundsSession(t, 2, 0)
			sc := &script{answers: []scripted{{tc.title, refine.Answer{Key: "cancel"}}}}
			cfg.Asker = sc
			s, err := refine.Open(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if tc.setup != nil {
				set := s.Settings()
				tc.setup(&set)
				if err := s.SetSettings(ctx, set); err != nil {
					t.Fatal(err)
				}
			}
			if tc.earlier {
				// Rolled back and played again: round 2's second rollback follows.
				if _, err := s.Rollback(ctx, refine.RollbackRequest{To: 1, Reason: "first", Adjustments: []string{"be concrete"}}); err != nil {
					t.Fatal(err)
				}
				if _, err := s.Run(ctx); err != nil {
					t.Fatal(err)
				}
			}
			before := storeBytes(t, cfg)
			stBefore, _ := s.Status(ctx)
			sc.asked = nil
			rep, err := s.Rollback(ctx, refine.RollbackRequest{To: 1, Reason: "again"})
			if err != nil || !rep.Cancelled || len(rep.Undone) != 0 {
				t.Fatalf("rollback = %+v, %v; asked %v", rep, err, sc.titles())
			}
			q, ok := sc.find(tc.title)
			if !ok {
				t.Fatalf("%s not asked; asked %v", tc.title, sc.titles())
			}
			if o, ok := q.Option("cancel"); !ok || !strings.HasPrefix(o.Label, "Cancel the rollback") {
				t.Errorf("%s offers no cancel: %+v", tc.title, q.Options)
			}
			if diff := cmp.Diff(before, storeBytes(t, cfg)); diff != "" {
				t.Errorf("cancel changed the store (-before +after):\n%s", diff)
			}
			if st, _ := s.Status(ctx); st.Outcome != stBefore.Outcome || len(st.Rollbacks) != len(stBefore.Rollbacks) || len(st.Decisions) != len(stBefore.Decisions) {
				t.Errorf("status after cancel: %s, %d rollbacks, %d decisions; before %s, %d, %d", st.Outcome, len(st.Rollbacks), len(st.Decisions),
					stBefore.Outcome, len(stBefore.Rollbacks), len(stBefore.Decisions))
			}
		})
	}
}

// A rollback left waiting is answered by the same request only: one with
// another target or reason is refused, naming the waiting one, and changes
// nothing; the waiting one's "cancel" brings back the questions it set
// aside (#40 item 1).
func TestRollbackRequestOtherThanThePendingOne(t *testing.T) {
	ctx := context.Background()
	_, cfg := roundsSession(t, 2, 0)
	cfg.Asker = refine.DeferAsker{}
	s, err := refine.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := s.Rollback(ctx, refine.RollbackRequest{To: 1, Reason: "first try"})
	if err != nil || len(rep.Pending) != 1 {
		t.Fatalf("deferred rollback = %+v, %v", rep, err)
	}
	if st, _ := s.Status(ctx); st.Outcome != refine.StatusComplete || len(st.Pending) != 1 {
		t.Errorf("while the rollback waits: %s with %d pending, want COMPLETE with 1", st.Outcome, len(st.Pending))
	}
	waiting := storeBytes(t, cfg)
	_, err = s.Rollback(ctx, refine.RollbackRequest{To: 0, Reason: "only undo round 2"})
	var pe *refine.PendingRollbackError
	if !errors.Is(err, refine.ErrRollbackPending) || !errors.As(err, &pe) || pe.Round != 2 || pe.To != 1 || pe.Reason != "first try" || pe.Question != rep.Pending[0].ID {
		t.Fatalf("other request = %v (%+v), want a PendingRollbackError naming round 2 to 1, \"first try\"", err, pe)
	}
	if !strings.Contains(err.Error(), `"cancel"`) {
		t.Errorf("the refusal does not say how to cancel: %v", err)
	}
	if diff := cmp.Diff(waiting, storeBytes(t, cfg)); diff != "" {
		t.Errorf("the refused request changed the store (-before +after):\n%s", diff)
	}
	if _, err := s.Rollback(ctx, refine.RollbackRequest{To: 1, Reason: "first try"}); !errors.Is(err, refine.ErrDeferred) {
		t.Errorf("the same request again = %v, want ErrDeferred (it waits)", err)
	}
	if err := s.Answer(ctx, rep.Pending[0].ID, refine.Answer{Key: "cancel"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(ctx); err != nil {
		t.Fatal(err)
	}
	st, _ := s.Status(ctx)
	if st.Outcome != refine.StatusComplete || len(st.Rollbacks) != 0 || st.Round != 2 || len(st.Pending) != 0 {
		t.Errorf("after cancel: %s after round %d, %d rollbacks, %d pending", st.Outcome, st.Round, len(st.Rollbacks), len(st.Pending))
	}
	if d := get(t, cfg, "decisions.md"); strings.Contains(d, "ROLLBACK") {
		t.Errorf("decisions.md records the cancelled rollback:\n%s", d)
	}
}

// "cancel" in the dialog of a rollback chosen in the divergence question
// goes back to that question, which is asked again (#40 item 1).
func TestDivergenceRollbackCancelAsksAgain(t *testing.T) {
	ctx := context.Background()
	sc := &script{answers: []scripted{
		{"Divergence", refine.Answer{Key: "rollback", Text: "the last round went astray"}},
		{"ROUND 3 ROLLBACK OPTIONS", refine.Answer{Key: "cancel"}},
		{"Divergence", refine.Answer{Key: "stop"}},
	}}
	s, err := refine.New(ctx, divergingConfig(sc))
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil {
		t.Fatalf("run: %v (asked %v)", err, sc.titles())
	}
	var got []string
	for _, title := range sc.titles() {
		if strings.HasPrefix(title, "Divergence") || strings.Contains(title, "ROLLBACK") {
			got = append(got, title)
		}
	}
	if diff := cmp.Diff([]string{"Divergence warning after round 3", "ROUND 3 ROLLBACK OPTIONS", "Divergence warning after round 3"}, got); diff != "" {
		t.Errorf("questions (-want +got):\n%s", diff)
	}
	st, _ := s.Status(ctx)
	if out.Status != refine.StatusStallExit || len(st.Rollbacks) != 0 {
		t.Errorf("outcome %s with %d rollbacks, want STALL_EXIT without any", out.Status, len(st.Rollbacks))
	}
}

// script answers questions by title prefix (first match in order; each
// entry used once), everything else with its default, and records them.
type script struct {
	answers []scripted
	asked   []refine.Question
}

type scripted struct {
	title string
	a     refine.Answer
}

func (s *script) Ask(ctx context.Context, q refine.Question) (refine.Answer, error) {
	s.asked = append(s.asked, q)
	for i, sc := range s.answers {
		if strings.HasPrefix(q.Title, sc.title) {
			s.answers = slices.Delete(s.answers, i, i+1)
			return sc.a, nil
		}
	}
	return refine.DefaultAsker{}.Ask(ctx, q)
}

func (s *script) titles() []string {
	var out []string
	for _, q := range s.asked {
		out = append(out, q.Title)
	}
	return out
}

func (s *script) find(prefix string) (refine.Question, bool) {
	for _, q := range s.asked {
		if strings.HasPrefix(q.Title, prefix) {
			return q, true
		}
	}
	return refine.Question{}, false
}

// archiveFiles reads an archive of the session.
func archiveFiles(t *testing.T, cfg refine.Config, key string) map[string][]byte {
	t.Helper()
	b, err := cfg.Store.Get(context.Background(), key)
	if err != nil {
		t.Fatalf("archive %s: %v", key, err)
	}
	files, _, err := rollback.ReadArchive(b, rollback.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func hasSuffixKey(files map[string][]byte, suffix string) bool {
	for k := range files {
		if strings.HasSuffix("/"+k, suffix) {
			return true
		}
	}
	return false
}

// The 8th rollback asks the limit question instead of failing bare;
// "Abandon session" ends the session.
func TestRollbackLimitQuestion(t *testing.T) {
	ctx := context.Background()
	s, cfg := roundsSession(t, 1, 1)
	sc := &script{answers: []scripted{{"SESSION ROLLBACK LIMIT REACHED", refine.Answer{Key: "3"}}}}
	cfg.Asker = sc
	s2, err := refine.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	_ = s
	for i := 1; i <= 7; i++ {
		if _, err := s2.Rollback(ctx, refine.RollbackRequest{To: 0, Reason: "again", Adjustments: []string{"be concrete"}}); err != nil {
			t.Fatalf("rollback %d: %v", i, err)
		}
		if _, err := s2.Step(ctx); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	_, err = s2.Rollback(ctx, refine.RollbackRequest{To: 0, Reason: "again", Adjustments: []string{"x"}})
	if !errors.Is(err, refine.ErrRollbackLimit) {
		t.Fatalf("8th rollback = %v, want ErrRollbackLimit after the question", err)
	}
	q, ok := sc.find("SESSION ROLLBACK LIMIT REACHED")
	if !ok {
		t.Fatalf("no limit question; asked %v", sc.titles())
	}
	for _, want := range []string{"Used: 7 of 7 rollback attempts", "Possible causes:", "Note: Additional rollbacks are not available."} {
		if !strings.Contains(q.Body, want) {
			t.Errorf("limit question lacks %q:\n%s", want, q.Body)
		}
	}
	var keys []string
	for _, o := range q.Options {
		keys = append(keys, o.Key+" "+o.Label)
	}
	if len(keys) != 5 || !strings.Contains(keys[1], "Accept current state") || !strings.Contains(keys[3], "Prompt refresh") || keys[4] != "cancel Cancel the rollback: the session stays as it was before the request" {
		t.Errorf("limit options = %v", keys)
	}
	st, _ := s2.Status(ctx)
	if st.Outcome != refine.StatusAbandoned {
		t.Errorf("outcome %s, want ABANDONED", st.Outcome)
	}
}

// AUTO_RETRY: the first rollback of a round asks nothing, applies the
// automatic adjustments, writes the Auto-Retry block; the retried round's
// outcome is recorded; analysis.md is in the archive.
func TestAutoRetryFirstRollback(t *testing.T) {
	ctx := context.Background()
	_, cfg := roundsSession(t, 1, 1)
	sc := &script{}
	cfg.Asker = sc
	cfg.RollbackMode = rollback.ModeAutoRetry
	s, err := refine.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetRollbackMode(ctx, rollback.ModeAutoRetry); err != nil {
		t.Fatal(err)
	}
	rep, err := s.Rollback(ctx, refine.RollbackRequest{To: 0, Reason: "output too abstract"})
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.asked) != 0 {
		t.Errorf("AUTO_RETRY asked %v on a first rollback", sc.titles())
	}
	if !rep.AutoApplied || len(rep.Undone) != 1 {
		t.Errorf("report = %+v", rep)
	}
	files := archiveFiles(t, cfg, "round_001_rolled_back_1.tar.gz")
	if !hasSuffixKey(files, "/analysis.md") {
		t.Errorf("archive lacks analysis.md")
	}
	status := get(t, cfg, "status.md")
	for _, want := range []string{"## Round 1 Auto-Retry", "**Attempt:** 1 of 2 before user prompt", "**Note:** User not prompted. Second failure will trigger interactive mode."} {
		if !strings.Contains(status, want) {
			t.Errorf("status.md lacks %q", want)
		}
	}
	if _, err := s.Step(ctx); err != nil {
		t.Fatal(err)
	}
	status = get(t, cfg, "status.md")
	for _, want := range []string{"**Outcome:** Successful on retry", "- **Outcome:** Retry successful", "| Successful Retries | 1 |"} {
		if !strings.Contains(status, want) {
			t.Errorf("status.md after the retry lacks %q", want)
		}
	}
	st, _ := s.Status(ctx)
	if st.Rollbacks[0].Outcome != "Retry successful" || !st.Rollbacks[0].Succeeded {
		t.Errorf("rollback record = %+v", st.Rollbacks[0])
	}
	if !strings.Contains(get(t, cfg, "decisions.md"), "round_001_rolled_back_1.tar.gz (round_001_rolled_back/decisions_from_round_1.md)") {
		t.Errorf("decisions.md rollback notice does not name the archive file")
	}
}

// INTERACTIVE without adjustments asks the rollback options; the second
// rollback of the same round asks REPEATED ROLLBACK DETECTED, and the
// split creates sub-gaps, supersedes the parent and counts in the summary.
func TestRepeatedRollbackSplit(t *testing.T) {
	ctx := context.Background()
	_, cfg := roundsSession(t, 1, 1)
	sc := &script{answers: []scripted{
		{"ROUND 1 ROLLBACK OPTIONS", refine.Answer{Key: "3", Text: "Cover the retry timing with numbers."}},
		{"REPEATED ROLLBACK DETECTED", refine.Answer{Key: "1", Text: "Rollback state restoration\nRollback user experience"}},
	}}
	cfg.Asker = sc
	s, err := refine.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Rollback(ctx, refine.RollbackRequest{To: 0, Reason: "mechanics unclear"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Step(ctx); err != nil {
		t.Fatal(err)
	}
	rep, err := s.Rollback(ctx, refine.RollbackRequest{To: 0, Reason: "now the UX is unclear instead"})
	if err != nil {
		t.Fatal(err)
	}
	// The Step that ends the session also asks its archive cleanup.
	got := slices.DeleteFunc(sc.titles(), func(t string) bool { return t == "ARCHIVE CLEANUP" })
	if len(got) < 2 || got[0] != "ROUND 1 ROLLBACK OPTIONS" || got[1] != "REPEATED ROLLBACK DETECTED" {
		t.Fatalf("questions = %v", got)
	}
	q, _ := sc.find("REPEATED ROLLBACK DETECTED")
	for _, want := range []string{"Round 1 has been rolled back twice.", "=== Rollback History ===", "Attempt 1: \"mechanics unclear\" (user)", "=== Possible Root Causes ===", "=== Recommended Actions ==="} {
		if !strings.Contains(q.Body, want) {
			t.Errorf("analysis question lacks %q:\n%s", want, q.Body)
		}
	}
	if rep.RootCause == "" || len(rep.Undone) != 1 {
		t.Errorf("report = %+v", rep)
	}
	states := gapStates(t, s)
	if states["GAP-RB-001"] != gap.Superseded || states["GAP-RB-001a"] != gap.Open || states["GAP-RB-001b"] != gap.Open {
		t.Errorf("gap states after split = %v", states)
	}
	status := get(t, cfg, "status.md")
	for _, want := range []string{"| Gaps Split | 1 (GAP-RB-001 -> 2 sub-gaps) |", "User Decision:** Split gap into 001a, 001b", "Root Cause Analysis:** Performed"} {
		if !strings.Contains(status, want) {
			t.Errorf("status.md lacks %q", want)
		}
	}
	// The first rollback's retry was rolled back again: failed.
	st, _ := s.Status(ctx)
	if st.Rollbacks[0].Outcome == "" || st.Rollbacks[0].Succeeded {
		t.Errorf("first rollback outcome = %q", st.Rollbacks[0].Outcome)
	}
	// The retried round takes the first sub-gap.
	rr, err := s.Step(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rr.Round != 1 || !slices.Contains(rr.Accepted, "GAP-RB-001a") {
		t.Errorf("retried round = %+v", rr)
	}
}

// A "rollback" answer to the divergence question: its text is the reason,
// never a round number; "multiple rounds" asks the target (keys are round
// numbers) and the confirmation; the decision is filed under the round in
// which it was made.
func TestDivergenceRollbackDialogs(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name    string
		answers []scripted
		to      int
		undone  []int
	}{
		{"free text is the reason", []scripted{
			{"Divergence", refine.Answer{Key: "rollback", Text: "rollback: include at least 3 examples"}},
			{"ROUND 3 ROLLBACK OPTIONS", refine.Answer{Key: "3"}},
		}, 2, []int{3}},
		{"multi-round target and confirmation", []scripted{
			{"Divergence", refine.Answer{Key: "rollback", Text: "the last rounds went in a bad direction"}},
			{"ROUND 3 ROLLBACK OPTIONS", refine.Answer{Key: "4"}},
			{"ROLLBACK OPTIONS", refine.Answer{Key: "1"}},
			{"MULTI-ROUND ROLLBACK", refine.Answer{Key: "1"}},
		}, 1, []int{3, 2}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sc := &script{answers: tt.answers}
			cfg := divergingConfig(sc)
			s, err := refine.New(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Run(ctx); err != nil {
				t.Fatalf("run: %v (asked %v)", err, sc.titles())
			}
			st, _ := s.Status(ctx)
			if len(st.Rollbacks) != len(tt.undone) {
				t.Fatalf("rollbacks = %+v; asked %v", st.Rollbacks, sc.titles())
			}
			for i, r := range st.Rollbacks {
				if r.Round != tt.undone[i] || r.Target != tt.to {
					t.Errorf("rollback %d = round %d to %d, want %d to %d", i, r.Round, r.Target, tt.undone[i], tt.to)
				}
			}
			if q, ok := sc.find("ROLLBACK OPTIONS"); ok && strings.HasPrefix(q.Title, "ROLLBACK") {
				var keys []string
				for _, o := range q.Options {
					keys = append(keys, o.Key)
				}
				if strings.Join(keys, ",") != "2,1,0,cancel" {
					t.Errorf("target keys = %v, want the round numbers", keys)
				}
			}
			dec := get(t, cfg, "decisions.md")
			if !strings.Contains(dec, "## Round 3") || !strings.Contains(dec, "DECISION-R3-001") {
				t.Errorf("the divergence decision is not filed under round 3:\n%s", dec)
			}
		})
	}
}

// divergingConfig is a session whose third round raises the divergence
// warning, asking a.
func divergingConfig(a refine.Asker) refine.Config {
	eng, rev := stallingRoles()
	gaps := []gap.Gap{{ID: "GAP-DV-001", Severity: gap.High}, {ID: "GAP-DV-002", Severity: gap.High}}
	cfg := refinetest.Config(eng, rev, a, gaps...)
	cfg.GapsPerRound, cfg.MaxRounds, cfg.StallRounds = 1, 3, 3
	return cfg
}

// Approve refuses while a CRITICAL conflict is unresolved (ErrBlocked
// naming it); Abandon always works.
func TestApproveAndAbandon(t *testing.T) {
	ctx := context.Background()
	issue := "schema must reject unknown fields (GAP-TEST-001)"
	eng := refinetest.Script(engineerDoc("GAP-TEST-001"), disagreeDoc("GAP-TEST-001", "ISSUE-R1-001", issue))
	rev := refinetest.Script(reviewerDoc(1, "GAP-TEST-001", "CRITICAL: schema must reject unknown fields"))
	cfg := refinetest.Config(eng, rev, refine.DeferAsker{})
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil || out.Status != refine.StatusPaused {
		t.Fatalf("run = %+v %v, want paused at the conflict", out, err)
	}
	err = s.Approve(ctx, refine.ApproveRequest{Note: "ship it"})
	if !errors.Is(err, refine.ErrBlocked) || !strings.Contains(err.Error(), "ISSUE-R1-001") {
		t.Fatalf("approve = %v, want ErrBlocked naming ISSUE-R1-001", err)
	}
	if err := s.Abandon(ctx, "out of time"); err != nil {
		t.Fatal(err)
	}
	st, _ := s.Status(ctx)
	if st.Outcome != refine.StatusAbandoned || len(st.Pending) != 0 {
		t.Errorf("after abandon: %s pending %d", st.Outcome, len(st.Pending))
	}
	if err := s.Abandon(ctx, "again"); !errors.Is(err, refine.ErrFinished) {
		t.Errorf("second abandon = %v", err)
	}

	// Approve mid-session without conflicts: USER_APPROVED at once.
	cfg2 := refinetest.Config(refinetest.Script(engineerDoc("GAP-TEST-001")), refinetest.Script(reviewerDoc(1, "GAP-TEST-001", "HIGH: unclear")), refine.DefaultAsker{})
	cfg2.MaxRounds = 5
	s2, _ := refine.New(ctx, cfg2)
	if _, err := s2.Step(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s2.Approve(ctx, refine.ApproveRequest{Note: "good enough for v1"}); err != nil {
		t.Fatal(err)
	}
	out, err = s2.Run(ctx)
	if err != nil || out.Status != refine.StatusUserApproved || !strings.Contains(out.Reason, "good enough for v1") {
		t.Errorf("after approve: %+v %v", out, err)
	}
}

// A HIGH Reviewer issue naming no gap becomes GAP-REVIEW-001, counted New.
func TestReviewerIssueWithoutGapBecomesGap(t *testing.T) {
	ctx := context.Background()
	noGap := "## Review: overall consistency\n\n### Critical Issues\n\nNone found\n\n### High Priority\n\n- **ISSUE-R1-001**: The spec never says who owns retries\n  - Location: overall\n  - Impact: two teams implement it twice\n  - Suggestion: name the owner\n\n### Medium Priority\n\nNone found\n\n### Low Priority / Nits\n\nNone found\n"
	eng := refinetestFunc(func(req refine.Request) string { return engineerDoc(req.Gaps...) })
	revCalls := 0
	rev := refinetestFunc(func(req refine.Request) string {
		revCalls++
		if revCalls == 1 {
			return noGap
		}
		return reviewerDoc(req.Round, req.Gaps[0])
	})
	cfg := refinetest.Config(eng, rev, refine.DefaultAsker{})
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	states := gapStates(t, s)
	if _, ok := states["GAP-REVIEW-001"]; !ok {
		t.Fatalf("no GAP-REVIEW-001; gaps %v", states)
	}
	st, _ := s.Status(ctx)
	if st.Convergence[0].New != 1 {
		t.Errorf("round 1 New = %d, want 1 (the review gap)", st.Convergence[0].New)
	}
	if out.Status != refine.StatusComplete || out.Round >= cfg.MaxRounds {
		t.Errorf("outcome %+v, want COMPLETE before MAX_ROUNDS", out)
	}
}

// A finished session whose only pending question is the archive cleanup
// reports its outcome, with the question pending.
func TestFinishedWithCleanupQuestionPending(t *testing.T) {
	ctx := context.Background()
	s, cfg := roundsSession(t, 2, 0)
	if _, err := s.Rollback(ctx, refine.RollbackRequest{To: 1, Reason: "redo", Adjustments: []string{"be concrete"}}); err != nil {
		t.Fatal(err)
	}
	cfg.Asker = refine.DeferAsker{}
	s2, err := refine.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s2.Run(ctx)
	if err != nil || out.Status != refine.StatusComplete || len(out.Pending) != 1 || out.Pending[0].Title != "ARCHIVE CLEANUP" {
		t.Fatalf("run = %+v %v, want COMPLETE with the cleanup question pending", out, err)
	}
	st, _ := s2.Status(ctx)
	if st.Outcome != refine.StatusComplete || len(st.Pending) != 1 {
		t.Errorf("status %s pending %d", st.Outcome, len(st.Pending))
	}
	status := get(t, cfg, "status.md")
	for _, want := range []string{"COMPLETE (the archive cleanup question waits for an answer)", "## Pending Questions", "Default (automated mode):", "round_002_rolled_back_1.tar.gz"} {
		if !strings.Contains(status, want) {
			t.Errorf("status.md lacks %q", want)
		}
	}
}

// Stalled rounds say so in the summary and status.md.
func TestStalledRoundSaysNoNetProgress(t *testing.T) {
	ctx := context.Background()
	eng, rev := stallingRoles()
	cfg := refinetest.Config(eng, rev, refine.DefaultAsker{})
	cfg.MaxRounds = 1
	s, _ := refine.New(ctx, cfg)
	if _, err := s.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(get(t, cfg, "round_001/summary.md"), "No net progress this round") {
		t.Errorf("summary lacks the no-progress line")
	}
	if !strings.Contains(get(t, cfg, "status.md"), "No net progress this round") {
		t.Errorf("status.md lacks the no-progress line")
	}
}

// roleFunc adapts a content function to a Role.
func refinetestFunc(f func(req refine.Request) string) refine.Role {
	return refine.RoleFunc(func(_ context.Context, req refine.Request) (refine.Response, error) {
		return refine.Response{Content: f(req)}, nil
	})
}

// conflictSection is the decisions.md section of the resolution of issue.
func conflictSection(doc, issue string) string {
	i := strings.Index(doc, "\n### "+issue+":")
	if i < 0 {
		return ""
	}
	line, _, _ := strings.Cut(doc[i+1:], "\n")
	return section(doc, line)
}

// "Modify before re-applying" asks which decision and what it becomes
// (MODIFY DECISION), changes that one only and asks again for the others:
// re-applied afterwards, they read in decisions.md byte for byte as when
// re-applied unchanged (#40 item 2a; round-06 Example 5).
func TestDecisionRecoveryModifiesOneDecision(t *testing.T) {
	ctx := context.Background()
	const edit = "Choice: 2 consecutive FLAT rounds, then a warning\nRationale: agreed with the hosts"

	// Both re-applied unchanged.
	s, cfg, sc, _, _ := example5Session(t, scripted{"DECISION RECOVERY", refine.Answer{Key: "3"}})
	if _, err := s.Step(ctx); err != nil {
		t.Fatalf("retry: %v (asked %v)", err, sc.titles())
	}
	plain := get(t, cfg, "decisions.md")

	// DECISION-R6-002 modified, then DECISION-R6-001 re-applied.
	s, cfg, sc, _, _ = example5Session(t,
		scripted{"DECISION RECOVERY", refine.Answer{Key: "4"}},
		scripted{"MODIFY DECISION", refine.Answer{Key: "2", Text: edit}},
		scripted{"DECISION RECOVERY", refine.Answer{Key: "1"}},
	)
	if _, err := s.Step(ctx); err != nil {
		t.Fatalf("retry: %v (asked %v)", err, sc.titles())
	}
	var got []string
	for _, q := range sc.asked {
		if q.Title == "DECISION RECOVERY" || q.Title == "MODIFY DECISION" {
			got = append(got, q.Title+" "+q.ID)
		}
	}
	if want := "DECISION RECOVERY rollback-recovery-r6; MODIFY DECISION rollback-modify-r6-2; DECISION RECOVERY rollback-recovery-r6-3"; strings.Join(got, "; ") != want {
		t.Errorf("questions %q, want %q", strings.Join(got, "; "), want)
	}
	mq, _ := sc.find("MODIFY DECISION")
	for _, want := range []string{"1. DECISION-R6-001: Conflict ISSUE-R5-001", "2. DECISION-R6-002: Conflict ISSUE-R5-002", "Only that decision changes"} {
		if !strings.Contains(mq.Body, want) {
			t.Errorf("MODIFY DECISION lacks %q:\n%s", want, mq.Body)
		}
	}
	if o, ok := mq.Option("back"); !ok || mq.Default != "back" || !strings.Contains(o.Label, "nothing changes") {
		t.Errorf("MODIFY DECISION offers no way back as its default: %+v", mq.Options)
	}
	again := sc.asked[len(sc.asked)-1]
	for _, q := range sc.asked {
		if q.ID == "rollback-recovery-r6-3" {
			again = q
		}
	}
	if !strings.Contains(again.Body, "Re-applied as modified: DECISION-R6-002.") || strings.Contains(again.Body, "DECISION-R6-002:") {
		t.Errorf("the recovery question asked again does not list only the others:\n%s", again.Body)
	}

	modified := get(t, cfg, "decisions.md")
	if a, b := conflictSection(plain, "ISSUE-R5-001"), conflictSection(modified, "ISSUE-R5-001"); a == "" || a != b {
		t.Errorf("the decision not modified changed:\n--- re-applied unchanged:\n%s\n--- after modifying the other:\n%s", a, b)
	}
	two := conflictSection(modified, "ISSUE-R5-002")
	if two == "" {
		t.Fatalf("decisions.md lacks the modified decision:\n%s", modified)
	}
	for _, want := range []string{"2 consecutive FLAT rounds, then a warning", "agreed with the hosts", "(modified)"} {
		if !strings.Contains(two, want) {
			t.Errorf("the modified decision lacks %q:\n%s", want, two)
		}
	}
	if strings.Count(modified, "(modified)") != 1 {
		t.Errorf("the edit reached more than one decision:\n%s", modified)
	}
	if conflictSection(plain, "ISSUE-R5-002") == two {
		t.Error("the modified decision reads as the unchanged one")
	}
}

// Back from MODIFY DECISION changes nothing and asks the recovery question
// again; automated mode (no one to edit) goes back and leaves the
// decisions archived.
func TestDecisionRecoveryModifyBack(t *testing.T) {
	ctx := context.Background()
	s, cfg, sc, _, _ := example5Session(t, scripted{"DECISION RECOVERY", refine.Answer{Key: "4", Text: "Choice: weights 8, 4, 2, 1"}})
	if _, err := s.Step(ctx); err != nil {
		t.Fatalf("retry: %v (asked %v)", err, sc.titles())
	}
	mq, ok := sc.find("MODIFY DECISION")
	if !ok || len(mq.TextRequired) != 0 || !strings.Contains(mq.Body, `uses the text given with "Modify": "Choice: weights 8, 4, 2, 1"`) {
		t.Errorf("MODIFY DECISION with the text given with Modify: %+v", mq)
	}
	dec := get(t, cfg, "decisions.md")
	if strings.Contains(dec, "(modified)") || conflictSection(dec, "ISSUE-R5-001") != "" || conflictSection(dec, "ISSUE-R5-002") != "" {
		t.Errorf("going back re-applied something:\n%s", dec)
	}
	if n := strings.Count(strings.Join(sc.titles(), ";"), "DECISION RECOVERY"); n != 2 {
		t.Errorf("DECISION RECOVERY asked %d times, want 2 (again after back); asked %v", n, sc.titles())
	}
}

// repeatedRollback plays round 1 of a one-gap session, rolls it back
// (reason, with an adjustment: no question), plays it again and rolls it
// back again (reason), the repeated-rollback question answered by a.
// Attempt k of the round writes the extra section sections[k] and draws
// the Reviewer finding findings[k] against the gap.
func repeatedRollback(t *testing.T, a refine.Answer, reasons, sections, findings [2]string) (*refine.Session, *script, refine.RollbackReport) {
	t.Helper()
	ctx := context.Background()
	const id gap.ID = "GAP-HOOK-001"
	var mu sync.Mutex
	calls := map[refine.RoleName]int{}
	next := func(r refine.RoleName) int {
		mu.Lock()
		defer mu.Unlock()
		calls[r]++
		return min(calls[r], 2) - 1
	}
	eng := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		extra := "### " + sections[next(refine.Engineer)] + "\n\nWhat this attempt addressed, in detail.\n\n### Trade-offs"
		return refine.Response{Content: strings.Replace(engineerDoc(req.Gaps...), "### Trade-offs", extra, 1)}, nil
	})
	rev := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		f := findings[next(refine.Reviewer)]
		return refine.Response{Content: refinetest.ReviewerOutput(req.Round, req.Gaps, refinetest.Issue{Severity: gap.Medium, Gap: id, Summary: f})}, nil
	})
	sc := &script{answers: []scripted{{"REPEATED ROLLBACK DETECTED", a}}}
	cfg := refinetest.Config(eng, rev, sc, gap.Gap{ID: id, Title: "Retry schedule", Severity: gap.High}, gap.Gap{ID: "GAP-HOOK-002", Title: "Signatures", Severity: gap.Medium})
	cfg.GapsPerRound, cfg.MaxRounds = 1, 1
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Step(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Rollback(ctx, refine.RollbackRequest{To: 0, Reason: reasons[0], Adjustments: []string{"Be concrete."}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Step(ctx); err != nil {
		t.Fatal(err)
	}
	rep, err := s.Rollback(ctx, refine.RollbackRequest{To: 0, Reason: reasons[1]})
	if err != nil {
		t.Fatalf("second rollback: %v (asked %v)", err, sc.titles())
	}
	return s, sc, rep
}

// shownSplit returns the sub-gap titles the analysis question shows.
func shownSplit(body string) []string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if _, title, ok := strings.Cut(l, "  - GAP-HOOK-001"); ok && len(title) > 3 {
			out = append(out, strings.Trim(title[3:], `"`))
		}
	}
	return out
}

// The split "as suggested" is offered with its sub-gaps shown, whatever
// the recommendation (#40 item 2b), and each sub-gap comes from a distinct
// concern the analysis found: a section only one attempt wrote, or a
// Reviewer finding, the same finding worded twice counting once (#40 item
// 2c). Answering it creates the sub-gaps shown.
func TestRepeatedRollbackSplitAsShown(t *testing.T) {
	ctx := context.Background()
	s, sc, _ := repeatedRollback(t, refine.Answer{Key: "1"},
		[2]string{"output too abstract", "output too abstract"}, // the same failure: context is recommended
		[2]string{"Backoff schedule", "Dead-letter queue"},
		[2]string{"Retry timing still unclear", "Retry timing unclear again"})
	q, ok := sc.find("REPEATED ROLLBACK DETECTED")
	if !ok {
		t.Fatalf("no repeated-rollback question; asked %v", sc.titles())
	}
	if o, _ := q.Option("1"); o.Label != "Split gap as suggested" || o.Recommended || q.Default == "1" {
		t.Errorf("option 1 = %+v (default %q), want the split as suggested, not recommended", o, q.Default)
	}
	if !strings.Contains(q.Body, "recommended action: Provide additional context") || !strings.Contains(q.Body, "If you split it instead, suggested split:\n") {
		t.Errorf("the analysis does not show the split it offers:\n%s", q.Body)
	}
	shown := shownSplit(q.Body)
	want := []string{"Retry schedule: Backoff schedule", "Retry schedule: Dead-letter queue", "Retry schedule: Retry timing still unclear"}
	if diff := cmp.Diff(want, shown); diff != "" {
		t.Errorf("suggested sub-gaps (-want +got):\n%s\n%s", diff, q.Body)
	}
	st, _ := s.Status(ctx)
	var children []string
	for _, g := range st.Gaps {
		if g.ID.Parent() == "GAP-HOOK-001" && g.ID != "GAP-HOOK-001" {
			children = append(children, g.Title)
		}
	}
	if diff := cmp.Diff(shown, children); diff != "" {
		t.Errorf("the sub-gaps created are not those shown (-shown +created):\n%s", diff)
	}
}

// Concerns that are one (the same finding worded twice, sections every
// attempt wrote) suggest no split: the split is offered only with titles
// given as text, and nothing is shown as suggested (#40 items 2b, 2c).
func TestRepeatedRollbackNoSplitWithoutConcerns(t *testing.T) {
	_, sc, _ := repeatedRollback(t, refine.Answer{Key: "3"},
		[2]string{"output too abstract", "output too abstract"},
		[2]string{"Delivery log", "Delivery log"},
		[2]string{"Retry timing still unclear", "Retry timing unclear again"})
	q, ok := sc.find("REPEATED ROLLBACK DETECTED")
	if !ok {
		t.Fatalf("no repeated-rollback question; asked %v", sc.titles())
	}
	if o, _ := q.Option("1"); o.Label != "Split gap (give sub-gap titles, one per line)" || !slices.Contains(q.TextRequired, "1") {
		t.Errorf("option 1 = %+v (text required: %v), want a split that asks for titles", o, q.TextRequired)
	}
	for _, o := range q.Options {
		if strings.Contains(o.Label, "as suggested") {
			t.Errorf("offers %q with no suggestion shown:\n%s", o.Label, q.Body)
		}
	}
	if strings.Contains(q.Body, "uggested split") || len(shownSplit(q.Body)) != 0 {
		t.Errorf("shows a split from one concern:\n%s", q.Body)
	}
}
