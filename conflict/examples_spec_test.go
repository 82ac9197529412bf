package conflict

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/question"
)

// The three worked examples of round-10 "### Examples".

func example1Issue() Issue {
	return Issue{
		ID: "ISSUE-R5-003", Round: 5, Severity: gap.High, Gap: "GAP-FLOW-001",
		Summary:    "Retry mechanism should use exponential backoff",
		Suggestion: "Implement 1s, 2s, 4s delays between retries",
		Impact:     "Linear retries may overwhelm failed services",
	}
}

func TestExample1ExplicitDisagreement(t *testing.T) {
	out := readTestdata(t, "example1_engineer_r6.md")
	at := mustTime(t, "2026-01-12T15:00:00Z")
	res := DetectExplicit(ExplicitInput{Round: 6, EngineerOutput: out, Issues: []Issue{example1Issue()}, At: at})
	if len(res.Conflicts) != 1 || res.Submitted != 1 || len(res.Unmatched) != 0 || len(res.Logged) != 0 {
		t.Fatalf("DetectExplicit = %+v, want one conflict from one block", res)
	}
	c := res.Conflicts[0]
	if c.Type != explicit || c.Source != sourceDisagreeBlock || c.MatchConfidence != gap.ConfidenceHigh || c.Status != StatusUnresolved {
		t.Errorf("conflict type/source/confidence/status = %s/%s/%s/%s", c.Type, c.Source, c.MatchConfidence, c.Status)
	}
	if want := "Exponential backoff adds complexity for marginal benefit in this context."; c.EngineerPosition != want {
		t.Errorf("EngineerPosition = %q, want %q", c.EngineerPosition, want)
	}

	// Without a Mediator analysis, "complexity" in the Engineer's argument
	// gives pattern 1's synthesis; HIGH has no default recommendation.
	if diff := cmp.Diff([]string{"A", "B", "C"}, keys(c.Options)); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
	if got := c.Options[2].Description; got != "Implement 1s, 2s, 4s delays between retries as optional/configurable, with simpler default" {
		t.Errorf("pattern synthesis = %q", got)
	}
	if r := recommendedKeys(c.Options); r != nil {
		t.Errorf("HIGH conflict recommends %v, want none", r)
	}

	// The example's Mediator condensed the subject and proposed its own
	// middle ground.
	c = c.withAnalysis(analysis{
		Subject: "Retry timing mechanism",
		Synthesis: &Synthesis{
			Proposal: "Implement context-aware retry timing:\n" +
				"- File operations: Instant retry (no delay)\n" +
				"- Remote operations (future): Exponential backoff\n" +
				"Add configuration flag for override.",
			TradeOff:      "Documentation overhead + future implementation complexity",
			AddressesBoth: true,
		},
	})
	if diff := cmp.Diff([]string{"A", "B", "C"}, keys(c.Options)); diff != "" {
		t.Errorf("options with analysis (-want +got):\n%s", diff)
	}
	p := ConflictQuestion(c)
	if p.Default != "A" || p.ID != "conflict-r6-ISSUE-R5-003" || !p.AllowText {
		t.Errorf("prompt default/id/allowText = %q/%q/%v", p.Default, p.ID, p.AllowText)
	}
	golden(t, "example1_presentation.md", present(c))

	d, c2, err := Decide(c, Resolution{
		Option: "C",
		Text:   "Both concerns valid - file ops are fast, remote ops need backoff",
		Decision: "Context-aware retry timing. Instant for file ops, note that remote\n" +
			"operations should use backoff when implemented.",
		Constraints: "Must document which operations use which strategy",
		EngineerAction: "Update retry implementation to note context-awareness. Add comment\n" +
			"for future remote operation backoff.",
		ReviewerSummary: "Exponential backoff for all retries",
		EngineerSummary: "Instant retries for file operations",
	}, "DECISION-R6-001", mustTime(t, "2026-01-12T15:30:00Z"))
	if err != nil {
		t.Fatal(err)
	}
	if c2.Status != StatusResolved || c2.DecisionID != "DECISION-R6-001" {
		t.Errorf("resolved conflict status/decision = %s/%s", c2.Status, c2.DecisionID)
	}
	if d.NextState != gap.Open {
		t.Errorf("NextState = %s, want OPEN (revise per the synthesis)", d.NextState)
	}
	// The decisions.md entry is the spec's, byte for byte.
	if diff := cmp.Diff(readTestdata(t, "example1_decision.md"), renderDecision(d)); diff != "" {
		t.Errorf("decisions.md entry (-spec +got):\n%s", diff)
	}
	golden(t, "example1_prompt_block.md", ResolutionBlock(RecentDecisions([]Ruling{d}, 7)))
}

func example2Issues() []Issue {
	return []Issue{
		{ID: "ISSUE-R4-001", Round: 4, Severity: gap.High, Gap: "GAP-COMM-002",
			Summary: "Message order is undefined", Suggestion: "Add per-sender sequence numbers and buffer out-of-order messages"},
		{ID: "ISSUE-R4-002", Round: 4, Severity: gap.Medium, Gap: "GAP-COMM-002",
			Summary: "Reorder buffer is unbounded", Suggestion: "Bound the reorder buffer size"},
		{ID: "ISSUE-R4-003", Round: 4, Severity: gap.High, Gap: "GAP-COMM-003",
			Summary: "Retries duplicate messages", Suggestion: "Deduplicate messages by message ID"},
		{ID: "ISSUE-R4-007", Round: 4, Severity: gap.Critical, Gap: "GAP-COMM-004",
			Summary:    "Schema validation must reject unknown fields",
			Suggestion: "Add strict mode validation that fails on unexpected keys",
			Impact:     "Silent data loss if unexpected fields ignored"},
	}
}

func TestExample2ImplicitConversion(t *testing.T) {
	findings := DetectImplicit(ImplicitInput{
		Round:          5,
		EngineerOutput: readTestdata(t, "example2_engineer_r5.md"),
		PreviousOutput: readTestdata(t, "example2_engineer_r4.md"),
		Issues:         example2Issues(),
		Assigned:       []gap.ID{"GAP-COMM-002", "GAP-COMM-003", "GAP-COMM-004"},
	})
	// The three issues answered in substance raise nothing.
	if len(findings) != 1 {
		t.Fatalf("findings = %+v, want only ISSUE-R4-007", findings)
	}
	f := findings[0]
	if diff := cmp.Diff([]Heuristic{unaddressedID, semanticNonResponse}, f.Heuristics); diff != "" {
		t.Errorf("heuristics (-want +got):\n%s", diff)
	}
	if f.Confidence != gap.ConfidenceHigh || !f.Escalate {
		t.Errorf("confidence/escalate = %s/%v, want HIGH/true", f.Confidence, f.Escalate)
	}
	p := ImplicitQuestion(f)
	if p.Default != "1" {
		t.Errorf("implicit default = %q, want 1", p.Default)
	}
	golden(t, "example2_implicit_prompt.txt", specText(p))

	// User selects: Option 2 (Convert to DISAGREE).
	at := mustTime(t, "2026-01-12T15:45:00Z")
	out, err := ResolveImplicit(f, "2", "", "", at, IgnoreSet{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Conflict == nil || out.Effect != effectConvert {
		t.Fatalf("ResolveImplicit = %+v, want a converted conflict", out)
	}
	c := *out.Conflict
	if c.Type != implicitConverted || c.Source != sourceImplicit || c.EngineerPosition != "Not explicitly stated - Engineer did not address this issue" ||
		c.ReviewerPosition != "Add strict mode validation that fails on unexpected keys" || c.PresentationNote != presentationNote {
		t.Errorf("converted conflict = %+v", c)
	}
	c = c.withAnalysis(analysis{
		Subject: "Schema validation strictness",
		Synthesis: &Synthesis{
			Proposal: "Configurable strictness flag (--strict/--lenient) with default=strict",
			TradeOff: "Flexibility at cost of flag complexity",
		},
	})
	if diff := cmp.Diff([]string{"A", "B", "C", "D"}, keys(c.Options)); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"A"}, recommendedKeys(c.Options)); diff != "" {
		t.Errorf("recommended (-want +got):\n%s", diff)
	}
	if got := ConflictQuestion(c).Default; got != "A" {
		t.Errorf("conflict default = %q, want A", got)
	}
	golden(t, "example2_presentation.md", present(c))

	// User selects: Option A (recommended for CRITICAL).
	d, _, err := Decide(c, Resolution{
		Option:         "A",
		Text:           "CRITICAL severity - cannot risk silent data loss",
		Decision:       "Implement strict mode validation. Fail on unexpected keys.",
		EngineerAction: "Implement strict validation. Must reject unknown fields.",
		GapAction:      "GAP-COMM-004 must include strict validation before ACCEPTED.",
	}, "DECISION-R5-001", mustTime(t, "2026-01-12T16:00:00Z"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(readTestdata(t, "example2_decision.md"), renderDecision(d)); diff != "" {
		t.Errorf("decisions.md entry (-spec +got):\n%s", diff)
	}
	// Round 6 Engineer prompt includes the resolution block.
	golden(t, "example2_prompt_block.md", ResolutionBlock(RecentDecisions([]Ruling{d}, 6)))
}

func TestExample3RateLimit(t *testing.T) {
	issues := []Issue{
		{ID: "ISSUE-R7-001", Round: 7, Severity: gap.High, Gap: "GAP-FLOW-009", Summary: "Timestamp format consistency", Suggestion: "Use ISO 8601 everywhere"},
		{ID: "ISSUE-R7-002", Round: 7, Severity: gap.High, Gap: "GAP-FLOW-009", Summary: "Error message verbosity", Suggestion: "Include the full validation context in error messages"},
		{ID: "ISSUE-R7-003", Round: 7, Severity: gap.High, Gap: "GAP-FLOW-009", Summary: "Validation timeout threshold", Suggestion: "Raise the validation timeout to 30s"},
		{ID: "ISSUE-R7-004", Round: 7, Severity: gap.Critical, Gap: "GAP-FLOW-009", Summary: "Recovery data persistence", Suggestion: "Persist recovery data before each retry", Impact: "A crash loses the recovery data"},
		{ID: "ISSUE-R7-005", Round: 7, Severity: gap.Medium, Gap: "GAP-FLOW-009", Summary: "Recovery log lacks attempt numbers", Suggestion: "Record the attempt number in the recovery log"},
	}
	out := readTestdata(t, "example3_engineer_r7.md")
	at := mustTime(t, "2026-01-12T17:00:00Z")
	res := DetectExplicit(ExplicitInput{Round: 7, EngineerOutput: out, Issues: issues, At: at})
	if len(res.Conflicts) != 4 || res.Submitted != 4 {
		t.Fatalf("conflicts = %d, submitted = %d; want 4, 4", len(res.Conflicts), res.Submitted)
	}
	if diff := cmp.Diff([]string{"ISSUE-R7-004", "ISSUE-R7-001", "ISSUE-R7-002", "ISSUE-R7-003"}, conflictIDs(res.Conflicts)); diff != "" {
		t.Errorf("priority order (-want +got):\n%s", diff)
	}
	// ISSUE-R7-005 was addressed: no implicit finding.
	if f := DetectImplicit(ImplicitInput{Round: 7, EngineerOutput: out, Issues: issues}); len(f) != 0 {
		t.Errorf("implicit findings = %+v, want none", f)
	}

	hist, alerts := CheckRate(RateHistory{}, RateInputFor(7, issues, res.Conflicts, res.Submitted), defaultLimits())
	if len(alerts) != 1 || alerts[0].Kind != rateWarn {
		t.Fatalf("alerts = %+v, want one WARN_USER", alerts)
	}
	if want := "Engineer disagreed with 100% of HIGH/CRITICAL issues this round."; alerts[0].Message != want {
		t.Errorf("message = %q, want %q", alerts[0].Message, want)
	}
	p := RateQuestion(alerts[0])
	if diff := cmp.Diff([]string{"1", "2", "3", "4"}, promptKeys(p)); diff != "" {
		t.Errorf("warning options (-want +got):\n%s", diff)
	}
	golden(t, "example3_warning.txt", specText(p))

	// User selects 3 (Review Reviewer feedback) and overrides R7-001 and
	// R7-002 to LOW: they are no longer conflicts.
	if err := validateAnswer(p, "3", ""); err != nil {
		t.Fatal(err)
	}
	overrides := Overrides{"ISSUE-R7-001": gap.Low, "ISSUE-R7-002": gap.Low}
	var conflicts []Conflict
	for _, c := range res.Conflicts {
		if s, ok := overrides[c.IssueID]; ok {
			var err error
			if c, err = OverrideSeverity(c, s); err != nil {
				t.Fatal(err)
			}
			if c.Status != statusDowngraded || c.OriginalSeverity != gap.High {
				t.Errorf("%s after override: status %s, original %s", c.IssueID, c.Status, c.OriginalSeverity)
			}
		}
		conflicts = append(conflicts, c)
	}
	pending := Pending(conflicts)
	if diff := cmp.Diff([]string{"ISSUE-R7-004", "ISSUE-R7-003"}, conflictIDs(pending)); diff != "" {
		t.Errorf("conflicts left to resolve (-want +got):\n%s", diff)
	}
	crit, high := Blocking(conflicts)
	if crit != 1 || high != 1 {
		t.Errorf("Blocking = %d, %d; want 1, 1", crit, high)
	}
	// R7-004 is CRITICAL: A recommended, D offered. R7-003's summary names
	// a threshold: synthesis pattern 2.
	if diff := cmp.Diff([]string{"A", "B", "D"}, keys(pending[0].Options)); diff != "" {
		t.Errorf("R7-004 options (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"A", "B", "C"}, keys(pending[1].Options)); diff != "" {
		t.Errorf("R7-003 options (-want +got):\n%s", diff)
	}
	if got := pending[1].Options[2].Description; got != "Make threshold configurable with default matching Reviewer's suggestion" {
		t.Errorf("R7-003 synthesis = %q", got)
	}

	// Effective DISAGREE rate after user intervention: 2/2 = 100%.
	eff := ApplyOverrides(issues, overrides)
	hist, alerts = CheckRate(hist, RateInputFor(7, eff, conflicts, res.Submitted), defaultLimits())
	if diff := cmp.Diff([]rateRecord{{Round: 7, Disagreed: 2, Total: 2, Submitted: 4}}, hist.Records); diff != "" {
		t.Errorf("history after overrides (-want +got):\n%s", diff)
	}
	if len(alerts) != 1 || alerts[0].Disagreed != 2 || alerts[0].Total != 2 {
		t.Errorf("effective rate alerts = %+v, want 2 of 2", alerts)
	}
}

func conflictIDs(cs []Conflict) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.IssueID)
	}
	return out
}

// specText renders a question as the spec's examples show it: the body and
// the options, without the title a host adds.
func specText(p question.Question) string {
	return question.Question{Body: p.Body, Options: p.Options}.Text()
}

func promptKeys(p question.Question) []string {
	var out []string
	for _, o := range p.Options {
		out = append(out, o.Key)
	}
	return out
}
