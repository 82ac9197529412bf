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
		{"one sub-gap per distinct concern, oldest first", "Rollback mechanism",
			[]string{"State restoration is unspecified", "UX of the prompts is unclear", "state restoration is unspecified."},
			[]string{"Rollback mechanism: UX of the prompts is unclear", "Rollback mechanism: state restoration is unspecified"}},
		{"at most three", "Paging", []string{"a", "b", "c", "d"}, []string{"Paging: b", "Paging: c", "Paging: d"}},
		{"too few concerns: behaviour and limits", "Paging.", []string{"cursor format"},
			[]string{"Paging: core behaviour and data", "Paging: limits, failures and user interaction"}},
		{"no title", "", nil, []string{"Gap: core behaviour and data", "Gap: limits, failures and user interaction"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SuggestSplit(tt.title, tt.concerns)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("SuggestSplit (-want +got):\n%s", diff)
			}
			if len(got) < 2 || len(got) > 3 {
				t.Errorf("%d titles, want 2 or 3 (ApplySplit needs at least 2)", len(got))
			}
		})
	}
}
