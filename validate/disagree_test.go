package validate

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// example1 is the Round 6 Engineer block of round-10 Example 1 ("Explicit
// Disagreement - Clean Resolution"), verbatim.
const example1 = `## DISAGREE: ISSUE-R5-003

**Reviewer Concern:**
> "Retry mechanism should use exponential backoff. Implement 1s, 2s, 4s delays
> between retries. Linear retries may overwhelm failed services."

**Engineer Position:**
Exponential backoff adds complexity for marginal benefit in this context.

**Rationale:**
The retry target here is local file validation, not remote services. File system
operations complete or fail fast (<100ms). Adding delays would only slow the
workflow without reducing failure likelihood.

If retries are hitting rate limits, the problem is upstream (e.g., slow disk),
not retry frequency.

**Alternative Approach:**
Keep instant retries for file operations. Add note that remote operation retries
(future scope) should use backoff.

**Request:** Escalate to user for resolution
`

// The embedded block must stay the spec's own text.
func TestExample1MatchesSpec(t *testing.T) {
	b, err := os.ReadFile("../testdata/spec/round-10-conflict-resolution.md")
	if err != nil {
		t.Fatal("spec corpus testdata/spec is missing")
	}
	if !strings.Contains(string(b), example1) {
		t.Error("example1 differs from round-10 Example 1's DISAGREE block")
	}
}

func TestDisagree(t *testing.T) {
	base := gapSection("GAP-FLOW-001") + "\n" // the block starts on line 21
	with := func(block string) string { return base + block }
	edit := func(old, new string) string { return with(strings.Replace(example1, old, new, 1)) }
	known := []string{"ISSUE-R5-003"}
	ok := outcome{Success: true, Tier: Content, Message: "Content valid: 1 gap addressed"}
	tests := []struct {
		name string
		src  string
		opt  Options
		want outcome
	}{
		{"example 1 is valid", with(example1), Options{KnownIssues: known}, ok},
		{"existence not checked without known issues", with(example1), Options{}, ok},
		{"unknown issue", with(example1), Options{KnownIssues: []string{"ISSUE-R5-001"}},
			failed(InvalidDisagreeRef, 21, "line 21: DISAGREE references ISSUE-R5-003 which does not exist")},
		{"empty known issues", with(example1), Options{KnownIssues: []string{}},
			failed(InvalidDisagreeRef, 21, "line 21: DISAGREE references ISSUE-R5-003 which does not exist")},
		{"re-argued decided conflict", with(example1), Options{KnownIssues: known, ResolvedIssues: known},
			failed(ReArguedConflict, 21, "line 21: Engineer re-argued ISSUE-R5-003 which was already resolved by user.")},
		{"missing concern", edit("**Reviewer Concern:**\n", ""), Options{KnownIssues: known},
			failed(MalformedDisagree, 21, "line 21: DISAGREE for ISSUE-R5-003 missing '**Reviewer Concern:**' quote")},
		{"concern label only in code", edit("**Reviewer Concern:**", "`**Reviewer Concern:**`"), Options{},
			failed(MalformedDisagree, 21, "line 21: DISAGREE for ISSUE-R5-003 missing '**Reviewer Concern:**' quote")},
		{"empty concern", edit("> \"Retry mechanism should use exponential backoff. Implement 1s, 2s, 4s delays\n> between retries. Linear retries may overwhelm failed services.\"\n", ">\n"), Options{},
			failed(MalformedDisagree, 21, "line 21: DISAGREE for ISSUE-R5-003 has an empty '**Reviewer Concern:**' quote")},
		{"missing rationale", edit("**Rationale:**\n", ""), Options{KnownIssues: known},
			failed(MalformedDisagree, 21, "line 21: DISAGREE for ISSUE-R5-003 missing '**Rationale:**'")},
		// "**Rationale**:" and the like are read (TestNormalizeEngineer).
		{"rationale label misspelt", edit("**Rationale:**", "**Reasoning:**"), Options{},
			failed(MalformedDisagree, 21, "line 21: DISAGREE for ISSUE-R5-003 missing '**Rationale:**'")},
		{"empty rationale", with("## DISAGREE: ISSUE-R5-003\n\n**Reviewer Concern:**\n> quoted\n\n**Rationale:**\n\n**Alternative Approach:**\nNone.\n"), Options{},
			failed(MalformedDisagree, 21, "line 21: DISAGREE for ISSUE-R5-003 has an empty '**Rationale:**'")},
		{"duplicate block", with(example1 + "\n" + example1), Options{KnownIssues: known},
			failed(MalformedDisagree, 44, "line 44: second DISAGREE for ISSUE-R5-003 (first at line 21); write one block per issue")},
		// Levels 1 to 4 are read as level 2 (TestNormalizeEngineer).
		{"level-5 heading", edit("## DISAGREE", "##### DISAGREE"), Options{},
			failed(MalformedDisagree, 21, `line 21: DISAGREE must be a level-2 heading '## DISAGREE: ISSUE-R{N}-{XXX}', not "##### DISAGREE: ISSUE-R5-003"`)},
		{"no issue ID", edit("ISSUE-R5-003", "the retry issue"), Options{},
			failed(MalformedDisagree, 21, "line 21: DISAGREE heading \"## DISAGREE: the retry issue\" names no issue ID; write '## DISAGREE: ISSUE-R{N}-{XXX}' (IDs in `code` do not count)")},
		{"issue ID only in code", edit("ISSUE-R5-003", "`ISSUE-R5-003`"), Options{},
			failed(MalformedDisagree, 21, "line 21: DISAGREE heading \"## DISAGREE: `ISSUE-R5-003`\" names no issue ID; write '## DISAGREE: ISSUE-R{N}-{XXX}' (IDs in `code` do not count)")},
		{"placeholder ID", edit("ISSUE-R5-003", "ISSUE-R{N}-{XXX}"), Options{},
			failed(MalformedDisagree, 21, "line 21: DISAGREE heading \"## DISAGREE: ISSUE-R{N}-{XXX}\" names no issue ID; write '## DISAGREE: ISSUE-R{N}-{XXX}' (IDs in `code` do not count)")},
		// "—", "–" and "-" are read as ":" (TestNormalizeEngineer).
		{"no separator", edit("DISAGREE:", "DISAGREE with"), Options{},
			failed(AmbiguousStructure, 21, "line 21: \"## DISAGREE with ISSUE-R5-003\" reads like a DISAGREE for ISSUE-R5-003 but is not a DISAGREE block: write it as a level-2 heading '## DISAGREE: ISSUE-R5-003' followed by **Reviewer Concern:**, **Engineer Position:** and **Rationale:**")},
		{"two issues in one block", edit("ISSUE-R5-003", "ISSUE-R5-003, ISSUE-R5-004"), Options{},
			failed(MalformedDisagree, 21, "line 21: DISAGREE heading names 2 issues (ISSUE-R5-003, ISSUE-R5-004); write one DISAGREE block per issue")},
		{"round 0 is no issue ID", edit("ISSUE-R5-003", "ISSUE-R0-003"), Options{},
			failed(MalformedDisagree, 21, "line 21: DISAGREE heading names ISSUE-R0-003, which is not a valid issue ID (rounds 1-999, numbers 001-999)")},
		{"headings about disagreement are not blocks", with("### DISAGREE Format\n\n## Disagreement summary\n\nNone.\n"), Options{KnownIssues: []string{}}, ok},
		{"a block inside a fence is an example", with("```markdown\n" + example1 + "```\n"), Options{KnownIssues: []string{}}, ok},
		{"references are checked before DISAGREE blocks", with("GAP-FLOW-404\n\n" + example1), Options{KnownGaps: ids("GAP-FLOW-001"), KnownIssues: []string{}},
			failed(InconsistentRefs, 21, "line 21: Invalid gap references: [GAP-FLOW-404]. These do not exist in status.md.")},
		{"a DISAGREE block alone is not an Engineer output", example1, Options{KnownIssues: known},
			failed(WrongFormat, 0, "Missing required header: '## Gap Resolution:'")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Engineer(tt.src, tt.opt)
			if diff := cmp.Diff(tt.want, outcomeOf(got)); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDisagreeFields(t *testing.T) {
	src := gapSection("GAP-FLOW-001") + "\n" + example1 + `
## DISAGREE: ISSUE-R5-004

- **Reviewer Concern:** > "Use a database."
- **Rationale:** Files are enough; see GAP-FLOW-001.
  **Pros:** none of the cost.
---
Trailing text after a rule belongs to no field.
`
	got := Engineer(src, Options{KnownIssues: []string{"ISSUE-R5-003", "ISSUE-R5-004"}})
	want := []Disagreement{
		{
			IssueID: "ISSUE-R5-003",
			ReviewerConcern: "\"Retry mechanism should use exponential backoff. Implement 1s, 2s, 4s delays\n" +
				"between retries. Linear retries may overwhelm failed services.\"",
			EngineerPosition: "Exponential backoff adds complexity for marginal benefit in this context.",
			Rationale: "The retry target here is local file validation, not remote services. File system\n" +
				"operations complete or fail fast (<100ms). Adding delays would only slow the\n" +
				"workflow without reducing failure likelihood.\n\n" +
				"If retries are hitting rate limits, the problem is upstream (e.g., slow disk),\n" +
				"not retry frequency.",
			Alternative: "Keep instant retries for file operations. Add note that remote operation retries\n" +
				"(future scope) should use backoff.",
			Line: 21,
		},
		{
			IssueID:         "ISSUE-R5-004",
			ReviewerConcern: `"Use a database."`,
			Rationale:       "Files are enough; see GAP-FLOW-001.\n  **Pros:** none of the cost.",
			Line:            44,
		},
	}
	if !got.Success {
		t.Fatalf("Engineer failed: %s", got.Message)
	}
	if diff := cmp.Diff(want, got.Disagreements); diff != "" {
		t.Errorf("Disagreements (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"line 44: DISAGREE for ISSUE-R5-004 has no '**Engineer Position:**'"}, got.Warnings); diff != "" {
		t.Errorf("Warnings (-want +got):\n%s", diff)
	}
}
