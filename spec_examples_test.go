package refine_test

// The Examples of the spec's round-06 (rollback) and round-10 (conflict
// resolution) documents, replayed as sessions: through refine.New,
// Session.Run/Step/Rollback/Answer with scripted roles and a recording
// Asker. Each test asserts what the example shows: the questions asked,
// the decisions recorded, the gap states, the archives and the status.md
// blocks. Long role outputs are in testdata/spec-examples.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/rollback"
)

// specExample reads a role output of the replayed examples.
func specExample(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "spec-examples", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// userPrompt is the user message of a request.
func userPrompt(req refine.Request) string {
	for _, m := range req.Messages {
		if m.Role == "user" {
			return m.Content
		}
	}
	return ""
}

// promptLog records the Engineer prompts by round and attempt.
type promptLog struct {
	mu      sync.Mutex
	prompts map[int][]string
}

func (p *promptLog) add(req refine.Request) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.prompts == nil {
		p.prompts = map[int][]string{}
	}
	p.prompts[req.Round] = append(p.prompts[req.Round], userPrompt(req))
	return len(p.prompts[req.Round])
}

func (p *promptLog) get(round int) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.prompts[round]...)
}

// optionLabels lists a question's options as "key label".
func optionLabels(q refine.Question) []string {
	var out []string
	for _, o := range q.Options {
		out = append(out, o.Key+" "+o.Label)
	}
	return out
}

// Round-06 Example 1: Auto-Retry Success. Round 4's Engineer output lacks
// its Trade-offs section; in AUTO_RETRY mode the rollback asks nothing,
// detects MISSING_SECTIONS, adds the structural requirement to the retried
// round's prompt, and the retry succeeds; status.md carries the block.
func TestSpecRollbackExample1AutoRetrySuccess(t *testing.T) {
	ctx := context.Background()
	gaps := []gap.Gap{
		{ID: "GAP-FLOW-001", Title: "Validation", Severity: gap.High},
		{ID: "GAP-FLOW-002", Title: "Stall detection", Severity: gap.High},
		{ID: "GAP-FLOW-003", Title: "Handoff", Severity: gap.High},
		{ID: "GAP-FLOW-004", Title: "Partial rounds", Severity: gap.Medium},
		{ID: "GAP-FLOW-005", Title: "Termination", Severity: gap.High},
		{ID: "GAP-FLOW-006", Title: "Conflict handling", Severity: gap.High},
	}
	var prompts promptLog
	round4 := []string{specExample(t, "r06-ex1-round4-engineer.md"), specExample(t, "r06-ex1-round4-retry-engineer.md")}
	eng := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		out := engineerDoc(req.Gaps...)
		if req.Round == 4 {
			// "Output flagged: Missing trade-offs section"; the retry has it.
			out = round4[min(len(prompts.get(4)), 1)]
		}
		prompts.add(req)
		return refine.Response{Content: out}, nil
	})
	rev := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		return refine.Response{Content: reviewerDoc(req.Round, req.Gaps[0])}, nil
	})
	asker := &refinetest.Asker{}
	cfg := refinetest.Config(eng, rev, asker, gaps...)
	cfg.GapsPerRound = 1
	cfg.RollbackMode = rollback.ModeAutoRetry
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 4; i++ {
		rr, err := s.Step(ctx)
		if err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		if i == 4 && (len(rr.Accepted) != 1 || rr.Accepted[0] != "GAP-FLOW-005") {
			t.Fatalf("round 4 = %+v, want GAP-FLOW-005 addressed", rr)
		}
	}
	rep, err := s.Rollback(ctx, refine.RollbackRequest{To: 3, Reason: "Output flagged: missing trade-offs section", Trigger: rollback.TriggerValidation})
	if err != nil {
		t.Fatal(err)
	}
	if len(asker.Asked()) != 0 {
		t.Errorf("AUTO_RETRY prompted the user: %v", asker.Asked())
	}
	if !rep.AutoApplied || !cmp.Equal(rep.Undone, []int{4}) || !cmp.Equal(rep.Archives, []string{"round_004_rolled_back_1.tar.gz"}) {
		t.Errorf("report = %+v", rep)
	}
	files := archiveFiles(t, cfg, "round_004_rolled_back_1.tar.gz")
	if !hasSuffixKey(files, "/engineer.md") || !hasSuffixKey(files, "/analysis.md") {
		t.Errorf("archive of round 4 lacks engineer.md or analysis.md: %v", keysOf(files))
	}
	status := get(t, cfg, "status.md")
	for _, want := range []string{
		"## Round 4 Auto-Retry",
		"**Failure Pattern:** MISSING_SECTIONS (Trade-offs absent)",
		"- Added structural requirement for ### Trade-offs section",
	} {
		if !strings.Contains(status, want) {
			t.Errorf("status.md after the rollback lacks %q", want)
		}
	}

	// Round 4 (retry): the prompt carries the auto-adjustment; validation passes; Reviewer runs.
	rr, err := s.Step(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rr.Round != 4 || len(rr.Accepted) != 1 {
		t.Errorf("retried round = %+v", rr)
	}
	retry := prompts.get(4)
	if len(retry) != 2 || !strings.Contains(retry[1], "You MUST include a ### Trade-offs section") {
		t.Errorf("retried round 4 prompt lacks the structural requirement (%d prompts)", len(retry))
	}
	status = get(t, cfg, "status.md")
	want := "## Round 4 Auto-Retry\n**Attempt:** 1 of 2 before user prompt\n**Failure Pattern:** MISSING_SECTIONS (Trade-offs absent)\n**Auto-Adjustments Applied:**\n- Added structural requirement for ### Trade-offs section\n**Outcome:** Successful on retry\n"
	if !strings.Contains(status, want) {
		t.Errorf("status.md lacks Example 1's entry:\n%s\n--- status.md:\n%s", want, status)
	}
	if len(asker.Asked()) != 0 {
		t.Errorf("questions asked: %v", asker.Asked())
	}
}

func keysOf[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Round-06 Example 2: Multi-Round Rollback. At the end of round 8 the user
// answers the divergence question with "rollback" and the words of the
// example; the rollback options question offers several rounds, the target
// table lists Rounds 7, 6 and 5 with the open gaps at each (12, 14 and 16,
// 10 now), the confirmation says what rolling back to Round 5 will do, and
// rounds 8, 7 and 6 are archived; the state is restored to round 5's.
func TestSpecRollbackExample2MultiRound(t *testing.T) {
	ctx := context.Background()
	// 20 LOW gaps and one HIGH gap the Engineer never gets to: rounds 1-5
	// resolve one LOW gap each (converging); rounds 6-8 resolve three LOW
	// gaps each and introduce one HIGH gap (weighted net -1: flat), so
	// the divergence question comes at the end of round 8.
	gaps := []gap.Gap{{ID: "GAP-HOLD-001", Title: "Held back", Severity: gap.High}}
	for i := 1; i <= 20; i++ {
		gaps = append(gaps, gap.Gap{ID: gap.ID(fmt.Sprintf("GAP-LOW-%03d", i)), Title: "Polish", Severity: gap.Low})
	}
	lowOf := func(ids []gap.ID, n int) []gap.ID {
		var out []gap.ID
		for _, id := range ids {
			if strings.HasPrefix(string(id), "GAP-LOW-") && len(out) < n {
				out = append(out, id)
			}
		}
		return out
	}
	eng := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		if req.Round <= 5 {
			return refine.Response{Content: engineerDoc(lowOf(req.Gaps, 1)...)}, nil
		}
		return refine.Response{Content: refinetest.NewGap(gap.ID(fmt.Sprintf("GAP-NEW-%03d", req.Round)), gap.High, "Found while polishing", lowOf(req.Gaps, 3)...)}, nil
	})
	rev := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		return refine.Response{Content: refinetest.ReviewerOutput(req.Round, req.Gaps)}, nil
	})
	sc := &script{answers: []scripted{
		{"Divergence", refine.Answer{Key: "rollback", Text: "The last 3 rounds went in a bad direction. Can we go back to Round 5?"}},
		{"ROUND 8 ROLLBACK OPTIONS", refine.Answer{Key: "4"}},
		{"ROLLBACK OPTIONS", refine.Answer{Key: "5"}},
		{"MULTI-ROUND ROLLBACK", refine.Answer{Key: "1"}},
	}}
	cfg := refinetest.Config(eng, rev, sc, gaps...)
	cfg.GapsPerRound, cfg.StallRounds, cfg.MaxRounds = 6, 3, 8
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var status5 string
	for i := 1; i <= 8; i++ {
		if _, err := s.Step(ctx); err != nil {
			t.Fatalf("round %d: %v (asked %v)", i, err, sc.titles())
		}
		if i == 5 {
			status5 = get(t, cfg, "status.md")
		}
	}
	want := []string{"Divergence", "ROUND 8 ROLLBACK OPTIONS", "ROLLBACK OPTIONS", "MULTI-ROUND ROLLBACK"}
	got := sc.titles()
	if len(got) < len(want) {
		t.Fatalf("questions = %v, want %v first", got, want)
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w) {
			t.Errorf("question %d = %q, want %q", i+1, got[i], w)
		}
	}
	targets, _ := sc.find("ROLLBACK OPTIONS")
	table := "| Target | Gaps at Target | Decisions Since | Rounds to Undo |\n" +
		"|--------|----------------|-----------------|----------------|\n" +
		"| Round 7 | 12 open | 0 decisions | 1 |\n" +
		"| Round 6 | 14 open | 0 decisions | 2 |\n" +
		"| Round 5 | 16 open | 0 decisions | 3 |\n"
	if !strings.Contains(targets.Body, table) {
		t.Errorf("target question lacks the table\n%s\n--- body:\n%s", table, targets.Body)
	}
	confirm, _ := sc.find("MULTI-ROUND ROLLBACK")
	for _, w := range []string{
		"Rollback to Round 5 will:\n- Discard rounds 6, 7, 8\n- Restore 16 open gaps (currently 10)\n",
		"- Create 3 archive files\n",
	} {
		if !strings.Contains(confirm.Body, w) {
			t.Errorf("confirmation lacks %q:\n%s", w, confirm.Body)
		}
	}
	if diff := cmp.Diff([]string{"1 Rollback to Round 5 (3 rounds back)", "2 Choose different target", "cancel Cancel rollback"}, optionLabels(confirm)); diff != "" {
		t.Errorf("confirmation options (-want +got):\n%s", diff)
	}
	st, err := s.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Round != 5 || len(st.Rollbacks) != 3 {
		t.Fatalf("after the rollback: round %d, rollbacks %+v", st.Round, st.Rollbacks)
	}
	for i, r := range []int{8, 7, 6} {
		if st.Rollbacks[i].Round != r || st.Rollbacks[i].Target != 5 {
			t.Errorf("rollback %d = round %d to %d, want %d to 5", i, st.Rollbacks[i].Round, st.Rollbacks[i].Target, r)
		}
		archive := fmt.Sprintf("round_%03d_rolled_back_1.tar.gz", r)
		files := archiveFiles(t, cfg, archive)
		if !hasSuffixKey(files, fmt.Sprintf("/decisions_from_round_%d.md", r)) || !hasSuffixKey(files, "/analysis.md") {
			t.Errorf("%s lacks the archived decisions or analysis.md: %v", archive, keysOf(files))
		}
	}
	open := 0
	for _, g := range st.Gaps {
		if g.State.IsOpen() {
			open++
		}
	}
	if open != 16 {
		t.Errorf("open gaps after the rollback = %d, want round 5's 16", open)
	}
	if k := keys(t, cfg, "round_006/"); len(k) != 0 {
		t.Errorf("round_006 still present: %v", k)
	}
	status := get(t, cfg, "status.md")
	if !strings.Contains(status, "## Rollback Notice - Rounds 6-8") || !strings.Contains(status, "Rounds 6, 7, 8 were rolled back to Round 5") {
		t.Errorf("status.md lacks the multi-rollback notice")
	}
	// The gap table of round 5 is back.
	if gapTable(status) != gapTable(status5) {
		t.Errorf("restored gap table differs from round 5's:\n%s\n--- round 5:\n%s", gapTable(status), gapTable(status5))
	}
}

// gapTable is the "## Gaps" section of a status.md.
func gapTable(status string) string {
	_, rest, _ := strings.Cut(status, "## Gaps")
	sec, _, _ := strings.Cut(rest, "\n## ")
	return sec
}

// Round-06 Example 3: Root Cause Analysis Triggers Gap Split. Round 7 is
// rolled back twice by the user for different reasons, and its two
// attempts produced different sections: the second rollback asks REPEATED
// ROLLBACK DETECTED with "Gap scope too large (HIGH confidence)"; the user
// splits GAP-FLOW-007 into 007a, 007b and 007c; the original is SUPERSEDED
// and round 7's retry addresses 007a only.
func TestSpecRollbackExample3RootCauseSplit(t *testing.T) {
	ctx := context.Background()
	var gaps []gap.Gap
	for i := 1; i <= 8; i++ {
		gaps = append(gaps, gap.Gap{ID: gap.ID(fmt.Sprintf("GAP-FLOW-%03d", i)), Title: "Flow gap", Severity: gap.High})
	}
	gaps[6].Title = "Rollback mechanism"
	attempts := []string{specExample(t, "r06-ex3-round7-attempt1-engineer.md"), specExample(t, "r06-ex3-round7-attempt2-engineer.md")}
	var mu sync.Mutex
	var round7 [][]gap.ID
	eng := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		if req.Round != 7 {
			return refine.Response{Content: engineerDoc(req.Gaps...)}, nil
		}
		mu.Lock()
		defer mu.Unlock()
		round7 = append(round7, req.Gaps)
		if n := len(round7); n <= len(attempts) {
			return refine.Response{Content: attempts[n-1]}, nil
		}
		return refine.Response{Content: engineerDoc(req.Gaps...)}, nil
	})
	rev := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		return refine.Response{Content: refinetest.ReviewerOutput(req.Round, req.Gaps)}, nil
	})
	sc := &script{answers: []scripted{
		{"ROUND 7 ROLLBACK OPTIONS", refine.Answer{Key: "1"}},
		{"REPEATED ROLLBACK DETECTED", refine.Answer{Key: "1", Text: "Rollback state restoration\nRollback user experience\nRollback policies and limits"}},
	}}
	cfg := refinetest.Config(eng, rev, sc, gaps...)
	cfg.GapsPerRound = 1
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	step := func() refine.RoundReport {
		t.Helper()
		rr, err := s.Step(ctx)
		if err != nil {
			t.Fatalf("step: %v (asked %v)", err, sc.titles())
		}
		return rr
	}
	for i := 1; i <= 7; i++ {
		step()
	}
	if _, err := s.Rollback(ctx, refine.RollbackRequest{To: 6, Reason: "Rollback mechanics unclear"}); err != nil {
		t.Fatal(err)
	}
	step()
	rep, err := s.Rollback(ctx, refine.RollbackRequest{To: 6, Reason: "Now UX is unclear instead"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"ROUND 7 ROLLBACK OPTIONS", "REPEATED ROLLBACK DETECTED"}, sc.titles()); diff != "" {
		t.Fatalf("questions (-want +got):\n%s", diff)
	}
	q, _ := sc.find("REPEATED ROLLBACK DETECTED")
	for _, want := range []string{
		"Round 7 has been rolled back twice.",
		"=== Rollback History ===\nAttempt 1: \"Rollback mechanics unclear\" (user)\nAttempt 2: \"Now UX is unclear instead\" (user)\n",
		"Gap scope too large (HIGH confidence)",
		"Different sections produced in each attempt",
		"Current gap: GAP-FLOW-007 \"Rollback mechanism\"",
	} {
		if !strings.Contains(q.Body, want) {
			t.Errorf("analysis question lacks %q:\n%s", want, q.Body)
		}
	}
	wantOpts := []string{"1 Split gap as suggested", "2 Provide additional context for retry",
		"3 Reassign to different gaps this round", "4 Force proceed with best available output", "5 Pause session for external consultation",
		"cancel Cancel the rollback: the session stays as it was before the request"}
	if diff := cmp.Diff(wantOpts, optionLabels(q)); diff != "" {
		t.Errorf("analysis options (-want +got):\n%s", diff)
	}
	if !q.Options[0].Recommended || q.Default != "1" {
		t.Errorf("split is not marked recommended and the default (default %q)", q.Default)
	}
	// The suggestion names its sub-gaps; the user's titles above replace them.
	if !strings.Contains(q.Body, "Suggested split:\n  - GAP-FLOW-007a: \"Rollback mechanism: ") || !strings.Contains(q.Body, "  - GAP-FLOW-007b: ") {
		t.Errorf("analysis question names no suggested sub-gaps:\n%s", q.Body)
	}
	if len(rep.Undone) != 1 || rep.Undone[0] != 7 || rep.Archives[0] != "round_007_rolled_back_2.tar.gz" {
		t.Errorf("report = %+v", rep)
	}
	states := gapStates(t, s)
	for id, want := range map[gap.ID]gap.State{"GAP-FLOW-007": gap.Superseded, "GAP-FLOW-007a": gap.Open, "GAP-FLOW-007b": gap.Open, "GAP-FLOW-007c": gap.Open} {
		if states[id] != want {
			t.Errorf("%s = %s, want %s", id, states[id], want)
		}
	}
	st, _ := s.Status(ctx)
	titles := map[gap.ID]string{}
	for _, g := range st.Gaps {
		titles[g.ID] = g.Title
	}
	if titles["GAP-FLOW-007b"] != "Rollback user experience" {
		t.Errorf("GAP-FLOW-007b title = %q", titles["GAP-FLOW-007b"])
	}
	last := st.Rollbacks[len(st.Rollbacks)-1]
	if last.Split == nil || last.Split.Parent != "GAP-FLOW-007" || len(last.Split.Children) != 3 {
		t.Errorf("rollback record split = %+v", last.Split)
	}
	if last.Analysis == nil || last.Analysis.Detected != "Gap scope too large" {
		t.Errorf("rollback record analysis = %+v", last.Analysis)
	}
	status := get(t, cfg, "status.md")
	for _, want := range []string{
		"- **Root Cause Analysis:** Performed\n  - Detected: Gap scope too large\n  - Recommendation: Split gap\n- **User Decision:** Split gap into 007a, 007b, 007c\n",
		"| Gaps Split | 1 (GAP-FLOW-007 -> 3 sub-gaps) |",
		"| Root Cause Analyses | 1 |",
	} {
		if !strings.Contains(status, want) {
			t.Errorf("status.md lacks %q", want)
		}
	}
	// Round 7 retry addresses 007a only.
	rr := step()
	mu.Lock()
	assigned := round7[len(round7)-1]
	mu.Unlock()
	if rr.Round != 7 || !cmp.Equal(assigned, []gap.ID{"GAP-FLOW-007a"}) || !cmp.Equal(rr.Accepted, []gap.ID{"GAP-FLOW-007a"}) {
		t.Errorf("round 7 retry assigned %v, report %+v; want GAP-FLOW-007a only", assigned, rr)
	}
}

// Round-06 Example 4: Session Limit Reached. After 7 rollbacks (round 3
// twice with a gap split, round 5 once by auto-retry, round 6 twice with
// context added, round 7 twice) an 8th asks SESSION ROLLBACK LIMIT REACHED
// with the per-round history and the four options; "Accept current state"
// ends the session USER_APPROVED and nothing is rolled back.
func TestSpecRollbackExample4SessionLimit(t *testing.T) {
	ctx := context.Background()
	var gaps []gap.Gap
	for i := 1; i <= 12; i++ {
		gaps = append(gaps, gap.Gap{ID: gap.ID(fmt.Sprintf("GAP-FLOW-%03d", i)), Title: "Flow gap", Severity: gap.High})
	}
	eng := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		return refine.Response{Content: engineerDoc(req.Gaps...)}, nil
	})
	rev := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		return refine.Response{Content: refinetest.ReviewerOutput(req.Round, req.Gaps)}, nil
	})
	sc := &script{answers: []scripted{
		{"REPEATED ROLLBACK DETECTED", refine.Answer{Key: "1", Text: "Rollback state restoration\nRollback user experience"}},
		{"REPEATED ROLLBACK DETECTED", refine.Answer{Key: "2", Text: "Name the retry bound in numbers."}},
		{"REPEATED ROLLBACK DETECTED", refine.Answer{Key: "2", Text: "Give the archive layout as a tree."}},
		{"SESSION ROLLBACK LIMIT REACHED", refine.Answer{Key: "2"}},
	}}
	cfg := refinetest.Config(eng, rev, sc, gaps...)
	cfg.GapsPerRound = 1
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	steps := func(n int) {
		t.Helper()
		for range n {
			if _, err := s.Step(ctx); err != nil {
				t.Fatalf("step: %v (asked %v)", err, sc.titles())
			}
		}
	}
	rb := func(to int, reason string, adj ...string) {
		t.Helper()
		if _, err := s.Rollback(ctx, refine.RollbackRequest{To: to, Reason: reason, Adjustments: adj}); err != nil {
			t.Fatalf("rollback to %d: %v (asked %v)", to, err, sc.titles())
		}
	}
	steps(3)
	rb(2, "mechanics unclear", "Cover the restore order.")
	steps(1)
	rb(2, "now the UX is unclear") // analysis: split
	steps(2)                       // round 3 retry (sub-gap), round 4
	steps(1)                       // round 5
	if err := s.SetRollbackMode(ctx, rollback.ModeAutoRetry); err != nil {
		t.Fatal(err)
	}
	rb(4, "too abstract") // auto-retry
	if err := s.SetRollbackMode(ctx, rollback.ModeInteractive); err != nil {
		t.Fatal(err)
	}
	steps(2) // round 5 retry, round 6
	rb(5, "missing the retry bound", "State the retry bound.")
	steps(1)
	rb(5, "retry bound still vague") // analysis: context
	steps(2)                         // round 6 retry, round 7
	rb(6, "archive layout unclear", "Describe the archive.")
	steps(1)
	rb(6, "archive layout still unclear") // analysis: context
	steps(1)
	st, _ := s.Status(ctx)
	if len(st.Rollbacks) != 7 {
		t.Fatalf("rollbacks = %d, want 7 (asked %v)", len(st.Rollbacks), sc.titles())
	}
	_, err = s.Rollback(ctx, refine.RollbackRequest{To: 6, Reason: "still failing"})
	if !errors.Is(err, refine.ErrRollbackLimit) {
		t.Fatalf("8th rollback = %v, want ErrRollbackLimit", err)
	}
	q, ok := sc.find("SESSION ROLLBACK LIMIT REACHED")
	if !ok {
		t.Fatalf("no limit question; asked %v", sc.titles())
	}
	for _, want := range []string{
		"Used: 7 of 7 rollback attempts\n",
		"Rollback history:\n- Round 3: 2 rollbacks (Proceeded with split gaps)\n- Round 5: 1 rollback (Retry successful)\n- Round 6: 2 rollbacks (Retry successful)\n- Round 7: 2 rollbacks (still failing)\n",
		"This pattern suggests systematic issues.",
		"Note: Additional rollbacks are not available.",
	} {
		if !strings.Contains(q.Body, want) {
			t.Errorf("limit question lacks %q:\n%s", want, q.Body)
		}
	}
	wantOpts := []string{"1 Pause for human review - Export session state", "2 Accept current state - USER_APPROVED flow",
		"3 Abandon session", "4 Prompt refresh (experimental) - Reset Mediator context",
		"cancel Cancel the rollback: the session stays as it was before the request"}
	if diff := cmp.Diff(wantOpts, optionLabels(q)); diff != "" {
		t.Errorf("limit options (-want +got):\n%s", diff)
	}
	st, _ = s.Status(ctx)
	if st.Outcome != refine.StatusUserApproved || len(st.Rollbacks) != 7 || st.Round != 7 {
		t.Errorf("after the limit question: outcome %s, %d rollbacks, round %d; want USER_APPROVED, 7, 7", st.Outcome, len(st.Rollbacks), st.Round)
	}
	if !strings.Contains(get(t, cfg, "status.md"), "| Remaining Rollbacks | 0 of 7 |") {
		t.Errorf("status.md does not show 0 of 7 remaining")
	}
}

// example5Session plays round-06 Example 5 up to its rollback: round 6
// resolved two conflicts (DECISION-R6-001 and -002), then was rolled back
// to round 5; the next Step asks DECISION RECOVERY, answered by recovery.
func example5Session(t *testing.T, recovery ...scripted) (*refine.Session, refine.Config, *script, *promptLog, refine.RollbackReport) {
	t.Helper()
	ctx := context.Background()
	gaps := []gap.Gap{
		{ID: "GAP-FLOW-012", Title: "Error threshold weights", Severity: gap.High},
		{ID: "GAP-FLOW-013", Title: "Stall detection threshold", Severity: gap.High},
	}
	for i := 1; i <= 8; i++ {
		gaps = append(gaps, gap.Gap{ID: gap.ID(fmt.Sprintf("GAP-AAA-%03d", i)), Title: "Earlier gap", Severity: gap.High})
	}
	prompts := &promptLog{}
	eng := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		prompts.add(req)
		out := engineerDoc(req.Gaps...)
		if req.Round == 6 && len(prompts.get(6)) == 1 {
			out = specExample(t, "r06-ex5-round6-engineer.md")
		}
		return refine.Response{Content: out}, nil
	})
	rev := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		if req.Round == 5 {
			return refine.Response{Content: refinetest.ReviewerOutput(5, req.Gaps,
				refinetest.Issue{Severity: gap.High, Gap: "GAP-FLOW-012", Summary: "Error weights are unspecified", Suggestion: "use weights 10, 5, 2, 1"},
				refinetest.Issue{Severity: gap.High, Gap: "GAP-FLOW-013", Summary: "Stall detection fires too late", Suggestion: "stall after one flat round"})}, nil
		}
		return refine.Response{Content: refinetest.ReviewerOutput(req.Round, req.Gaps)}, nil
	})
	sc := &script{answers: []scripted{
		{"Conflict: ISSUE-R5-001", refine.Answer{Key: "B"}},
		{"Conflict: ISSUE-R5-002", refine.Answer{Key: "B"}},
	}}
	sc.answers = append(sc.answers, recovery...)
	cfg := refinetest.Config(eng, rev, sc, gaps...)
	cfg.GapsPerRound = 2
	cfg.MaxRounds = 10
	// Two disagreements with two issues is a 100% rate; the example is
	// about recovery, so the rate warning is turned off.
	cfg.DisagreeRoundLimit, cfg.DisagreeSessionLimit = 1, 1
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 6; i++ {
		if _, err := s.Step(ctx); err != nil {
			t.Fatalf("round %d: %v (asked %v)", i, err, sc.titles())
		}
	}
	st, _ := s.Status(ctx)
	var ids []string
	for _, c := range st.Conflicts {
		ids = append(ids, c.IssueID+" "+c.DecisionID)
	}
	if diff := cmp.Diff([]string{"ISSUE-R5-001 DECISION-R6-001", "ISSUE-R5-002 DECISION-R6-002"}, ids); diff != "" {
		t.Fatalf("round 6 conflicts (-want +got):\n%s\nasked %v", diff, sc.titles())
	}
	rep, err := s.Rollback(ctx, refine.RollbackRequest{To: 5, Reason: "round 6 went wrong", Adjustments: []string{"Keep the weights configurable."}})
	if err != nil {
		t.Fatal(err)
	}
	return s, cfg, sc, prompts, rep
}

// Round-06 Example 5: Decision Recovery After Rollback. Round 6 resolved
// two conflicts (the error threshold weights and the stall detection
// threshold); after round 6 is rolled back, the next round first asks
// DECISION RECOVERY listing both with their choice, offering the five
// options; "Re-apply DECISION-R6-001 only" puts that resolution back
// (decisions.md, the next Engineer prompt) with the note, and leaves the
// other archived.
func TestSpecRollbackExample5DecisionRecovery(t *testing.T) {
	ctx := context.Background()
	s, cfg, sc, prompts, rep := example5Session(t, scripted{"DECISION RECOVERY", refine.Answer{Key: "1"}})
	files := archiveFiles(t, cfg, rep.Archives[0])
	archived := string(files["decisions_from_round_6.md"])
	for _, id := range []string{"DECISION-R6-001", "DECISION-R6-002"} {
		if !strings.Contains(archived, id) {
			t.Errorf("decisions_from_round_6.md lacks %s:\n%s", id, archived)
		}
	}
	if dec := get(t, cfg, "decisions.md"); strings.Contains(dec, "### ISSUE-R5-001") {
		t.Errorf("decisions.md still holds round 6's resolution after the rollback")
	}
	if _, err := s.Step(ctx); err != nil {
		t.Fatalf("round 6 retry: %v (asked %v)", err, sc.titles())
	}
	q, ok := sc.find("DECISION RECOVERY")
	if !ok {
		t.Fatalf("no DECISION RECOVERY question; asked %v", sc.titles())
	}
	for _, want := range []string{
		"Round 6 decisions were archived. Found 2 decisions:\n",
		"1. DECISION-R6-001: Conflict ISSUE-R5-001:",
		"2. DECISION-R6-002: Conflict ISSUE-R5-002:",
		"   Choice: \"",
	} {
		if !strings.Contains(q.Body, want) {
			t.Errorf("recovery question lacks %q:\n%s", want, q.Body)
		}
	}
	wantOpts := []string{"1 Re-apply DECISION-R6-001 only", "2 Re-apply DECISION-R6-002 only", "3 Re-apply both decisions",
		"4 Modify before re-applying", "5 Leave archived (don't re-apply)"}
	if diff := cmp.Diff(wantOpts, optionLabels(q)); diff != "" {
		t.Errorf("recovery options (-want +got):\n%s", diff)
	}
	dec := get(t, cfg, "decisions.md")
	if !strings.Contains(dec, "### ISSUE-R5-001") || !strings.Contains(dec, "Re-applied from rolled-back Round 6") {
		t.Errorf("decisions.md lacks the re-applied DECISION-R6-001 with its note:\n%s", dec)
	}
	if strings.Contains(dec, "### ISSUE-R5-002") {
		t.Errorf("decisions.md re-applied DECISION-R6-002, which the user left archived")
	}
	retry := prompts.get(6)
	if last := retry[len(retry)-1]; !strings.Contains(last, "ISSUE-R5-001") || strings.Contains(last, "ISSUE-R5-002: ") {
		t.Errorf("the retried round's prompt does not carry exactly the re-applied resolution:\n%s", last)
	}
}

// fillerThen returns gaps: n CRITICAL filler gaps (assigned first, one per
// round) and then the given ones, so the example's round numbers hold.
func fillerThen(n int, gs ...gap.Gap) []gap.Gap {
	var out []gap.Gap
	for i := 1; i <= n; i++ {
		out = append(out, gap.Gap{ID: gap.ID(fmt.Sprintf("GAP-AAA-%03d", i)), Title: "Earlier gap", Severity: gap.Critical})
	}
	return append(out, gs...)
}

// Round-10 Example 1: Explicit Disagreement - Clean Resolution. Round 5's
// ISSUE-R5-003 (HIGH) asks for exponential backoff; round 6's Engineer
// disagrees in the spec's words; the conflict question offers the
// Reviewer's position (A), the Engineer's (B) and a synthesis (C); the user
// picks C, and decisions.md records it in the spec's entry format.
func TestSpecConflictExample1ExplicitDisagreement(t *testing.T) {
	ctx := context.Background()
	gaps := fillerThen(4, gap.Gap{ID: "GAP-FLOW-001", Title: "Retry mechanism", Severity: gap.High})
	eng := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		if req.Round == 6 {
			return refine.Response{Content: specExample(t, "r10-ex1-round6-engineer.md")}, nil
		}
		return refine.Response{Content: engineerDoc(req.Gaps...)}, nil
	})
	rev := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		if req.Round == 5 {
			return refine.Response{Content: refinetest.ReviewerOutput(5, req.Gaps,
				refinetest.Issue{Severity: gap.Medium, Summary: "Retry log lacks timestamps", Suggestion: "add timestamps"},
				refinetest.Issue{Severity: gap.Medium, Summary: "Escalation text is vague", Suggestion: "quote the options"},
				refinetest.Issue{Severity: gap.High, Summary: "Retry mechanism should use exponential backoff", Suggestion: "Implement 1s, 2s, 4s delays between retries"})}, nil
		}
		return refine.Response{Content: refinetest.ReviewerOutput(req.Round, req.Gaps)}, nil
	})
	sc := &script{answers: []scripted{{"Conflict: ISSUE-R5-003", refine.Answer{Key: "C", Text: "Context-aware retry timing. Instant for file ops, note that remote operations should use backoff when implemented."}}}}
	cfg := refinetest.Config(eng, rev, sc, gaps...)
	cfg.GapsPerRound = 1
	cfg.StallRounds = 10 // the flat rounds around a conflict are not the example's subject
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 6; i++ {
		if _, err := s.Step(ctx); err != nil {
			t.Fatalf("round %d: %v (asked %v)", i, err, sc.titles())
		}
	}
	if diff := cmp.Diff([]string{"Conflict: ISSUE-R5-003 (HIGH)"}, sc.titles()); diff != "" {
		t.Fatalf("questions (-want +got):\n%s", diff)
	}
	q := sc.asked[0]
	for _, want := range []string{"### Conflict: ISSUE-R5-003", "**Severity:** HIGH", "**Gap Affected:** GAP-FLOW-001",
		"**Reviewer Position (Option A):**", "**Engineer Position (Option B):**", "**Synthesized Option (Option C):**"} {
		if !strings.Contains(q.Body, want) {
			t.Errorf("conflict question lacks %q:\n%s", want, q.Body)
		}
	}
	var keys []string
	for _, o := range q.Options {
		keys = append(keys, o.Key)
	}
	if diff := cmp.Diff([]string{"A", "B", "C"}, keys); diff != "" {
		t.Errorf("conflict option keys (-want +got):\n%s", diff)
	}
	dec := get(t, cfg, "decisions.md")
	for _, want := range []string{
		"### ISSUE-R5-003:",
		"**Conflict Type:** Explicit DISAGREE\n**Gap Affected:** GAP-FLOW-001\n**Severity:** HIGH\n",
		"**Positions:**\n- Reviewer: ",
		// The synthesis is the rule-based one (the Engineer argues
		// "complexity"); the user's words given with C are the rationale.
		"- **Chosen Option:** C (Synthesis)\n- **Decision:** Implement 1s, 2s, 4s delays between retries as optional/configurable",
		"- **Rationale:** Context-aware retry timing. Instant for file ops",
		"**Decided By:** User\n",
	} {
		if !strings.Contains(dec, want) {
			t.Errorf("decisions.md lacks %q:\n%s", want, dec)
		}
	}
	if strings.Contains(dec, "No decisions recorded yet") {
		t.Errorf("decisions.md says no decisions above a decision")
	}
}

// Round-10 Example 2: Implicit Disagreement - Conversion and Resolution.
// Round 4's ISSUE-R4-007 (CRITICAL) is not mentioned in round 5 and the
// schema section is unchanged: H1 and H4 fire (HIGH confidence), the user
// converts it to a DISAGREE; the conflict offers A (recommended for
// CRITICAL), B, C and D; A is recorded as an implicit conversion and round
// 6's Engineer prompt carries the resolution.
func TestSpecConflictExample2ImplicitConversion(t *testing.T) {
	ctx := context.Background()
	gaps := fillerThen(3, gap.Gap{ID: "GAP-COMM-004", Title: "Schema validation", Severity: gap.High})
	var prompts promptLog
	eng := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		prompts.add(req)
		return refine.Response{Content: engineerDoc(req.Gaps...)}, nil // round 5 repeats round 4 unchanged
	})
	rev := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		if req.Round == 4 {
			var is []refinetest.Issue
			for i := 1; i <= 6; i++ {
				is = append(is, refinetest.Issue{Severity: gap.Low, Summary: fmt.Sprintf("Nit %d", i), Suggestion: "reword"})
			}
			is = append(is, refinetest.Issue{Severity: gap.Critical, Summary: "Schema validation must reject unknown fields", Suggestion: "Add strict mode validation that fails on unexpected keys"})
			return refine.Response{Content: refinetest.ReviewerOutput(4, req.Gaps, is...)}, nil
		}
		return refine.Response{Content: refinetest.ReviewerOutput(req.Round, req.Gaps)}, nil
	})
	sc := &script{answers: []scripted{
		{"Potential implicit disagreement: ISSUE-R4-007", refine.Answer{Key: "2"}},
		{"Conflict: ISSUE-R4-007", refine.Answer{Key: "A"}},
	}}
	cfg := refinetest.Config(eng, rev, sc, gaps...)
	cfg.GapsPerRound = 1
	cfg.StallRounds = 10 // the flat rounds around a conflict are not the example's subject
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 6; i++ {
		if _, err := s.Step(ctx); err != nil {
			t.Fatalf("round %d: %v (asked %v)", i, err, sc.titles())
		}
	}
	if diff := cmp.Diff([]string{"Potential implicit disagreement: ISSUE-R4-007 (CRITICAL, HIGH confidence)", "Conflict: ISSUE-R4-007 (CRITICAL)"}, sc.titles()); diff != "" {
		t.Fatalf("questions (-want +got):\n%s", diff)
	}
	imp := sc.asked[0]
	if diff := cmp.Diff([]string{"1", "2", "3", "4"}, optionKeys(imp)); diff != "" {
		t.Errorf("implicit options (-want +got):\n%s", diff)
	}
	if !strings.Contains(imp.Body, "ISSUE-R4-007") || !strings.Contains(imp.Body, "Schema validation must reject unknown fields") {
		t.Errorf("implicit question lacks the issue:\n%s", imp.Body)
	}
	c := sc.asked[1]
	// The example's option C is a model's synthesis; the spec's three
	// synthesis patterns (complexity, threshold/limit, out of scope) do not
	// apply to an unstated position, so C is not offered.
	if diff := cmp.Diff([]string{"A", "B", "D"}, optionKeys(c)); diff != "" {
		t.Errorf("conflict options (-want +got):\n%s", diff)
	}
	if !c.Options[0].Recommended {
		t.Errorf("option A is not recommended for a CRITICAL issue")
	}
	if !strings.Contains(c.Body, "Not explicitly stated") {
		t.Errorf("conflict question lacks the implicit Engineer position:\n%s", c.Body)
	}
	st, _ := s.Status(ctx)
	if len(st.Conflicts) != 1 || st.Conflicts[0].Type != "IMPLICIT_CONVERTED" {
		t.Errorf("conflicts = %+v", st.Conflicts)
	}
	dec := get(t, cfg, "decisions.md")
	for _, want := range []string{"### ISSUE-R4-007:", "**Conflict Type:** Implicit (converted via GAP-FLOW-013)\n**Gap Affected:** GAP-COMM-004\n**Severity:** CRITICAL\n", "- **Chosen Option:** A (Reviewer)"} {
		if !strings.Contains(dec, want) {
			t.Errorf("decisions.md lacks %q:\n%s", want, dec)
		}
	}
	r6 := prompts.get(6)
	if len(r6) == 0 || !strings.Contains(r6[0], "CONFLICT RESOLUTIONS FROM PREVIOUS ROUND") || !strings.Contains(r6[0], "### ISSUE-R4-007") {
		t.Errorf("round 6 Engineer prompt lacks the conflict resolution block")
	}
}

func optionKeys(q refine.Question) []string {
	var out []string
	for _, o := range q.Options {
		out = append(out, o.Key)
	}
	return out
}

// Round-10 Example 3: DISAGREE Rate Limit Triggered. Round 7's Engineer
// disagrees with all 4 HIGH/CRITICAL issues of round 6: the DISAGREE RATE
// WARNING lists them with the four options; the user reviews the Reviewer
// feedback and re-grades ISSUE-R6-001 and ISSUE-R6-002 to LOW, so only two
// conflicts are resolved.
func TestSpecConflictExample3RateWarning(t *testing.T) {
	ctx := context.Background()
	gaps := fillerThen(5, gap.Gap{ID: "GAP-FLOW-009", Title: "Recovery", Severity: gap.High})
	summaries := []string{"Timestamp format consistency", "Error message verbosity", "Validation timeout threshold", "Recovery data persistence"}
	eng := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		out := engineerDoc(req.Gaps...)
		if req.Round == 7 {
			for i, sum := range summaries {
				out += "\n" + refinetest.Disagree(refinetest.IssueID(6, i+1), sum, "")
			}
		}
		return refine.Response{Content: out}, nil
	})
	rev := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		if req.Round == 6 {
			var is []refinetest.Issue
			for i, sum := range summaries {
				sev := gap.High
				if i == 3 {
					sev = gap.Critical
				}
				is = append(is, refinetest.Issue{Severity: sev, Summary: sum})
			}
			is = append(is, refinetest.Issue{Severity: gap.Medium, Summary: "Typo in the example"})
			return refine.Response{Content: refinetest.ReviewerOutput(6, req.Gaps, is...)}, nil
		}
		return refine.Response{Content: refinetest.ReviewerOutput(req.Round, req.Gaps)}, nil
	})
	sc := &script{answers: []scripted{
		{"DISAGREE rate warning", refine.Answer{Key: "3", Text: "Reviewer was too prescriptive on ISSUE-R6-001 and ISSUE-R6-002 to LOW. However, R6-003 and R6-004 are valid."}},
		{"Conflict: ISSUE-R6-004", refine.Answer{Key: "A"}},
		{"Conflict: ISSUE-R6-003", refine.Answer{Key: "A"}},
	}}
	cfg := refinetest.Config(eng, rev, sc, gaps...)
	cfg.GapsPerRound = 1
	cfg.StallRounds = 10 // the flat rounds around a conflict are not the example's subject
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 7; i++ {
		if _, err := s.Step(ctx); err != nil {
			t.Fatalf("round %d: %v (asked %v)", i, err, sc.titles())
		}
	}
	if diff := cmp.Diff([]string{"DISAGREE rate warning", "Conflict: ISSUE-R6-004 (CRITICAL)", "Conflict: ISSUE-R6-003 (HIGH)"}, sc.titles()); diff != "" {
		t.Fatalf("questions (-want +got):\n%s", diff)
	}
	w := sc.asked[0]
	for _, want := range []string{
		"Engineer disagreed with 4 of 4 HIGH/CRITICAL issues this round (100%).",
		"1. ISSUE-R6-001 (HIGH): Timestamp format consistency",
		"4. ISSUE-R6-004 (CRITICAL): Recovery data persistence",
	} {
		if !strings.Contains(w.Body, want) {
			t.Errorf("rate warning lacks %q:\n%s", want, w.Body)
		}
	}
	if len(w.Options) != 4 {
		t.Errorf("rate warning options = %v, want 4", optionLabels(w))
	}
	st, _ := s.Status(ctx)
	resolved := map[string]bool{}
	for _, c := range st.Conflicts {
		resolved[c.IssueID] = c.DecisionID != ""
	}
	if resolved["ISSUE-R6-001"] || resolved["ISSUE-R6-002"] || !resolved["ISSUE-R6-003"] || !resolved["ISSUE-R6-004"] {
		t.Errorf("conflicts resolved = %v, want only ISSUE-R6-003 and -004", resolved)
	}
}
