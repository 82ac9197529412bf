package validate_test

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/validate"
)

func ExampleEngineer() {
	output := "## Gap Resolution: GAP-FLOW-001\n" +
		"\n" +
		"**Confidence:** HIGH\n" +
		"\n" +
		"Retry twice with a failure-specific prompt, as GAP-FLOW-008 describes.\n" +
		"\n" +
		"### New Gaps Introduced\n" +
		"- GAP-FLOW-019 (LOW): Calibrate the thin-content threshold\n"

	r := validate.Engineer(output, validate.Options{
		KnownGaps: []gap.ID{"GAP-FLOW-001", "GAP-FLOW-008"},
	})
	fmt.Println(r.Success, r.Message)
	fmt.Println("addressed:", r.GapsAddressed)
	for _, g := range r.NewGaps {
		fmt.Println("new:", g.ID, g.Severity, g.Title)
	}
	for _, w := range r.Warnings {
		fmt.Println("warning:", w)
	}

	// A reference to a gap the session does not know fails, retriably.
	r = validate.Engineer(output+"See GAP-FLOW-404.\n", validate.Options{
		KnownGaps: []gap.ID{"GAP-FLOW-001", "GAP-FLOW-008"},
	})
	fmt.Println(r.FailureType, r.Retriable, r.Line)
	fmt.Println(r.Message)
	// Output:
	// true Content valid with warnings: 1 gap addressed
	// addressed: [GAP-FLOW-001]
	// new: GAP-FLOW-019 LOW Calibrate the thin-content threshold
	// warning: line 1: Gap GAP-FLOW-001 section is thin (176 chars)
	// warning: line 1: Missing ### Trade-offs section (recommended) for GAP-FLOW-001
	// INCONSISTENT_REFS true 9
	// line 9: Invalid gap references: [GAP-FLOW-404]. These do not exist in status.md.
}

func ExampleReviewer() {
	output := "## Review: GAP-FLOW-001\n" +
		"\n" +
		"### High Priority\n" +
		"- **ISSUE-R3-001**: Retry delays are unspecified\n" +
		"  - Location: Section 4\n" +
		"  - Suggestion: Retry at once; files fail fast\n" +
		"\n" +
		"### Low Priority\n" +
		"- None\n"

	r := validate.Reviewer(output, validate.Options{Round: 3})
	fmt.Println(r.Success, r.Verdict)
	for _, is := range r.Issues {
		fmt.Printf("%s %s %s: %s (%s)\n", is.ID, is.Severity, is.Gap, is.Summary, is.Location)
	}
	// Output:
	// true REVISE
	// ISSUE-R3-001 HIGH GAP-FLOW-001: Retry delays are unspecified (Section 4)
}

// Result marshals to the `refine validate --json` shape.
func ExampleResult_MarshalJSON() {
	r := validate.FileMissing("round_003/engineer.md")
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	_ = enc.Encode(r)
	// Output:
	// {
	//   "success": false,
	//   "failure_type": "FILE_MISSING",
	//   "retriable": true,
	//   "message": "Expected file not found: round_003/engineer.md",
	//   "line": 0,
	//   "warnings": [],
	//   "gaps_addressed": [],
	//   "issues": [],
	//   "disagreements": [],
	//   "sections": [],
	//   "new_gaps": [],
	//   "verdict": "",
	//   "normalized": []
	// }
}
