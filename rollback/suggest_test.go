package rollback

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSuggestSplit(t *testing.T) {
	tests := []struct {
		name     string
		title    string
		concerns []string
		want     []string
	}{
		{"one sub-gap per distinct concern, in order", "Rollback mechanism",
			[]string{"State restoration is unspecified", "UX of the prompts is unclear", "state restoration is unspecified."},
			[]string{"Rollback mechanism: State restoration is unspecified", "Rollback mechanism: UX of the prompts is unclear"}},
		{"at most three", "Paging", []string{"cursor format", "page size", "ordering", "total count"},
			[]string{"Paging: cursor format", "Paging: page size", "Paging: ordering"}},
		// #40 item 2c: the same complaint twice, worded with "still" and
		// "again", is one concern, and a complaint about the gap as a
		// whole is none: no split to suggest.
		{"still and again are one concern", "Retry schedule",
			[]string{"Retry backoff timing still unspecified", "Retry backoff timing unspecified again"}, nil},
		{"a complaint about the whole gap is no concern", "Retry schedule",
			[]string{"Retry schedule is still unclear", "Backoff timing is missing"}, nil},
		{"the IDs a finding names are no part of it", "Retry schedule",
			[]string{"Backoff timing unclear (GAP-HOOK-001)", "Dead-letter queue absent (GAP-HOOK-001, ISSUE-R1-002)"},
			[]string{"Retry schedule: Backoff timing unclear", "Retry schedule: Dead-letter queue absent"}},
		{"too few concerns: none suggested", "Paging.", []string{"cursor format"}, nil},
		{"no title", "", []string{"cursor format", "page size"}, []string{"Gap: cursor format", "Gap: page size"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SuggestSplit(tt.title, tt.concerns)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("SuggestSplit (-want +got):\n%s", diff)
			}
			if len(got) == 1 || len(got) > 3 {
				t.Errorf("%d titles, want none or 2 to 3 (ApplySplit needs at least 2)", len(got))
			}
		})
	}
}

// The sections an attempt wrote and another did not are concerns (the
// attempts addressed different parts of the gap); the sections every
// resolution has, and those every attempt wrote, are not; the findings
// follow.
func TestConcerns(t *testing.T) {
	doc := func(subs ...string) string {
		out := "## Gap Resolution: GAP-HOOK-001\n\n"
		for _, s := range subs {
			out += "### " + s + "\n\nText.\n\n"
		}
		return out
	}
	attempts := []AttemptInfo{
		{Attempt: 1, Engineer: doc("Proposed Solution", "Backoff schedule", "Trade-offs", "Examples", "Delivery log")},
		{Attempt: 2, Engineer: doc("Proposed Solution", "Dead-letter queue", "Trade-offs", "Delivery log", "Response to ISSUE-R1-001")},
	}
	got := Concerns(attempts, []string{"Signature header named two ways"})
	if diff := cmp.Diff([]string{"Backoff schedule", "Dead-letter queue", "Signature header named two ways"}, got); diff != "" {
		t.Errorf("Concerns (-want +got):\n%s", diff)
	}
	split := SuggestSplit("Retry schedule", got)
	if diff := cmp.Diff([]string{"Retry schedule: Backoff schedule", "Retry schedule: Dead-letter queue", "Retry schedule: Signature header named two ways"}, split); diff != "" {
		t.Errorf("SuggestSplit of the concerns (-want +got):\n%s", diff)
	}
	if got := Concerns(attempts[:1], nil); len(got) != 0 {
		t.Errorf("one attempt has no sections to compare: %v", got)
	}
}
