package core

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/retry"
)

// escalationState is round 5 with the Engineer on GAP-FLOW-001 and -002
// (IN_PROGRESS, two failed attempts) and the Reviewer given GAP-FLOW-003
// and -004; GAP-FLOW-005 (LOW) and -006 (HIGH) are OPEN.
func escalationState(t *testing.T) *state.State {
	t.Helper()
	var l gap.Ledger
	for _, g := range []gap.Gap{
		{ID: "GAP-FLOW-001", Severity: gap.High, State: gap.InProgress},
		{ID: "GAP-FLOW-002", Severity: gap.Low, State: gap.InProgress},
		{ID: "GAP-FLOW-003", Severity: gap.High, State: gap.Proposed},
		{ID: "GAP-FLOW-004", Severity: gap.Medium, State: gap.Proposed},
		{ID: "GAP-FLOW-005", Severity: gap.Low, State: gap.Open},
		{ID: "GAP-FLOW-006", Severity: gap.High, State: gap.Open},
	} {
		if err := l.Add(g); err != nil {
			t.Fatal(err)
		}
	}
	return &state.State{Ledger: l, Current: &state.RoundState{
		N: 5, Assigned: []gap.ID{"GAP-FLOW-001", "GAP-FLOW-002"},
		Reviewed: []gap.ID{"GAP-FLOW-003", "GAP-FLOW-004"},
		Engineer: state.RolePhase{Gaps: []gap.ID{"GAP-FLOW-001", "GAP-FLOW-002"}, Budget: 3, Attempts: []state.AttemptRec{{N: 1}, {N: 2}}},
		Reviewer: state.RolePhase{Gaps: []gap.ID{"GAP-FLOW-003", "GAP-FLOW-004"}, Budget: 3, Attempts: []state.AttemptRec{{N: 1}}},
	}}
}

// assignableOf lists the OPEN and NEEDS_REVISION gaps, as Session.assignable does.
func assignableOf(st *state.State) []gap.Gap {
	var out []gap.Gap
	for _, g := range st.Ledger.Gaps {
		if g.State == gap.Open || g.State == gap.NeedsRevision {
			out = append(out, g)
		}
	}
	return out
}

func TestDecideEscalation(t *testing.T) {
	cfg := &Params{Settings: Settings{GapsPerRound: 1, MaxRetries: 2, Weights: gap.DefaultWeights()}}
	tests := []struct {
		name string
		role llm.RoleName
		a    EscalationAnswer
		want EscalationPlan
	}{
		{"skip engineer", llm.Engineer, EscalationAnswer{Key: retry.OptionSkip, Label: "Skip", FailureType: "THIN_CONTENT"},
			EscalationPlan{Decision: "Skip", SkipNote: "skipped by user after THIN_CONTENT",
				Release: []gap.ID{"GAP-FLOW-001", "GAP-FLOW-002"}, ReleaseWhy: "Engineer skipped this round"}},
		{"skip reviewer", llm.Reviewer, EscalationAnswer{Key: retry.OptionSkip, Label: "Skip", FailureType: "MISSING_VERDICT"},
			EscalationPlan{Decision: "Skip", SkipNote: "skipped by user after MISSING_VERDICT"}},
		{"reassign engineer to named gap", llm.Engineer, EscalationAnswer{Key: retry.OptionReassign, Label: "Reassign", Text: "take GAP-FLOW-006 and GAP-FLOW-002"},
			EscalationPlan{Decision: "Reassign: GAP-FLOW-002, GAP-FLOW-006", // named gaps in ID order
				Release: []gap.ID{"GAP-FLOW-001"}, ReleaseWhy: "reassigned away by the user", Take: []gap.ID{"GAP-FLOW-006"},
				SetGaps: true, Gaps: []gap.ID{"GAP-FLOW-002", "GAP-FLOW-006"}, SetAssigned: true, Assigned: []gap.ID{"GAP-FLOW-002", "GAP-FLOW-006"},
				SetBudget: true, Budget: 5}},
		{"reassign engineer in assignment order", llm.Engineer, EscalationAnswer{Key: retry.OptionReassign, Label: "Reassign", Text: "anything else"},
			EscalationPlan{Decision: "Reassign: GAP-FLOW-006",
				Release: []gap.ID{"GAP-FLOW-001", "GAP-FLOW-002"}, ReleaseWhy: "reassigned away by the user", Take: []gap.ID{"GAP-FLOW-006"},
				SetGaps: true, Gaps: []gap.ID{"GAP-FLOW-006"}, SetAssigned: true, Assigned: []gap.ID{"GAP-FLOW-006"},
				SetBudget: true, Budget: 5}},
		{"reassign reviewer", llm.Reviewer, EscalationAnswer{Key: retry.OptionReassign, Label: "Reassign", Text: "GAP-FLOW-004 and GAP-FLOW-006"},
			EscalationPlan{Decision: "Reassign: GAP-FLOW-004", SetGaps: true, Gaps: []gap.ID{"GAP-FLOW-004"}, SetBudget: true, Budget: 4}},
		{"context", llm.Engineer, EscalationAnswer{Key: retry.OptionContext, Label: "Context", Text: "  Use JSON. "},
			EscalationPlan{Decision: "Context", Context: "Use JSON.", SetBudget: true, Budget: 4}},
		{"context without text", llm.Reviewer, EscalationAnswer{Key: retry.OptionContext, Label: "Context"},
			EscalationPlan{Decision: "Context", Context: "(the user chose to provide context but gave no text)", SetBudget: true, Budget: 4}},
		{"narrow engineer to the simplest gap", llm.Engineer, EscalationAnswer{Key: retry.OptionNarrow, Label: "Narrow"},
			EscalationPlan{Decision: "Narrow: GAP-FLOW-002", Release: []gap.ID{"GAP-FLOW-001"}, ReleaseWhy: "scope narrowed to GAP-FLOW-002",
				SetGaps: true, Gaps: []gap.ID{"GAP-FLOW-002"}, SetAssigned: true, Assigned: []gap.ID{"GAP-FLOW-002"}, SetBudget: true, Budget: 4}},
		{"narrow reviewer", llm.Reviewer, EscalationAnswer{Key: retry.OptionNarrow, Label: "Narrow"},
			EscalationPlan{Decision: "Narrow: GAP-FLOW-004", SetGaps: true, Gaps: []gap.ID{"GAP-FLOW-004"}, SetBudget: true, Budget: 4}},
		{"unknown option changes nothing", llm.Engineer, EscalationAnswer{Key: "?", Label: "?"}, EscalationPlan{Decision: "?"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := escalationState(t)
			if diff := cmp.Diff(tt.want, DecideEscalation(st, tt.role, tt.a, assignableOf(st), cfg)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecideEscalationReassignWithNothingLeft(t *testing.T) {
	st := escalationState(t)
	for _, id := range []gap.ID{"GAP-FLOW-005", "GAP-FLOW-006"} {
		if err := st.Ledger.Transition(id, gap.Deferred, 4, ticks()(), "test"); err != nil {
			t.Fatal(err)
		}
	}
	got := DecideEscalation(st, llm.Engineer, EscalationAnswer{Key: retry.OptionReassign, Label: "Reassign"}, assignableOf(st), &Params{Settings: Settings{GapsPerRound: 2}})
	want := EscalationPlan{Decision: "Reassign (no other gap available: skipped)", SkipNote: "no other gap to reassign to",
		Release: []gap.ID{"GAP-FLOW-001", "GAP-FLOW-002"}, ReleaseWhy: "Engineer skipped this round"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestApplyEscalationReassigns(t *testing.T) {
	st := escalationState(t)
	p := EscalationPlan{Release: []gap.ID{"GAP-FLOW-001"}, ReleaseWhy: "reassigned away by the user", Take: []gap.ID{"GAP-FLOW-006"},
		SetGaps: true, Gaps: []gap.ID{"GAP-FLOW-006", "GAP-FLOW-002"}, SetAssigned: true, Assigned: []gap.ID{"GAP-FLOW-006", "GAP-FLOW-002"},
		SetBudget: true, Budget: 5}
	if err := ApplyEscalation(st, llm.Engineer, p, ticks()); err != nil {
		t.Fatal(err)
	}
	states := map[gap.ID]gap.State{}
	for _, g := range st.Ledger.Gaps {
		states[g.ID] = g.State
	}
	if states["GAP-FLOW-001"] != gap.Open || states["GAP-FLOW-006"] != gap.InProgress || states["GAP-FLOW-002"] != gap.InProgress {
		t.Errorf("states = %v: want 001 OPEN, 006 and 002 IN_PROGRESS", states)
	}
	e := st.Current.Engineer
	if !cmp.Equal(e.Gaps, p.Gaps) || !cmp.Equal(st.Current.Assigned, p.Assigned) || e.Budget != 5 || e.Status != state.RoleRunning {
		t.Errorf("engineer gaps %v assigned %v budget %d status %q", e.Gaps, st.Current.Assigned, e.Budget, e.Status)
	}
	// Taking a gap that cannot start fails.
	if err := ApplyEscalation(st, llm.Engineer, EscalationPlan{Take: []gap.ID{"GAP-FLOW-003"}}, ticks()); err == nil {
		t.Error("taking a PROPOSED gap: no error")
	}
}

func TestSimplestGap(t *testing.T) {
	st := escalationState(t)
	w := gap.DefaultWeights()
	if got := SimplestGap(&st.Ledger, &state.RolePhase{Gaps: []gap.ID{"GAP-FLOW-001", "GAP-FLOW-002"}}, w); got != "GAP-FLOW-002" {
		t.Errorf("lowest severity: got %s, want GAP-FLOW-002", got)
	}
	// Same severity: fewer failed attempts first.
	rp := &state.RolePhase{Gaps: []gap.ID{"GAP-FLOW-002", "GAP-FLOW-005"}, Parts: []*state.PartState{
		{Gap: "GAP-FLOW-002", Attempts: []state.AttemptRec{{Success: false}}},
		{Gap: "GAP-FLOW-005", Attempts: []state.AttemptRec{{Success: true}}},
	}}
	if got := SimplestGap(&st.Ledger, rp, w); got != "GAP-FLOW-005" {
		t.Errorf("fewest failures: got %s, want GAP-FLOW-005", got)
	}
	if got := SimplestGap(&st.Ledger, &state.RolePhase{Gaps: []gap.ID{"GAP-FLOW-404"}}, w); got != "GAP-FLOW-404" {
		t.Errorf("unknown gaps: got %s, want the first", got)
	}
}
