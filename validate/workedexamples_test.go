package validate

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/gap"
)

// sectionOf builds a Gap Resolution section whose extract_gap_section length
// is exactly chars characters, mentioning refs in its text.
func sectionOf(t *testing.T, id string, chars int, refs ...string) string {
	t.Helper()
	head := "\n**Confidence:** HIGH\n\n### Proposed Solution\n\nThis resolves " + id + " and relates to " + strings.Join(refs, ", ") + ". "
	tail := "\n\n### Trade-offs\n\n**Pros:** clear.\n\n**Cons:** strict.\n"
	pad := chars - utf8.RuneCountInString(strings.TrimSpace(head+tail))
	if pad < 0 {
		t.Fatalf("section for %s cannot be %d chars", id, chars)
	}
	body := head + strings.Repeat("x", pad) + tail
	return "## Gap Resolution: " + id + body + "\n"
}

// round-09 "Examples": the four validations walked through in the spec.
func TestRound09WorkedExamples(t *testing.T) {
	status := ids("GAP-FLOW-001", "GAP-FLOW-002", "GAP-FLOW-003", "GAP-FLOW-004", "GAP-UX-001")

	t.Run("Example 1: success on first try", func(t *testing.T) {
		src := "# Engineer Proposals - Round 5\n\n" +
			sectionOf(t, "GAP-FLOW-001", 1234, "GAP-FLOW-003") + "\n" +
			sectionOf(t, "GAP-FLOW-002", 1890, "GAP-FLOW-004")
		r := Engineer(src, Options{KnownGaps: status})
		want := outcome{Success: true, Tier: Content, Message: "Content valid: 2 gaps addressed"}
		if diff := cmp.Diff(want, outcomeOf(r)); diff != "" {
			t.Errorf("outcome (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(ids("GAP-FLOW-001", "GAP-FLOW-002"), r.GapsAddressed); diff != "" {
			t.Errorf("gaps_addressed (-want +got):\n%s", diff)
		}
		var chars []int
		for _, s := range r.Sections {
			chars = append(chars, s.Chars)
		}
		if diff := cmp.Diff([]int{1234, 1890}, chars); diff != "" {
			t.Errorf("section lengths (-want +got):\n%s", diff)
		}
		if len(r.Warnings) != 0 {
			t.Errorf("warnings: %q", r.Warnings)
		}
	})

	t.Run("Example 2: wrong format, then valid on retry", func(t *testing.T) {
		attempt1 := "# Proposal for the handoff gap\n\n**Confidence:** HIGH\n\n" + strings.Repeat("The handoff writes a file. ", 30)
		r := Engineer(attempt1, Options{KnownGaps: status})
		if diff := cmp.Diff(failed(WrongFormat, 0, "Missing required header: '## Gap Resolution:'"), outcomeOf(r)); diff != "" {
			t.Errorf("attempt 1 (-want +got):\n%s", diff)
		}
		r = Engineer(sectionOf(t, "GAP-FLOW-003", 2100), Options{KnownGaps: status})
		want := outcome{Success: true, Tier: Content, Message: "Content valid: 1 gap addressed"}
		if diff := cmp.Diff(want, outcomeOf(r)); diff != "" || !cmp.Equal(r.GapsAddressed, ids("GAP-FLOW-003")) {
			t.Errorf("attempt 2 (-want +got):\n%s gaps %v", diff, r.GapsAddressed)
		}
	})

	t.Run("Example 3: no gaps addressed twice, then narrowed", func(t *testing.T) {
		vague := "## Gap Resolution: Error handling in general\n\n**Confidence:** MEDIUM\n\nWe should handle errors better.\n"
		for attempt := 1; attempt <= 2; attempt++ {
			r := Engineer(vague, Options{KnownGaps: status})
			want := failed(NoGapsAddressed, 1, noGap(1, "## Gap Resolution: Error handling in general", true))
			if diff := cmp.Diff(want, outcomeOf(r)); diff != "" {
				t.Errorf("attempt %d (-want +got):\n%s", attempt, diff)
			}
		}
		r := Engineer(sectionOf(t, "GAP-UX-001", 400), Options{KnownGaps: status})
		if !r.Success || !cmp.Equal(r.GapsAddressed, ids("GAP-UX-001")) {
			t.Errorf("attempt 3 (narrowed): %s %s %v", r.FailureType, r.Message, r.GapsAddressed)
		}
	})

	t.Run("Example 4: invalid cross-references", func(t *testing.T) {
		attempt1 := sectionOf(t, "GAP-FLOW-099", 600) + "\n" + sectionOf(t, "GAP-FLOW-100", 600)
		r := Engineer(attempt1, Options{KnownGaps: status})
		want := failed(InconsistentRefs, 1, "line 1: Invalid gap references: [GAP-FLOW-099, GAP-FLOW-100]. These do not exist in status.md.")
		if diff := cmp.Diff(want, outcomeOf(r)); diff != "" {
			t.Errorf("attempt 1 (-want +got):\n%s", diff)
		}
		// The IDs are well formed, so they are still what the output addresses.
		if diff := cmp.Diff([]gap.ID{"GAP-FLOW-099", "GAP-FLOW-100"}, r.GapsAddressed); diff != "" {
			t.Errorf("attempt 1 gaps_addressed (-want +got):\n%s", diff)
		}
		attempt2 := sectionOf(t, "GAP-FLOW-001", 600) + "\n" + sectionOf(t, "GAP-FLOW-002", 600)
		r = Engineer(attempt2, Options{KnownGaps: status})
		if !r.Success || r.Message != "Content valid: 2 gaps addressed" {
			t.Errorf("attempt 2: %s %s", r.FailureType, r.Message)
		}
	})
}
