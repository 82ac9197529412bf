package refine_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
)

// disagreeDoc is a round-2 Engineer output that keeps its proposal and
// formally disagrees with issueID.
func disagreeDoc(gapID, issueID, quote string) string {
	return engineerDoc(gapID) + fmt.Sprintf(`## DISAGREE: %s

**Reviewer Concern:**
> %s

**Engineer Position:**
The retry bound should stay implementation-defined; fixing it in the spec over-constrains hosts.

**Rationale:**
Different backends have different failure profiles, and a fixed bound is a trade-off analysis the host owns.

**Request:** Escalate to user for resolution
`, issueID, quote)
}

// disagreeBlock is one more DISAGREE block for an output.
func disagreeBlock(issueID, quote string) string {
	return fmt.Sprintf(`
## DISAGREE: %s

**Reviewer Concern:**
> %s

**Engineer Position:**
Timeouts belong to the host's deployment, not to the spec.

**Rationale:**
A fixed timeout is a trade-off analysis the host owns.

**Request:** Escalate to user for resolution
`, issueID, quote)
}

func TestDisagreeResolvedForReviewerThenCompletes(t *testing.T) {
	ctx := context.Background()
	issue := "retry bound unspecified (GAP-TEST-001)"
	eng := refinetest.Script(
		engineerDoc("GAP-TEST-001"),
		disagreeDoc("GAP-TEST-001", "ISSUE-R1-001", issue),
		revisedDoc("GAP-TEST-001", "ISSUE-R1-001"),
	)
	rev := refinetest.Script(
		reviewerDoc(1, "GAP-TEST-001", "HIGH: retry bound unspecified"),
		reviewerDoc(3, "GAP-TEST-001"),
	)
	ask := then(refinetest.Keys("A"))
	cfg := refinetest.Config(eng, rev, ask)
	s, out := run(t, cfg)
	if out.Status != refine.StatusComplete || out.Round != 3 {
		t.Fatalf("outcome %+v, want COMPLETE after round 3", out)
	}
	// A single disagreement goes straight to conflict
	// resolution; a rate warning needs at least two.
	asked := ask.Asked()
	if len(asked) < 1 || asked[0].Kind != refine.KindConflict || slices.Contains(kindsOf(asked), refine.KindDisagreeRate) {
		t.Fatalf("questions = %v, want the conflict and no rate warning", kindsOf(asked))
	}
	asked = append([]refine.Question{{}}, asked...) // keep the indexes below
	var keys []string
	for _, o := range asked[1].Options {
		keys = append(keys, o.Key)
	}
	if strings.Join(keys, ",") != "A,B,C" && strings.Join(keys, ",") != "A,B" {
		t.Errorf("conflict options = %v, want A, B (and C when a synthesis exists)", keys)
	}
	if !strings.Contains(asked[1].Body, "### Conflict: ISSUE-R1-001") {
		t.Errorf("conflict presentation:\n%s", asked[1].Body)
	}
	decisions := get(t, cfg, "decisions.md")
	for _, want := range []string{"**Chosen Option:** A", "ISSUE-R1-001", "DECISION-R2-"} {
		if !strings.Contains(decisions, want) {
			t.Errorf("decisions.md lacks %q:\n%s", want, decisions)
		}
	}
	// Blocked, then re-opened by the decision, in round 2.
	st, _ := s.Status(ctx)
	if st.Gaps[0].State != gap.Accepted {
		t.Errorf("final gap state %s", st.Gaps[0].State)
	}
	summary2 := get(t, cfg, "round_002/summary.md")
	for _, want := range []string{"| GAP-TEST-001 | PROPOSED | BLOCKED |", "| GAP-TEST-001 | BLOCKED | OPEN |"} {
		if !strings.Contains(summary2, want) {
			t.Errorf("round 2 summary lacks %q:\n%s", want, summary2)
		}
	}
	p3 := eng.Prompt(2)
	for _, want := range []string{"CONFLICT RESOLUTIONS FROM PREVIOUS ROUND", "Do not re-argue", "ISSUE-R1-001"} {
		if !strings.Contains(p3, want) {
			t.Errorf("round 3 Engineer prompt lacks %q:\n%s", want, p3)
		}
	}
	seen := map[string]bool{}
	found := false
	for _, d := range st.Decisions {
		if seen[d.ID] {
			t.Errorf("decision ID %s used twice", d.ID)
		}
		seen[d.ID] = true
		found = found || (d.Issue == "ISSUE-R1-001" && d.Option == "A")
	}
	if !found {
		t.Errorf("status decisions lack ISSUE-R1-001 → A: %+v", st.Decisions)
	}
	if len(st.Conflicts) != 1 || st.Conflicts[0].Status != "RESOLVED" {
		t.Errorf("status conflicts = %+v", st.Conflicts)
	}
}

func TestReArguingADecidedConflictIsRetried(t *testing.T) {
	issue := "retry bound unspecified (GAP-TEST-001)"
	eng := refinetest.Script(
		engineerDoc("GAP-TEST-001"),
		disagreeDoc("GAP-TEST-001", "ISSUE-R1-001", issue),
		disagreeDoc("GAP-TEST-001", "ISSUE-R1-001", issue), // round 3: re-argues
		revisedDoc("GAP-TEST-001", "ISSUE-R1-001"),
	)
	rev := refinetest.Script(reviewerDoc(1, "GAP-TEST-001", "HIGH: retry bound unspecified"), reviewerDoc(3, "GAP-TEST-001"))
	cfg := refinetest.Config(eng, rev, then(refinetest.Keys("1", "A")))
	_, out := run(t, cfg)
	if out.Status != refine.StatusComplete {
		t.Fatalf("outcome %+v", out)
	}
	retry := eng.Prompt(3)
	for _, want := range []string{"RETRY ATTEMPT 1 of 2", "DECIDED CONFLICT RE-ARGUED", "DECISION-R2-"} {
		if !strings.Contains(retry, want) {
			t.Errorf("retry prompt lacks %q:\n%s", want, retry)
		}
	}
	if !strings.Contains(get(t, cfg, "status.md"), "RE_ARGUED_CONFLICT") {
		t.Errorf("status.md lacks the RE_ARGUED_CONFLICT failure")
	}
}

func TestIgnoredFeedbackIsFlaggedAndAddressedIsNot(t *testing.T) {
	// Round 2 resubmits round 1 verbatim, ignoring a HIGH issue: flagged.
	eng := refinetest.Script(engineerDoc("GAP-TEST-001"), engineerDoc("GAP-TEST-001"), revisedDoc("GAP-TEST-001", "ISSUE-R1-001"))
	rev := refinetest.Script(reviewerDoc(1, "GAP-TEST-001", "HIGH: retry bound unspecified"), reviewerDoc(3, "GAP-TEST-001"))
	ask := auto()
	cfg := refinetest.Config(eng, rev, ask)
	_, out := run(t, cfg)
	if out.Status != refine.StatusComplete {
		t.Fatalf("outcome %+v", out)
	}
	kinds := kindsOf(ask.Asked())
	if len(kinds) == 0 || kinds[0] != refine.KindImplicit {
		t.Fatalf("questions %v, want the implicit-disagreement question", kinds)
	}
	if !strings.Contains(ask.Asked()[0].Body, "ISSUE-R1-001") {
		t.Errorf("implicit question does not name the issue:\n%s", ask.Asked()[0].Body)
	}
	if p := eng.Prompt(2); !strings.Contains(p, "Feedback you must address explicitly") || !strings.Contains(p, "ISSUE-R1-001") {
		t.Errorf("round 3 prompt lacks the address-explicitly instruction:\n%s", p)
	}
	// Addressed in substance in round 2: no question at all.
	eng = refinetest.Script(engineerDoc("GAP-TEST-001"), revisedDoc("GAP-TEST-001", "ISSUE-R1-001"))
	rev = refinetest.Script(reviewerDoc(1, "GAP-TEST-001", "HIGH: retry bound unspecified"), reviewerDoc(2, "GAP-TEST-001"))
	ask = refinetest.Keys() // any question fails the run
	cfg = refinetest.Config(eng, rev, ask)
	if _, out := run(t, cfg); out.Status != refine.StatusComplete || out.Round != 2 {
		t.Fatalf("addressed feedback: %+v", out)
	}
}

func kindsOf(qs []refine.Question) []refine.QuestionKind {
	var out []refine.QuestionKind
	for _, q := range qs {
		out = append(out, q.Kind)
	}
	return out
}

// FLOW-006 Example 3: at the DISAGREE rate warning the user reviews the
// Reviewer's feedback and downgrades the issue to LOW: no conflict, no
// blocked gap, no conflict question.
func TestSeverityOverrideAtRateWarning(t *testing.T) {
	issue := "retry bound unspecified (GAP-TEST-001)"
	eng := refinetest.Script(engineerDoc("GAP-TEST-001"), disagreeDoc("GAP-TEST-001", "ISSUE-R1-001", issue)+disagreeBlock("ISSUE-R1-002", "timeout unspecified (GAP-TEST-001)"))
	rev := refinetest.Script(reviewerDoc(1, "GAP-TEST-001", "HIGH: retry bound unspecified", "HIGH: timeout unspecified"), reviewerDoc(2, "GAP-TEST-001"))
	ask := then(refinetest.Answers(refine.Answer{Key: "3", Text: "ISSUE-R1-001 and ISSUE-R1-002 were suggestions, not requirements: LOW"}))
	cfg := refinetest.Config(eng, rev, ask)
	s, out := run(t, cfg)
	if out.Status != refine.StatusComplete || out.Round != 2 {
		t.Fatalf("outcome %+v", out)
	}
	for _, q := range ask.Asked() {
		if q.Kind == refine.KindConflict {
			t.Errorf("conflict question asked for a downgraded issue")
		}
	}
	st, _ := s.Status(context.Background())
	if len(st.Conflicts) != 2 || st.Conflicts[0].Status != "DOWNGRADED" || st.Conflicts[0].Issue.Severity != gap.Low {
		t.Errorf("conflicts = %+v", st.Conflicts)
	}
	if strings.Contains(get(t, cfg, "round_002/summary.md"), "BLOCKED") {
		t.Errorf("gap was blocked for a downgraded issue")
	}
}
