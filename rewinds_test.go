package refine_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/store"
)

// Tests of the engine's rewinds: a round sent back to the Engineer by the
// DISAGREE-rate warning, and the blocking decisions presented between
// rounds when every open gap is BLOCKED.

const (
	rwGap1 gap.ID = "GAP-RW-001"
	rwGap2 gap.ID = "GAP-RW-002"
)

// rateWarningScript is a two-gap session whose round-2 Engineer disagrees
// with both HIGH issues of round 1 (a 100% DISAGREE rate: the warning),
// then, sent back, revises both; round 2's review approves.
func rateWarningScript() (eng, rev *refinetest.Role) {
	concern1, concern2 := "retry bound unspecified", "timeout unspecified"
	disagreeing := refinetest.EngineerOutput(rwGap1, rwGap2) +
		refinetest.Disagree(refinetest.IssueID(1, 1), concern1+" ("+string(rwGap1)+")", "") + "\n" +
		refinetest.Disagree(refinetest.IssueID(1, 2), concern2+" ("+string(rwGap2)+")", "")
	revised := refinetest.Revision(rwGap1, refinetest.IssueID(1, 1), "") +
		strings.TrimPrefix(refinetest.Revision(rwGap2, refinetest.IssueID(1, 2), ""), "# Engineer Proposals\n\n")
	eng = refinetest.Script(refinetest.EngineerOutput(rwGap1, rwGap2), disagreeing, revised)
	rev = refinetest.Script(
		refinetest.ReviewerOutput(1, []gap.ID{rwGap1, rwGap2},
			refinetest.Issue{Severity: gap.High, Gap: rwGap1, Summary: concern1},
			refinetest.Issue{Severity: gap.High, Gap: rwGap2, Summary: concern2}),
		refinetest.ReviewerOutput(2, []gap.ID{rwGap1, rwGap2}),
	)
	return eng, rev
}

func rwConfig(eng, rev refine.Role, ask refine.Asker) refine.Config {
	return refinetest.Config(eng, rev, ask,
		gap.Gap{ID: rwGap1, Title: "Retry policy", Severity: gap.High},
		gap.Gap{ID: rwGap2, Title: "Timeouts", Severity: gap.High})
}

// checkRedone checks a session whose round 2 was sent back to the Engineer
// once: three Engineer calls, the third in round 2 with the revision
// instruction, the first attempt's files kept beside the second's,
// engineer.md replaced, and the round completed.
func checkRedone(t *testing.T, cfg refine.Config, eng, rev *refinetest.Role, out refine.Outcome) {
	t.Helper()
	if out.Status != refine.StatusComplete || out.Round != 2 {
		t.Fatalf("outcome %s after round %d (%s), pending %v; want COMPLETE after round 2", out.Status, out.Round, out.Reason, out.Pending)
	}
	calls := eng.Calls()
	if len(calls) != 3 {
		t.Fatalf("Engineer called %d times, want 3 (round 1, round 2, round 2 again)", len(calls))
	}
	if got := []int{calls[1].Round, calls[1].Attempt, calls[2].Round, calls[2].Attempt}; !cmp.Equal(got, []int{2, 1, 2, 2}) {
		t.Errorf("Engineer calls 2 and 3 were round/attempt %v, want round 2 attempt 1 then round 2 attempt 2", got)
	}
	if rev.CallCount() != 2 {
		t.Errorf("Reviewer called %d times, want 2: the disagreeing output is never reviewed", rev.CallCount())
	}
	// The redo answers a valid output: no retry banner, and the warning's
	// own figures (a warning has no block count or limit).
	redo := eng.Prompt(2)
	if !strings.Contains(redo, "## Additional context from the user\nYour previous output disagreed with 2 of 2 HIGH/CRITICAL Reviewer issues (100%)") {
		t.Errorf("the Engineer's second round-2 prompt lacks the revision instruction:\n%s", redo)
	}
	for _, bad := range []string{"RETRY ATTEMPT", "0 DISAGREE blocks"} {
		if strings.Contains(redo, bad) {
			t.Errorf("the Engineer's second round-2 prompt says %q:\n%s", bad, redo)
		}
	}
	ctx := context.Background()
	first, err := cfg.Store.Get(ctx, "round_002/attempts/engineer-1.md")
	if err != nil || !strings.Contains(string(first), "## DISAGREE: ISSUE-R1-001") {
		t.Errorf("round_002/attempts/engineer-1.md (the disagreeing output) not kept: %v", err)
	}
	if _, err := cfg.Store.Get(ctx, "round_002/prompts/engineer-2.md"); err != nil {
		t.Errorf("round_002/prompts/engineer-2.md (the redo's prompt) missing: %v", err)
	}
	final := get(t, cfg, "round_002/engineer.md")
	if strings.Contains(final, "## DISAGREE:") || !strings.Contains(final, "### Response to ISSUE-R1-002") {
		t.Errorf("round_002/engineer.md is not the revision:\n%s", final)
	}
	s, err := refine.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Conflicts) != 0 {
		t.Errorf("conflicts = %+v, want none: the round's were dropped and the revision raises none", st.Conflicts)
	}
	var decided []string
	for _, d := range st.Decisions {
		decided = append(decided, d.ID+" "+d.Option)
	}
	if !cmp.Equal(decided, []string{"DECISION-R2-001 2"}) {
		t.Errorf("decisions = %v, want the rate warning's answer only", decided)
	}
	for _, g := range st.Gaps {
		if g.State != gap.Accepted {
			t.Errorf("%s is %s, want ACCEPTED", g.ID, g.State)
		}
		if !hasTransition(g.History, 2, gap.Proposed, gap.NeedsRevision) || !hasTransition(g.History, 2, gap.NeedsRevision, gap.InProgress) {
			t.Errorf("%s history lacks the round-2 rewind PROPOSED → NEEDS_REVISION → IN_PROGRESS: %+v", g.ID, g.History)
		}
	}
}

func hasTransition(h []gap.Transition, round int, from, to gap.State) bool {
	for _, t := range h {
		if t.Round == round && t.From == from && t.To == to {
			return true
		}
	}
	return false
}

// "Request Engineer revision" at the DISAGREE-rate warning sends the round
// back to the Engineer (redoEngineer), answered at once.
func TestRateWarningRequestRevisionRedoesEngineer(t *testing.T) {
	eng, rev := rateWarningScript()
	ask := refinetest.Keys("2")
	cfg := rwConfig(eng, rev, ask)
	_, out := run(t, cfg)
	asked := ask.Asked()
	if len(asked) != 1 || asked[0].ID != "rate-warning-r2" || asked[0].Kind != refine.KindDisagreeRate {
		t.Fatalf("asked %v, want only rate-warning-r2", kindsOf(asked))
	}
	if o := asked[0].Options[1]; o.Key != "2" || !strings.HasPrefix(o.Label, "Request Engineer revision") {
		t.Errorf("option 2 = %+v, want Request Engineer revision", o)
	}
	checkRedone(t, cfg, eng, rev, out)
}

// The same answer given after a pause, in another Session over the same
// Store: the rewind survives the process boundary.
func TestRateWarningRequestRevisionAfterPause(t *testing.T) {
	ctx := context.Background()
	eng, rev := rateWarningScript()
	cfg := rwConfig(eng, rev, refine.DeferAsker{})
	_, out := run(t, cfg)
	if out.Status != refine.StatusPaused || len(out.Pending) != 1 || out.Pending[0].ID != "rate-warning-r2" {
		t.Fatalf("outcome %s pending %v, want PAUSED on rate-warning-r2", out.Status, out.Pending)
	}
	if eng.CallCount() != 2 {
		t.Fatalf("Engineer called %d times before the pause, want 2", eng.CallCount())
	}
	cfg2 := cfg
	cfg2.Asker = refinetest.Keys() // any further question fails the run
	s2, err := refine.Open(ctx, cfg2)
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Answer(ctx, "rate-warning-r2", refine.Answer{Key: "2"}); err != nil {
		t.Fatal(err)
	}
	out, err = s2.Run(ctx)
	if err != nil {
		t.Fatalf("Run after the answer: %v", err)
	}
	checkRedone(t, cfg2, eng, rev, out)
}

// blockedBetweenRounds builds a stored session whose round 2 ended with
// both gaps BLOCKED on unresolved HIGH conflicts and nothing pending: the
// state in which the Engineer has nothing to work on, so the blocking
// decisions come first. The engine itself resolves a round's conflicts
// before the round goes on, so the state is made from the session paused
// at round 2's first conflict question, closed as a refine 0.1 session
// (state.json schema 1, no journal) would have closed it. edit may change
// the state further.
func blockedBetweenRounds(t *testing.T, edit func(doc map[string]any)) refine.Config {
	t.Helper()
	ctx := context.Background()
	eng, rev := rateWarningScript()
	ask := refinetest.Keys("1", "defer") // accept the disagreements, defer the first conflict
	cfg := rwConfig(eng, rev, ask)
	s, out := run(t, cfg)
	if out.Status != refine.StatusPaused || len(out.Pending) != 1 || out.Pending[0].Kind != refine.KindConflict {
		t.Fatalf("setup: outcome %s pending %v, want PAUSED on a conflict", out.Status, out.Pending)
	}
	b, err := s.StateJSONForTest()
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	doc["schema"], doc["journal_seq"] = 1, nil
	doc["current"], doc["pending"], doc["answers"] = nil, nil, nil
	doc["round"] = 2
	if edit != nil {
		edit(doc)
	}
	b, err = json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	ops := []store.Op{store.Put("state.json", b)}
	for _, prefix := range []string{"journal/", "snapshots/"} {
		keys, err := cfg.Store.List(ctx, prefix)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			ops = append(ops, store.Delete(k))
		}
	}
	if err := cfg.Store.Commit(ctx, ops...); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Every open gap BLOCKED between rounds: the blocking conflicts are
// presented, most severe and oldest first; answering them unblocks the
// gaps and the session goes on.
func TestAllBlockedPresentsBlockingDecisions(t *testing.T) {
	ctx := context.Background()
	cfg := blockedBetweenRounds(t, nil)
	st, err := refine.Inspect(ctx, cfg.Store)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range st.Gaps {
		if g.State != gap.Blocked {
			t.Fatalf("setup: %s is %s, want BLOCKED", g.ID, g.State)
		}
	}
	// Round 3 works on the gap the user sent back; its review approves.
	eng := refinetest.Script(refinetest.EngineerOutput(rwGap1))
	rev := refinetest.Script(refinetest.ReviewerOutput(3, []gap.ID{rwGap1}))
	ask := refinetest.Answers(refine.Answer{Key: "A"}, refine.Answer{Key: "B"})
	cfg.Engineer, cfg.Reviewer, cfg.Asker = eng, rev, ask
	s, err := refine.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	type asked struct {
		ID    string
		Kind  refine.QuestionKind
		Round int
		Keys  string
	}
	var got []asked
	for _, q := range ask.Asked() {
		var keys []string
		for _, o := range q.Options {
			keys = append(keys, o.Key)
		}
		got = append(got, asked{q.ID, q.Kind, q.Round, strings.Join(keys, ",")})
	}
	want := []asked{
		{"conflict-r2-ISSUE-R1-001", refine.KindConflict, 2, "A,B"},
		{"conflict-r2-ISSUE-R1-002", refine.KindConflict, 2, "A,B"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("questions asked (-want +got):\n%s", diff)
	}
	if qs := ask.Asked(); len(qs) == 2 {
		for i, issue := range []string{"ISSUE-R1-001", "ISSUE-R1-002"} {
			if !strings.Contains(qs[i].Body, "### Conflict: "+issue) {
				t.Errorf("question %d does not present %s:\n%s", i+1, issue, qs[i].Body)
			}
		}
	}
	if out.Status != refine.StatusComplete || out.Round != 3 {
		t.Fatalf("outcome %s after round %d (%s), want COMPLETE after round 3", out.Status, out.Round, out.Reason)
	}
	if eng.CallCount() != 1 || eng.Calls()[0].Round != 3 || !cmp.Equal(eng.Calls()[0].Gaps, []gap.ID{rwGap1}) {
		t.Errorf("Engineer calls = %d (%+v), want one, in round 3, on %s only", eng.CallCount(), eng.Calls(), rwGap1)
	}
	if p := eng.Prompt(0); !strings.Contains(p, "CONFLICT RESOLUTIONS FROM PREVIOUS ROUND") || !strings.Contains(p, "ISSUE-R1-001") {
		t.Errorf("round 3 prompt lacks the decided conflict:\n%s", p)
	}
	st, err = s.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range st.Gaps {
		wantTo := map[gap.ID]gap.State{rwGap1: gap.Open, rwGap2: gap.Accepted}[g.ID]
		if !hasTransition(g.History, 2, gap.Blocked, wantTo) {
			t.Errorf("%s history lacks BLOCKED → %s in round 2: %+v", g.ID, wantTo, g.History)
		}
	}
	var decided []string
	for _, d := range st.Decisions {
		decided = append(decided, d.ID+" "+d.Issue+" "+d.Option)
	}
	wantDecided := []string{"DECISION-R2-001  1", "DECISION-R2-002 ISSUE-R1-001 A", "DECISION-R2-003 ISSUE-R1-002 B"}
	if diff := cmp.Diff(wantDecided, decided); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
}

// Every open gap BLOCKED and no conflict to decide: Run stops with an error
// that says so, and the stored session is left as it was.
func TestAllBlockedWithoutPendingConflictFails(t *testing.T) {
	ctx := context.Background()
	cfg := blockedBetweenRounds(t, func(doc map[string]any) {
		doc["conflicts"] = nil
	})
	before, err := refine.Inspect(ctx, cfg.Store)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Engineer, cfg.Reviewer, cfg.Asker = refinetest.Script(), refinetest.Script(), refinetest.Keys()
	s, err := refine.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err == nil || !strings.Contains(err.Error(), "every open gap is BLOCKED and no conflict is pending") {
		t.Fatalf("Run = %+v, %v; want the all-blocked error", out, err)
	}
	if out.Status != refine.StatusFailed {
		t.Errorf("outcome %s, want FAILED", out.Status)
	}
	// The failure is recorded (FAILED, resumable); nothing else changed.
	after, err := refine.Inspect(ctx, cfg.Store)
	if err != nil {
		t.Fatal(err)
	}
	if after.Outcome != refine.StatusFailed || !strings.Contains(after.Reason, "every open gap is BLOCKED") {
		t.Errorf("stored outcome %s (%q), want FAILED with the error", after.Outcome, after.Reason)
	}
	if diff := cmp.Diff(before.Gaps, after.Gaps); diff != "" || after.Round != before.Round {
		t.Errorf("the failed run changed the session (round %d → %d):\n%s", before.Round, after.Round, diff)
	}
}
