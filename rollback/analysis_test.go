package rollback

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/refine-spec/refine/gap"
)

// specReportOutput reproduces the spec's sample report: GAP-FLOW-007
// partly addressed (Solution and Examples, one example, vague language, no
// trade-offs), GAP-FLOW-008 not addressed.
const specReportOutput = `## Gap Resolution: GAP-FLOW-007

### Solution

Roll back to an appropriate round as needed. Keep a reasonable number of
backups and delete them when necessary. Archives are compressed properly so
that storage stays sufficient for typical sessions, and the Mediator restores
the state correctly after every rollback.

### Examples

**Example 1:** Round 5 is rolled back to Round 4.
`

func TestAdjustments(t *testing.T) {
	d := DetectPatterns(Input{
		Engineer: "# nothing addressed\n\nGAP-FLOW-077 TERM_X\n",
		Reviewer: "the term is undefined",
		Assigned: []gap.ID{"GAP-FLOW-001"},
		Known:    []gap.ID{"GAP-FLOW-001"},
		Context:  "spec",
	})
	if diff := cmp.Diff([]Pattern{MissingSections, NarrowExamples, inconsistentRefs, domainConfusion}, d.Patterns()); diff != "" {
		t.Fatalf("patterns (-want +got):\n%s", diff)
	}
	auto := AutoAdjustments(d)
	want := "Your primary task is to address GAP-FLOW-001. Begin your response with '## Gap Resolution: GAP-FLOW-001'\n" +
		"Include at least 2 examples: one success case, one edge case.\n" +
		"Reference only gap IDs from the attached gap list.\n" +
		"Use terms as defined in the attached glossary, and define any new term before using it."
	if diff := cmp.Diff(want, PromptText(auto)); diff != "" {
		t.Errorf("auto prompt (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Attachment{AttachGapList, AttachResolvedGaps}, auto[2].Attach); diff != "" {
		t.Errorf("attachments (-want +got):\n%s", diff)
	}
	rec := Recommend(d)
	if got := rec[2].Prompt; got != "Reference only gap IDs from the attached gap list; GAP-FLOW-077 do not exist." {
		t.Errorf("recommended refs prompt %q", got)
	}
	// The abstract-output auto-adjustment is the spec's "Output too abstract" text.
	d = DetectPatterns(Input{Engineer: gapSectionText("GAP-FLOW-001", 7)})
	if got := PromptText(AutoAdjustments(d)); got != "Include at least 3 concrete examples with specific values. Abstract descriptions are insufficient." {
		t.Errorf("abstract auto prompt %q", got)
	}
}
