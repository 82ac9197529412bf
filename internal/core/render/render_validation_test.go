package render

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/validate"
)

// The validation summary is rendered from the state alone: the attempts a
// role made (a structure row or a failure each, never the escalation
// row), whether its content passed, and the type of its last failure —
// for a legacy row, the one its recorded attempt names, else its tier.
func TestValidationSummaryFromState(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	row := func(role llm.RoleName, attempt int, tier, result, failure string) state.ValidationEntry {
		return state.ValidationEntry{Round: 3, At: at, Role: role, Attempt: attempt, Tier: tier, Result: result, Message: "m", FailureType: validate.FailureType(failure)}
	}
	current := &state.RoundState{N: 3}
	current.Engineer.Attempts = []state.AttemptRec{{N: 1, FailureType: "WRONG_FORMAT"}, {N: 2, Success: true}}
	tests := []struct {
		name    string
		current *state.RoundState
		rows    []state.ValidationEntry
		want    []string
	}{
		{"passed first time", nil,
			[]state.ValidationEntry{row(llm.Engineer, 1, "Structure", "PASS", ""), row(llm.Engineer, 1, "Content", "PASS", "")},
			[]string{"| Engineer | SUCCESS | 1 | N/A |"}},
		{"passed on retry", nil,
			[]state.ValidationEntry{row(llm.Reviewer, 1, "Content", "FAIL", "MISSING_VERDICT"), row(llm.Reviewer, 2, "Structure", "PASS", ""), row(llm.Reviewer, 2, "Content", "PASS", "")},
			[]string{"| Reviewer | SUCCESS | 2 | N/A (passed on retry) |"}},
		{"budget spent: the escalation row is no attempt", nil,
			[]state.ValidationEntry{row(llm.Engineer, 1, "Structure", "FAIL", "WRONG_FORMAT"), row(llm.Engineer, 2, "Content", "FAIL", "THIN_CONTENT"), row(llm.Engineer, 2, state.TierEscalation, "FAIL", "MAX_RETRIES_EXHAUSTED")},
			[]string{"| Engineer | FAILED | 2 | THIN_CONTENT |"}},
		{"legacy row: the recorded attempt names the failure", current,
			[]state.ValidationEntry{row(llm.Engineer, 1, "Structure", "FAIL", "")},
			[]string{"| Engineer | FAILED | 1 | WRONG_FORMAT |"}},
		{"legacy row without its attempt: the tier", nil,
			[]state.ValidationEntry{row(llm.Engineer, 1, "Structure", "FAIL", ""), row(llm.Reviewer, 1, "Content", "FAIL", "")},
			[]string{"| Engineer | FAILED | 1 | Structure |", "| Reviewer | FAILED | 1 | Content |"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			RenderValidationLog(&b, &state.State{Current: tc.current}, 3, tc.rows, nil)
			summary, _, _ := strings.Cut(strings.SplitN(b.String(), "|-------------------|\n", 2)[1], "\n### Detailed Log")
			if diff := cmp.Diff(tc.want, strings.Split(strings.TrimSpace(summary), "\n")); diff != "" {
				t.Errorf("validation summary (-want +got):\n%s\nrendered:\n%s", diff, b.String())
			}
		})
	}
}
