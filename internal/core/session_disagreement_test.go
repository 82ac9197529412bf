package core_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/core/coretest"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/store"
)

// Conflicts through a whole Session: explicit and implicit disagreement,
// the DISAGREE rate warning and its rewinds, disagreements with earlier
// rounds, blocked gaps.

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

// A DISAGREE block naming an earlier round's issue passes validation (any
// issue of the session may be named), so it is a conflict with that
// issue too, not an unmatched block.
func TestDisagreeWithAnEarlierRoundsIssue(t *testing.T) {
	eng := refinetest.Script(
		engineerDoc("GAP-TEST-001"),
		revisedDoc("GAP-TEST-001", "ISSUE-R1-001"),
		revisedDoc("GAP-TEST-001", "ISSUE-R2-001")+disagreeBlock("ISSUE-R1-001", "retry bound unspecified (GAP-TEST-001)"),
	)
	rev := refinetest.Script(
		reviewerDoc(1, "GAP-TEST-001", "HIGH: retry bound unspecified"),
		reviewerDoc(2, "GAP-TEST-001", "HIGH: jitter unspecified"),
		reviewerDoc(3, "GAP-TEST-001"),
		reviewerDoc(4, "GAP-TEST-001"),
	)
	ask := &refinetest.Asker{DefaultAfterScript: true}
	cfg := refinetest.Config(eng, rev, ask)
	s, err := refine.New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := s.Step(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	st, err := s.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, c := range st.Conflicts {
		if c.IssueID == "ISSUE-R1-001" && c.Round == 3 {
			found = true
		}
	}
	if !found {
		t.Fatalf("no round-3 conflict with ISSUE-R1-001: %+v\nasked: %v", st.Conflicts, kindsOf(ask.Asked()))
	}
	asked := false
	for _, q := range ask.Asked() {
		if q.Kind == refine.KindConflict && strings.Contains(q.ID+q.Title, "ISSUE-R1-001") {
			asked = true
		}
	}
	if !asked {
		t.Errorf("no conflict question about ISSUE-R1-001; asked %v", kindsOf(ask.Asked()))
	}
}

// rejectedPosition is the Engineer position of disagreeDoc, which the
// user rejects (option A) in the tests below.
const rejectedPosition = "The retry bound should stay implementation-defined; fixing it in the spec over-constrains hosts."

// A DISAGREE with a LOW issue is a low-priority conflict (FLOW-006 §7):
// its question recommends the Engineer's position, so automated mode
// resolves it that way; it blocks no gap and nothing else waits on it.
func TestLowDisagreementIsALowPriorityConflict(t *testing.T) {
	ctx := context.Background()
	eng := refinetest.Script(
		engineerDoc("GAP-TEST-001"),
		revisedDoc("GAP-TEST-001", "ISSUE-R1-001")+"\n"+disagreeBlock("ISSUE-R1-002", "field names could be shorter (GAP-TEST-001)"),
	)
	rev := refinetest.Script(
		reviewerDoc(1, "GAP-TEST-001", "HIGH: retry bound unspecified", "LOW: field names could be shorter"),
		reviewerDoc(2, "GAP-TEST-001"),
	)
	cfg := refinetest.Config(eng, rev, refine.DefaultAsker{})
	s, out := run(t, cfg)
	if out.Status != refine.StatusComplete || out.Round != 2 {
		t.Fatalf("outcome %+v, want COMPLETE after round 2", out)
	}
	st, _ := s.Status(ctx)
	if len(st.Conflicts) != 1 || st.Conflicts[0].IssueID != "ISSUE-R1-002" || st.Conflicts[0].Open() {
		t.Errorf("conflicts = %+v, want ISSUE-R1-002 resolved", st.Conflicts)
	}
	if !slices.ContainsFunc(st.Decisions, func(d refine.DecisionStatus) bool { return d.Issue == "ISSUE-R1-002" && d.Option == "B" }) {
		t.Errorf("decisions = %+v, want ISSUE-R1-002 resolved toward the Engineer (B)", st.Decisions)
	}
	status := get(t, cfg, "status.md")
	if strings.Contains(status, "BLOCKED") {
		t.Errorf("status.md shows a BLOCKED gap for a LOW disagreement")
	}
}

// Left unresolved when the session ends, a LOW conflict is a known
// limitation in final_summary.md.
func TestUnresolvedLowConflictIsAKnownLimitation(t *testing.T) {
	ctx := context.Background()
	eng := refinetest.Script(
		engineerDoc("GAP-TEST-001"),
		revisedDoc("GAP-TEST-001", "ISSUE-R1-001")+"\n"+disagreeBlock("ISSUE-R1-002", "field names could be shorter (GAP-TEST-001)"),
	)
	rev := refinetest.Script(
		reviewerDoc(1, "GAP-TEST-001", "HIGH: retry bound unspecified", "LOW: field names could be shorter"),
		reviewerDoc(2, "GAP-TEST-001"),
	)
	cfg := refinetest.Config(eng, rev, refine.DeferAsker{})
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil || len(out.Pending) == 0 || !strings.Contains(out.Pending[0].Title, "ISSUE-R1-002 (LOW)") {
		t.Fatalf("Run: %+v, %v; want the LOW conflict question pending", out, err)
	}
	if err := s.Approve(ctx, refine.ApproveRequest{Note: "ship it"}); err != nil {
		t.Fatalf("Approve with a LOW conflict open: %v (a LOW conflict blocks nothing)", err)
	}
	sum := get(t, cfg, "final_summary.md")
	if !strings.Contains(sum, "ISSUE-R1-002") || !strings.Contains(sum, "unresolved conflict") {
		t.Errorf("final_summary.md does not list the unresolved LOW conflict as a known limitation:\n%s", sum)
	}
}

// A disagreement the Mediator cannot tie to any issue is logged in
// status.md; a DISAGREE block naming an issue that does not exist fails
// validation (INVALID_DISAGREE_REF, as GAP-FLOW-006 §2 says) and is
// retried with the failure in the prompt.
func TestUnmatchedDisagreement(t *testing.T) {
	informal := `
## Disagree: glossary wording

The glossary terms are fine as written; renaming them churns every reader
for no benefit, and the terms already match the industry's usage.
`
	badRef := disagreeBlock("ISSUE-R1-009", "retry bound unspecified (GAP-TEST-001)")
	fix := revisedDoc("GAP-TEST-001", "ISSUE-R1-001")
	tests := []struct {
		name        string
		round2      []string // Engineer attempts of round 2
		wantCalls   int
		wantLogged  []string // in status.md's round 2 errors
		wantFailure string   // in status.md and the retry prompt
	}{
		{
			name:       "informal disagreement matching no issue is logged",
			round2:     []string{fix + informal},
			wantCalls:  2,
			wantLogged: []string{"Unmatched DISAGREE block (logged)", "names no issue and matches no issue of round 1: The glossary terms are fine as written"},
		},
		{
			name:        "DISAGREE naming an unknown issue is a validation failure",
			round2:      []string{fix + badRef, fix},
			wantCalls:   3,
			wantFailure: "DISAGREE references ISSUE-R1-009 which does not exist",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng := refinetest.Script(append([]string{engineerDoc("GAP-TEST-001")}, tt.round2...)...)
			rev := refinetest.Script(reviewerDoc(1, "GAP-TEST-001", "HIGH: retry bound unspecified"), reviewerDoc(2, "GAP-TEST-001"))
			ask := refinetest.Keys()
			cfg := refinetest.Config(eng, rev, ask)
			_, out := run(t, cfg)
			if out.Status != refine.StatusComplete || out.Round != 2 {
				t.Fatalf("outcome %+v, want COMPLETE after round 2", out)
			}
			if len(ask.Asked()) != 0 {
				t.Errorf("questions asked: %v", kindsOf(ask.Asked()))
			}
			if eng.CallCount() != tt.wantCalls {
				t.Errorf("engineer calls = %d, want %d", eng.CallCount(), tt.wantCalls)
			}
			status := get(t, cfg, "status.md")
			errs := section(status, "## Round 2 Errors")
			for _, want := range tt.wantLogged {
				if !strings.Contains(errs, want) {
					t.Errorf("status.md round 2 errors lack %q:\n%s", want, status)
				}
			}
			if tt.wantFailure == "" {
				return
			}
			if strings.Contains(errs, "Unmatched DISAGREE block") {
				t.Errorf("a DISAGREE rejected by validation was also logged as unmatched")
			}
			log := section(status, "## Round 2 Validation Log")
			if !strings.Contains(log, "INVALID_DISAGREE_REF") || !strings.Contains(log, tt.wantFailure) {
				t.Errorf("round 2 validation log lacks the failure:\n%s", log)
			}
			if p := eng.Prompt(2); !strings.Contains(p, "RETRY ATTEMPT 1 of 2") || !strings.Contains(p, "ISSUE-R1-009") {
				t.Errorf("retry prompt does not name the bad reference:\n%s", p)
			}
		})
	}
}

// An Engineer output that restates a position the user rejected is valid
// but warned about: the warning reaches status.md's validation log and the
// round summary.
func TestRepeatedRejectedPositionWarning(t *testing.T) {
	issue := "retry bound unspecified (GAP-TEST-001)"
	repeat := revisedDoc("GAP-TEST-001", "ISSUE-R1-001") + "\n## Notes\n\n" + rejectedPosition + "\n"
	eng := refinetest.Script(
		engineerDoc("GAP-TEST-001"),
		disagreeDoc("GAP-TEST-001", "ISSUE-R1-001", issue),
		repeat,
	)
	rev := refinetest.Script(reviewerDoc(1, "GAP-TEST-001", "HIGH: retry bound unspecified"), reviewerDoc(3, "GAP-TEST-001"))
	ask := then(refinetest.Keys("A")) // the Reviewer's position wins; defaults after
	cfg := refinetest.Config(eng, rev, ask)
	_, out := run(t, cfg)
	if out.Status != refine.StatusComplete || out.Round != 3 {
		t.Fatalf("outcome %+v, want COMPLETE after round 3", out)
	}
	if eng.CallCount() != 3 {
		t.Errorf("engineer calls = %d, want 3 (a repeated position is a warning, not a failure)", eng.CallCount())
	}
	const want = "Engineer may be proposing same position rejected in ISSUE-R1-001"
	log := section(get(t, cfg, "status.md"), "## Round 3 Validation Log")
	if !strings.Contains(log, want) || !strings.Contains(log, "DECISION-R2-001") {
		t.Errorf("status.md round 3 validation log lacks the compliance warning:\n%s", log)
	}
	summary := section(get(t, cfg, "round_003/summary.md"), "## Validation Warnings")
	if !strings.Contains(summary, "Engineer: "+want) {
		t.Errorf("round 3 summary lacks the compliance warning:\n%s", get(t, cfg, "round_003/summary.md"))
	}
}

// A conflict resolution of a rolled-back round is archived and offered by
// the decision-recovery question; each answer is acted on.
func TestConflictResolutionRecoveredAfterRollback(t *testing.T) {
	tests := []struct {
		name       string
		answer     refine.Answer
		reapplied  bool
		wantChoice string // in the re-applied decision
	}{
		{"re-apply", refine.Answer{Key: "1"}, true, "Keep the Engineer's position"},
		{"modify and apply", refine.Answer{Key: "2", Text: "Choice: cap retries at three\nRationale: agreed with the hosts"}, true, "cap retries at three"},
		{"leave archived", refine.Answer{Key: "3"}, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			issue := "retry bound unspecified (GAP-TEST-001)"
			// Round 2 disagrees until the rollback; its retry revises.
			var rolledBack bool
			eng := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
				switch {
				case req.Round == 1:
					return refine.Response{Content: engineerDoc(req.Gaps...)}, nil
				case !rolledBack:
					return refine.Response{Content: disagreeDoc("GAP-TEST-001", "ISSUE-R1-001", issue)}, nil
				}
				return refine.Response{Content: revisedDoc("GAP-TEST-001", "ISSUE-R1-001")}, nil
			})
			rev := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
				if req.Round == 1 {
					return refine.Response{Content: reviewerDoc(1, "GAP-TEST-001", "HIGH: retry bound unspecified")}, nil
				}
				return refine.Response{Content: reviewerDoc(req.Round, "GAP-TEST-001")}, nil
			})
			sc := &script{answers: []scripted{
				{"Conflict: ISSUE-R1-001", refine.Answer{Key: "B"}}, // the Engineer's position stands
				{"DECISION RECOVERY", tt.answer},
			}}
			cfg := refinetest.Config(eng, rev, sc)
			s, err := refine.New(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= 2; i++ {
				if _, err := s.Step(ctx); err != nil {
					t.Fatalf("round %d: %v (asked %v)", i, err, sc.titles())
				}
			}
			st, _ := s.Status(ctx)
			if len(st.Conflicts) != 1 || st.Conflicts[0].DecisionID != "DECISION-R2-001" {
				t.Fatalf("round 2 conflicts = %+v (asked %v)", st.Conflicts, sc.titles())
			}
			rep, err := s.Rollback(ctx, refine.RollbackRequest{To: 1, Reason: "round 2 argued instead of fixing", Adjustments: []string{"Address ISSUE-R1-001."}})
			if err != nil {
				t.Fatal(err)
			}
			rolledBack = true
			files := archiveFiles(t, cfg, rep.Archives[0])
			if !strings.Contains(string(files["decisions_from_round_2.md"]), "DECISION-R2-001") {
				t.Errorf("archive lacks the conflict resolution:\n%s", files["decisions_from_round_2.md"])
			}
			if strings.Contains(get(t, cfg, "decisions.md"), "### ISSUE-R1-001") {
				t.Errorf("decisions.md still holds the undone resolution")
			}
			out, err := s.Run(ctx)
			if err != nil || out.Status != refine.StatusComplete {
				t.Fatalf("run after rollback = %+v %v (asked %v)", out, err, sc.titles())
			}
			q, ok := sc.find("DECISION RECOVERY")
			if !ok {
				t.Fatalf("no DECISION RECOVERY question; asked %v", sc.titles())
			}
			if !strings.Contains(q.Body, "1. DECISION-R2-001: Conflict ISSUE-R1-001") {
				t.Errorf("recovery question does not offer the resolution:\n%s", q.Body)
			}
			if got, want := strings.Join(sc.titles(), "; "), "Conflict: ISSUE-R1-001; DECISION RECOVERY; ARCHIVE CLEANUP"; !strings.HasPrefix(got, "Conflict: ISSUE-R1-001") || !strings.Contains(got, "DECISION RECOVERY; ARCHIVE CLEANUP") {
				t.Errorf("questions = %s, want %s", got, want)
			}
			st, _ = s.Status(ctx)
			ids := map[string]bool{}
			for _, d := range st.Decisions {
				if ids[d.ID] {
					t.Errorf("decision ID %s issued twice: %+v", d.ID, st.Decisions)
				}
				ids[d.ID] = true
			}
			found := slices.ContainsFunc(st.Decisions, func(d refine.DecisionStatus) bool { return d.ID == "DECISION-R2-001" && d.Issue == "ISSUE-R1-001" })
			if found != tt.reapplied {
				t.Errorf("DECISION-R2-001 in force = %v, want %v (decisions %+v)", found, tt.reapplied, st.Decisions)
			}
			dec := get(t, cfg, "decisions.md")
			if strings.Contains(dec, "### ISSUE-R1-001") != tt.reapplied {
				t.Errorf("decisions.md holds the resolution = %v, want %v:\n%s", !tt.reapplied, tt.reapplied, dec)
			}
			if tt.reapplied {
				if !strings.Contains(dec, "Re-applied from rolled-back Round 2") || !strings.Contains(dec, tt.wantChoice) {
					t.Errorf("decisions.md lacks the re-applied note or choice %q:\n%s", tt.wantChoice, dec)
				}
			}
			// The retried round's Engineer prompt carries a re-applied resolution.
			calls := eng.Calls()
			last := calls[len(calls)-1]
			prompt := last.Messages[len(last.Messages)-1].Content
			if strings.Contains(prompt, "CONFLICT RESOLUTIONS FROM PREVIOUS ROUND") != tt.reapplied {
				t.Errorf("retried round prompt carries the resolution = %v, want %v:\n%s", !tt.reapplied, tt.reapplied, prompt)
			}
		})
	}
}

// section returns the part of a markdown document from the heading line
// to the next heading of the same or a higher level ("" when absent).
func section(doc, heading string) string {
	i := strings.Index(doc, heading+"\n")
	if i < 0 {
		return ""
	}
	level := strings.IndexByte(heading, ' ')
	rest := doc[i+len(heading)+1:]
	for off := 0; off < len(rest); {
		nl := strings.IndexByte(rest[off:], '\n')
		line := rest[off:]
		if nl >= 0 {
			line = rest[off : off+nl]
		}
		if j := strings.IndexByte(line, ' '); j > 0 && j <= level && strings.Trim(line[:j], "#") == "" {
			return doc[i : i+len(heading)+1+off]
		}
		if nl < 0 {
			break
		}
		off += nl + 1
	}
	return doc[i:]
}

// An implicit flag raised only by "no reference" (H1) while the gap's
// section changed does not discard the Engineer's fix: no question, the
// gap is reviewed, the Reviewer's prompt asks it to check the issue, and
// the flag is logged in status.md.
func TestH1OnlyFlagKeepsTheFix(t *testing.T) {
	ctx := context.Background()
	fix := strings.ReplaceAll(revisedDoc("GAP-TEST-001", "ISSUE-R1-001"), "ISSUE-R1-001", "The reviewer")
	eng := refinetest.Script(engineerDoc("GAP-TEST-001"), fix)
	rev := refinetest.Script(reviewerDoc(1, "GAP-TEST-001", "HIGH: retry bound unspecified"), reviewerDoc(2, "GAP-TEST-001"))
	asker := &refinetest.Asker{}
	cfg := refinetest.Config(eng, rev, asker)
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil {
		t.Fatalf("run: %v (asked %v)", err, asker.Asked())
	}
	if len(asker.Asked()) != 0 {
		t.Errorf("questions asked: %v", asker.Asked())
	}
	if out.Status != refine.StatusComplete || out.Round != 2 {
		t.Errorf("outcome %+v, want COMPLETE in round 2 (the fix reviewed and accepted)", out)
	}
	if rev.CallCount() != 2 || !strings.Contains(rev.Prompt(1), "Check explicitly whether this round's Engineer output resolves ISSUE-R1-001") {
		t.Errorf("round 2 Reviewer prompt does not ask to check ISSUE-R1-001 (%d calls):\n%s", rev.CallCount(), rev.Prompt(1))
	}
	status := get(t, cfg, "status.md")
	for _, want := range []string{"Implicit disagreement (logged)", "ISSUE-R1-001"} {
		if !strings.Contains(status, want) {
			t.Errorf("status.md lacks %q", want)
		}
	}
}

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
	_, out := run(t, cfg)
	if out.Status != refine.StatusPaused || len(out.Pending) != 1 || out.Pending[0].Kind != refine.KindConflict {
		t.Fatalf("setup: outcome %s pending %v, want PAUSED on a conflict", out.Status, out.Pending)
	}
	b, err := coretest.StateDoc(cfg.Store)
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
