package core

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/conflict"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/core/state"
)

// TestVerdictTransitions checks the review's decision apart from its
// application: which gaps move, where, and why.
func TestVerdictTransitions(t *testing.T) {
	at := time.Date(2026, 1, 12, 14, 30, 0, 0, time.UTC)
	ledger := func(t *testing.T) *gap.Ledger {
		var l gap.Ledger
		for _, id := range []gap.ID{"GAP-VT-001", "GAP-VT-002", "GAP-VT-003", "GAP-VT-004"} {
			if err := l.Add(gap.Gap{ID: id, Severity: gap.High}); err != nil {
				t.Fatal(err)
			}
		}
		for _, mv := range []struct {
			id gap.ID
			to []gap.State
		}{
			{"GAP-VT-001", []gap.State{gap.InProgress, gap.Proposed}},
			{"GAP-VT-002", []gap.State{gap.InProgress, gap.Proposed}},
			{"GAP-VT-003", []gap.State{gap.InProgress, gap.Proposed, gap.Accepted}},
		} {
			for _, to := range mv.to {
				if err := l.Transition(mv.id, to, 1, at, "setup"); err != nil {
					t.Fatal(err)
				}
			}
		}
		return &l
	}
	issue := func(id string, sev gap.Severity, g gap.ID) conflict.Issue {
		return conflict.Issue{ID: id, Severity: sev, Gap: g}
	}
	under := []gap.ID{"GAP-VT-001", "GAP-VT-002", "GAP-VT-004"}
	tests := []struct {
		name string
		rev  state.AcceptedOutput
		want []Transition
	}{
		{"no issue accepts every proposal", state.AcceptedOutput{}, []Transition{
			{"GAP-VT-001", gap.Accepted, "reviewed: no open HIGH/CRITICAL issue"},
			{"GAP-VT-002", gap.Accepted, "reviewed: no open HIGH/CRITICAL issue"},
		}},
		{"a HIGH issue sends its gap back; a LOW one does not",
			state.AcceptedOutput{Issues: []conflict.Issue{issue("ISSUE-R2-001", gap.High, "GAP-VT-002"), issue("ISSUE-R2-002", gap.Low, "GAP-VT-001"), issue("ISSUE-R2-003", gap.Critical, "GAP-VT-002")}},
			[]Transition{
				{"GAP-VT-001", gap.Accepted, "reviewed: no open HIGH/CRITICAL issue"},
				{"GAP-VT-002", gap.NeedsRevision, "reviewer raised ISSUE-R2-001, ISSUE-R2-003"},
			}},
		{"review headers narrow the review to the gaps they name or raise issues against",
			state.AcceptedOutput{ReviewedGaps: []gap.ID{"GAP-VT-001"}, Issues: []conflict.Issue{issue("ISSUE-R2-001", gap.Medium, "GAP-VT-004")}},
			[]Transition{{"GAP-VT-001", gap.Accepted, "reviewed: no open HIGH/CRITICAL issue"}}},
		{"an accepted gap outside the review is reopened by a CRITICAL issue",
			state.AcceptedOutput{ReviewedGaps: []gap.ID{"GAP-VT-001"}, Issues: []conflict.Issue{issue("ISSUE-R2-001", gap.Critical, "GAP-VT-003")}},
			[]Transition{
				{"GAP-VT-001", gap.Accepted, "reviewed: no open HIGH/CRITICAL issue"},
				{"GAP-VT-003", gap.NeedsRevision, "reopened by ISSUE-R2-001"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := VerdictTransitions(ledger(t), under, &tt.rev)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(Transition{})); diff != "" {
				t.Errorf("verdictTransitions (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMergeParts checks how the parts' accepted outputs make the
// Engineer's: addressed gaps once each, in gap order, and a warning for a
// part without a valid output.
func TestMergeParts(t *testing.T) {
	parts := []*state.PartState{
		{Gap: "GAP-MP-001", Status: state.RoleAccepted, Result: &state.AcceptedOutput{GapsAddressed: []gap.ID{"GAP-MP-001", "GAP-MP-002"}, Warnings: []string{"w1"}}},
		{Gap: "GAP-MP-002", Status: state.PartExhausted, Attempts: []state.AttemptRec{{N: 1}, {N: 2}}},
		{Gap: "GAP-MP-003", Status: state.RoleAccepted, Result: &state.AcceptedOutput{GapsAddressed: []gap.ID{"GAP-MP-002", "GAP-MP-003"},
			NewGaps: []state.NewGap{{ID: "GAP-MP-009", Severity: gap.Low}}, Disagreements: []string{"ISSUE-R1-001"}}},
	}
	want := &state.AcceptedOutput{
		GapsAddressed: []gap.ID{"GAP-MP-001", "GAP-MP-002", "GAP-MP-003"},
		NewGaps:       []state.NewGap{{ID: "GAP-MP-009", Severity: gap.Low}},
		Disagreements: []string{"ISSUE-R1-001"},
		Warnings:      []string{"w1", "GAP-MP-002: no valid output after 2 attempts; returned to OPEN"},
	}
	if diff := cmp.Diff(want, mergeParts(parts)); diff != "" {
		t.Errorf("mergeParts (-want +got):\n%s", diff)
	}
}
