package validate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/gap"
)

// review is a Reviewer output using every entry form: list items with
// indented fields, a #### heading, a paragraph with flattened fields, a
// numbered item, "None" entries, and a new gap.
const review = "# Review - Round 3\n" + // 1
	"\n" +
	"## Review: GAP-FLOW-001 (Error Recovery)\n" + // 3
	"\n" +
	"### Critical Issues\n" + // 5
	"- **ISSUE-R3-001**: Backoff is missing from the retry loop\n" +
	"  - Location: Section 4, `retry()`\n" +
	"  - Impact: Retries hammer the service\n" +
	"  - Suggestion: Add 1s, 2s, 4s delays\n" +
	"\n" +
	"### High Priority\n" + // 11
	"- ISSUE-R3-002 (HIGH): Timestamp format unspecified for GAP-FLOW-002\n" +
	"  - **Location:** `log.go`, Section 6\n" +
	"  - **Impact**: Logs cannot be sorted\n" +
	"  - **Suggestion:** Use ISO 8601\n" +
	"\n" +
	"### Medium Priority\n" + // 17
	"\n" +
	"#### ISSUE-R3-003: Retry count hard-coded\n" + // 19
	"\n" +
	"**Location:** Section 5\n" +
	"**Impact:** Cannot tune per role\n" +
	"\n" +
	"- Suggestion: Make it a Config field\n" +
	"\n" +
	"### Low Priority / Nits\n" + // 26
	"None found.\n" +
	"\n" +
	"### Consistency Checks\n" +
	"- [x] Consistent with related specs?\n" +
	"\n" +
	"## Review: GAP-FLOW-003\n" + // 32
	"\n" +
	"### High Priority\n" +
	"\n" +
	"**ISSUE-R3-004**: Handoff lacks a timeout\n" + // 36
	"- Location: Handoff section\n" +
	"\n" +
	"### Low Priority\n" +
	"- None\n" +
	"1. ISSUE-R3-005 — Typo in the table header\n" + // 41
	"\n" +
	"### New Gaps Identified\n" +
	"- GAP-FLOW-019 (LOW): Handoff timeout policy\n" // 44

func TestReviewerParse(t *testing.T) {
	got := Reviewer(review, Options{Round: 3, KnownGaps: ids("GAP-FLOW-001", "GAP-FLOW-002", "GAP-FLOW-003")})
	want := Result{
		Success: true,
		Message: "Content valid: 5 issues (1 CRITICAL, 2 HIGH, 1 MEDIUM, 1 LOW), verdict REVISE",
		Tier:    Content,
		Text:    review,
		NewGaps: []NewGap{{ID: "GAP-FLOW-019", Severity: gap.Low, Title: "Handoff timeout policy", Line: 44}},
		Issues: []Issue{
			{ID: "ISSUE-R3-001", Severity: gap.Critical, Gap: "GAP-FLOW-001", Summary: "Backoff is missing from the retry loop",
				Location: "Section 4, `retry()`", Impact: "Retries hammer the service", Suggestion: "Add 1s, 2s, 4s delays", Line: 6},
			{ID: "ISSUE-R3-002", Severity: gap.High, Gap: "GAP-FLOW-002", Summary: "Timestamp format unspecified for GAP-FLOW-002",
				Location: "`log.go`, Section 6", Impact: "Logs cannot be sorted", Suggestion: "Use ISO 8601", Line: 12},
			{ID: "ISSUE-R3-003", Severity: gap.Medium, Gap: "GAP-FLOW-001", Summary: "Retry count hard-coded",
				Location: "Section 5", Impact: "Cannot tune per role", Suggestion: "Make it a Config field", Line: 19},
			{ID: "ISSUE-R3-004", Severity: gap.High, Gap: "GAP-FLOW-003", Summary: "Handoff lacks a timeout",
				Location: "Handoff section", Line: 36},
			{ID: "ISSUE-R3-005", Severity: gap.Low, Gap: "GAP-FLOW-003", Summary: "Typo in the table header", Line: 41},
		},
		ReviewHeaders: []string{"GAP-FLOW-001 (Error Recovery)", "GAP-FLOW-003"},
		Verdict:       Revise,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Reviewer (-want +got):\n%s", diff)
	}
}

func TestReviewerFailures(t *testing.T) {
	const head = "## Review: GAP-FLOW-001\n\n### High Priority\n" // entries start on line 4
	tests := []struct {
		name string
		src  string
		opt  Options
		want outcome
	}{
		{"empty", "", Options{}, failed(EmptyOutput, 0, "File exists but is empty")},
		{"whitespace only", "\n \n", Options{}, failed(EmptyOutput, 0, "File exists but is empty (only whitespace)")},
		{"no review header", "### Critical Issues\n- **ISSUE-R3-001**: x\n", Options{},
			failed(WrongFormat, 0, "Missing required header: '## Review:'")},
		{"review header only in a fence", "```\n## Review: GAP-FLOW-001\n```\n### Critical Issues\n", Options{},
			failed(WrongFormat, 2, "Missing required header: '## Review:' (line 2 has it only inside code, where it is an example and does not count)")},
		// Levels 1 to 4 are read (TestNormalizeReviewer).
		{"review header at level 5", "##### Review: GAP-FLOW-001\n### Critical Issues\n", Options{},
			failed(WrongFormat, 1, `Missing required header: '## Review:' (line 1 has "##### Review: GAP-FLOW-001", which does not read as the header: write it as '## Review: …', a heading of level 1 to 4)`)},
		{"no severity sections", "## Review: GAP-FLOW-001\n\nLooks fine to me.\n", Options{},
			failed(WrongFormat, 0, "Reviewer must include severity sections or NO_ISSUES_FOUND")},
		{"severity sections at level 5", "## Review: GAP-FLOW-001\n\n##### High Priority\n- ISSUE-R3-001: x\n", Options{},
			failed(WrongFormat, 3, `Reviewer must include severity sections or NO_ISSUES_FOUND (line 3 has "##### High Priority", which does not read as a severity section: write it as a heading of level 1 to 4 such as '### High Priority')`)},
		{"severity section only in a fence", "## Review: GAP-FLOW-001\n```\n### Critical Issues\n```\n", Options{},
			failed(WrongFormat, 3, "Reviewer must include severity sections or NO_ISSUES_FOUND (line 3 has it only inside code, where it is an example and does not count)")},
		{"NO_ISSUES_FOUND only in code", "## Review: GAP-FLOW-001\n\nWrite `NO_ISSUES_FOUND` when done.\n", Options{},
			failed(WrongFormat, 3, "Reviewer must include severity sections or NO_ISSUES_FOUND (line 3 has it only inside code, where it is an example and does not count)")},
		{"entry without an ID", head + "- Retry is slow\n", Options{},
			failed(WrongFormat, 4, `line 4: issue entry under "High Priority" has no issue ID: "Retry is slow" (want ISSUE-R{N}-NNN, e.g. "- **ISSUE-R{N}-001**: summary")`)},
		{"entry without an ID, round given", head + "- Retry is slow\n", Options{Round: 3},
			failed(WrongFormat, 4, `line 4: issue entry under "High Priority" has no issue ID: "Retry is slow" (want ISSUE-R3-NNN, e.g. "- **ISSUE-R3-001**: summary")`)},
		{"heading entry without an ID", head + "\n#### Retry is slow\n", Options{Round: 3},
			failed(WrongFormat, 5, `line 5: issue entry under "High Priority" has no issue ID: "Retry is slow" (want ISSUE-R3-NNN, e.g. "- **ISSUE-R3-001**: summary")`)},
		{"ID only in inline code", head + "- `ISSUE-R3-001`: x\n", Options{Round: 3},
			failed(WrongFormat, 4, "line 4: issue entry under \"High Priority\" has no issue ID: \"`ISSUE-R3-001`: x\" (want ISSUE-R3-NNN, e.g. \"- **ISSUE-R3-001**: summary\")")},
		{"placeholder ID", head + "- **ISSUE-RN-001**: [Description]\n", Options{Round: 3},
			failed(WrongFormat, 4, `line 4: issue entry under "High Priority" has no issue ID: "**ISSUE-RN-001**: [Description]" (want ISSUE-R3-NNN, e.g. "- **ISSUE-R3-001**: summary")`)},
		{"4-digit round is no ID", head + "- ISSUE-R1000-001: x\n", Options{},
			failed(WrongFormat, 4, `line 4: issue entry under "High Priority" has no issue ID: "ISSUE-R1000-001: x" (want ISSUE-R{N}-NNN, e.g. "- **ISSUE-R{N}-001**: summary")`)},
		{"round 0", head + "- ISSUE-R0-001: x\n", Options{},
			failed(WrongFormat, 4, "line 4: ISSUE-R0-001 is not a valid issue ID (rounds 1-999, numbers 001-999; want ISSUE-R{N}-NNN)")},
		{"number 000", head + "- ISSUE-R3-000: x\n", Options{Round: 3},
			failed(WrongFormat, 4, "line 4: ISSUE-R3-000 is not a valid issue ID (rounds 1-999, numbers 001-999; want ISSUE-R3-NNN)")},
		{"ID of another round", head + "- ISSUE-R2-001: x\n", Options{Round: 3},
			failed(WrongFormat, 4, "line 4: issue ID ISSUE-R2-001 is not of round 3 (want ISSUE-R3-NNN)")},
		{"duplicate ID across sections", head + "- ISSUE-R3-001: x\n\n### Low Priority\n- ISSUE-R3-001: y\n", Options{Round: 3},
			failed(WrongFormat, 7, "line 7: duplicate issue ID ISSUE-R3-001 (first at line 4); each issue needs its own ID")},
		{"issues in a table", head + "| ID | Summary |\n|----|---------|\n| ISSUE-R2-001 | x |\n", Options{},
			failed(WrongFormat, 6, `line 6: ISSUE-R2-001 under "High Priority" is not written as an issue entry; write each issue as a list item "- **ISSUE-R2-001**: summary" or a heading "#### ISSUE-R2-001: summary"`)},
		{"this round's ID in a stray paragraph", head + "- ISSUE-R3-001: x\n\nAlso see ISSUE-R3-009.\n", Options{Round: 3},
			failed(WrongFormat, 6, `line 6: ISSUE-R3-009 under "High Priority" is not written as an issue entry; write each issue as a list item "- **ISSUE-R3-009**: summary" or a heading "#### ISSUE-R3-009: summary"`)},
		{"over-indented entry, round unknown", head + "  - ISSUE-R3-001: x\n", Options{},
			failed(WrongFormat, 4, `line 4: ISSUE-R3-001 under "High Priority" is not written as an issue entry; write each issue as a list item "- **ISSUE-R3-001**: summary" or a heading "#### ISSUE-R3-001: summary"`)},
		{"unknown gap in an entry", head + "- ISSUE-R3-001: breaks GAP-FLOW-404\n", Options{Round: 3, KnownGaps: ids("GAP-FLOW-001")},
			failed(InconsistentRefs, 4, "line 4: Invalid gap references: [GAP-FLOW-404]. These do not exist in status.md.")},
		{"unknown gap in the review header", head + "- ISSUE-R3-001: x\n", Options{KnownGaps: ids("GAP-FLOW-002")},
			failed(InconsistentRefs, 1, "line 1: Invalid gap references: [GAP-FLOW-001]. These do not exist in status.md.")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Reviewer(tt.src, tt.opt)
			if diff := cmp.Diff(tt.want, outcomeOf(got)); diff != "" {
				t.Errorf("Reviewer outcome (-want +got):\n%s", diff)
			}
		})
	}
}

// The "No Issues Found" form of GAP-FLOW-004 (round-01), written out as a
// real output rather than the spec's fenced example.
const noIssues = `## Review: Round N - No Issues Found

### Summary
Engineer's proposals for Round N have been reviewed.
No critical, high, medium, or low priority issues identified.

### Completeness Checks
- [x] All addressed gaps have concrete solutions
- [x] Examples are sufficient for implementation

### Recommendation
**APPROVE** - Proposals are ready for user decision or incorporation.
`

func TestReviewerVerdicts(t *testing.T) {
	type summary struct {
		Success       bool
		Verdict       Verdict
		NoIssuesFound bool
		IssueIDs      []string
		Gaps          []gap.ID
		Summaries     []string
		Warnings      []string
	}
	const head = "## Review: GAP-FLOW-001\n\n"
	tests := []struct {
		name string
		src  string
		want summary
	}{
		{"No Issues Found form", noIssues, summary{Success: true, Verdict: Approve, NoIssuesFound: true}},
		{"NO_ISSUES_FOUND marker", head + "NO_ISSUES_FOUND\n\n### Completeness Checks\n- [x] done\n",
			summary{Success: true, Verdict: Approve, NoIssuesFound: true}},
		{"NO_ISSUES_FOUND without a checklist", head + "NO_ISSUES_FOUND\n",
			summary{Success: true, Verdict: Approve, NoIssuesFound: true,
				Warnings: []string{"NO_ISSUES_FOUND without a completeness checklist (\"- [x] …\" items showing what was verified)"}}},
		{"template answered with None found", head + "### Critical Issues\n\nNone found\n\n### High Priority\n\n- None found.\n\n### Medium Priority\n\n- N/A\n\n### Low Priority / Nits\n\n#### None\n",
			summary{Success: true, Verdict: Approve}},
		{"only medium and low issues approve", head + "### Medium Priority\n- ISSUE-R3-001: a\n### Low Priority\n- ISSUE-R3-002: b\n",
			summary{Success: true, Verdict: Approve, IssueIDs: []string{"ISSUE-R3-001", "ISSUE-R3-002"}, Gaps: ids("GAP-FLOW-001", "GAP-FLOW-001")}},
		{"written verdict is ignored", head + "**Verdict:** APPROVE\n\n### High Priority\n- ISSUE-R3-001: a\n",
			summary{Success: true, Verdict: Revise, IssueIDs: []string{"ISSUE-R3-001"}, Gaps: ids("GAP-FLOW-001")}},
		{"marker with issues: the issues count", head + "NO_ISSUES_FOUND\n\n### Critical Issues\n- ISSUE-R3-001: a\n",
			summary{Success: true, Verdict: Revise, IssueIDs: []string{"ISSUE-R3-001"}, Gaps: ids("GAP-FLOW-001"),
				Warnings: []string{"the review states no issues were found but lists 1 issue; the issues count"}}},
		{"inline severity disagrees with the section", head + "### Low Priority\n- ISSUE-R3-001 (CRITICAL): a\n  - Severity: HIGH\n",
			summary{Success: true, Verdict: Approve, IssueIDs: []string{"ISSUE-R3-001"}, Gaps: ids("GAP-FLOW-001"),
				Warnings: []string{
					`line 4: ISSUE-R3-001 is tagged CRITICAL but sits under "Low Priority"; the section decides (LOW)`,
					`line 5: ISSUE-R3-001 is tagged HIGH but sits under "Low Priority"; the section decides (LOW)`,
				}}},
		{"tags after the ID", head + "### High Priority\n- **ISSUE-R3-001** (HIGH) [GAP-FLOW-002]: Summary\n1. ISSUE-R3-002 (Severity: HIGH, GAP-FLOW-003) — Other\n- ISSUE-R3-003 (see below): Kept\n",
			summary{Success: true, Verdict: Revise, IssueIDs: []string{"ISSUE-R3-001", "ISSUE-R3-002", "ISSUE-R3-003"}, Gaps: ids("GAP-FLOW-002", "GAP-FLOW-003", "GAP-FLOW-001"),
				Summaries: []string{"Summary", "Other", "(see below): Kept"}}},
		{"issue with no gap anywhere", "## Review: Round 3 proposals\n\n### High Priority\n- ISSUE-R3-001: a\n",
			summary{Success: true, Verdict: Revise, IssueIDs: []string{"ISSUE-R3-001"}, Gaps: ids(""),
				Warnings: []string{"line 4: ISSUE-R3-001 names no gap and its review header names none; it cannot be attributed to a gap"}}},
		{"previous-round reference outside entries", head + "### High Priority\n- ISSUE-R3-001: a\n\nISSUE-R2-004 was fixed.\n",
			summary{Success: true, Verdict: Revise, IssueIDs: []string{"ISSUE-R3-001"}, Gaps: ids("GAP-FLOW-001")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Reviewer(tt.src, Options{Round: 3})
			got := summary{Success: r.Success, Verdict: r.Verdict, NoIssuesFound: r.NoIssuesFound, Warnings: r.Warnings}
			for _, is := range r.Issues {
				got.IssueIDs = append(got.IssueIDs, is.ID)
				got.Gaps = append(got.Gaps, is.Gap)
				if tt.want.Summaries != nil {
					got.Summaries = append(got.Summaries, is.Summary)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Reviewer (-want +got):\n%s\nmessage: %s", diff, r.Message)
			}
		})
	}
}

// Sessions run past round 99: a three-digit round is an issue ID.
func TestReviewerThreeDigitRound(t *testing.T) {
	src := "## Review: GAP-FLOW-001\n\n### High Priority\n- **ISSUE-R100-001**: retries are unbounded (GAP-FLOW-001)\n"
	r := Reviewer(src, Options{Round: 100})
	if !r.Success || len(r.Issues) != 1 || r.Issues[0].ID != "ISSUE-R100-001" {
		t.Fatalf("Reviewer = %+v, want one issue ISSUE-R100-001", r)
	}
}
