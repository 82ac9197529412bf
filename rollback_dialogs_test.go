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
)

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
