package core

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/conflict"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/core/state"
)

// decideLedger is a ledger of the given gaps (ID and state; HIGH severity).
func decideLedger(t *testing.T, gaps map[gap.ID]gap.State) gap.Ledger {
	t.Helper()
	var l gap.Ledger
	for id, s := range gaps {
		if err := l.Add(gap.Gap{ID: id, Title: string(id), Severity: gap.High, State: s}); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

// ticks is a clock reading function that advances a second per reading,
// like refinetest.Clock, so a test sees which readings stamp what.
func ticks() func() time.Time {
	at := time.Date(2026, 1, 12, 14, 30, 0, 0, time.UTC)
	return func() time.Time {
		t := at
		at = at.Add(time.Second)
		return t
	}
}

func TestRedoPath(t *testing.T) {
	tests := []struct {
		from gap.State
		want []gap.State
	}{
		{gap.Proposed, []gap.State{gap.NeedsRevision, gap.InProgress}},
		{gap.NeedsRevision, []gap.State{gap.InProgress}},
		{gap.Blocked, []gap.State{gap.InProgress}}, // BLOCKED cannot go to NEEDS_REVISION
		{gap.Open, []gap.State{gap.InProgress}},
		{gap.InProgress, nil},
		{gap.Accepted, nil}, // not the round's proposal any more
		{gap.Deferred, nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, redoPath(tt.from)); diff != "" {
			t.Errorf("redoPath(%s) (-want +got):\n%s", tt.from, diff)
		}
	}
}

func TestRedoEngineer(t *testing.T) {
	st := &state.State{Ledger: decideLedger(t, map[gap.ID]gap.State{
		"GAP-FLOW-001": gap.Proposed, "GAP-FLOW-002": gap.Open, "GAP-FLOW-003": gap.Accepted,
	})}
	st.Current = &state.RoundState{N: 4, Engineer: state.RolePhase{
		Status: state.RoleAccepted, Gaps: []gap.ID{"GAP-FLOW-001", "GAP-FLOW-002", "GAP-FLOW-003", "GAP-FLOW-999"},
		Attempts: []state.AttemptRec{{N: 1}, {N: 2}}, Context: []string{"earlier"},
	}, Disagree: state.DisagreeState{Detected: true, NextAlert: 1}}
	st.Conflicts = []conflict.Conflict{
		{IssueID: "ISSUE-R3-001", Round: 4, Status: conflict.StatusUnresolved},
		{IssueID: "ISSUE-R3-002", Round: 4, Status: conflict.StatusResolved},
		{IssueID: "ISSUE-R2-001", Round: 3, Status: conflict.StatusUnresolved},
	}
	if err := RedoEngineer(st, "Reduce the disagreements.", 2, ticks()); err != nil {
		t.Fatal(err)
	}
	states := map[gap.ID]gap.State{}
	for _, g := range st.Ledger.Gaps {
		states[g.ID] = g.State
	}
	if diff := cmp.Diff(map[gap.ID]gap.State{"GAP-FLOW-001": gap.InProgress, "GAP-FLOW-002": gap.InProgress, "GAP-FLOW-003": gap.Accepted}, states); diff != "" {
		t.Errorf("gap states (-want +got):\n%s", diff)
	}
	var kept []string
	for _, c := range st.Conflicts {
		kept = append(kept, c.IssueID)
	}
	if diff := cmp.Diff([]string{"ISSUE-R3-002", "ISSUE-R2-001"}, kept); diff != "" {
		t.Errorf("conflicts kept (-want +got):\n%s", diff)
	}
	e := st.Current.Engineer
	if e.Status != state.RoleRunning || e.Budget != 5 || !e.ParallelDone || !cmp.Equal(e.Context, []string{"earlier", "Reduce the disagreements."}) {
		t.Errorf("engineer = status %q budget %d parallelDone %v context %q; want running, 2 attempts + 1 + 2 retries, true, the instruction appended",
			e.Status, e.Budget, e.ParallelDone, e.Context)
	}
	if !cmp.Equal(st.Current.Disagree, state.DisagreeState{}) {
		t.Errorf("disagree state = %+v, want reset so the round is detected again", st.Current.Disagree)
	}
}

func TestDecisionMove(t *testing.T) {
	const id gap.ID = "GAP-FLOW-001"
	high := func(next gap.State) conflict.Ruling {
		return conflict.Ruling{ID: "DECISION-R3-001", IssueID: "ISSUE-R2-001", Gap: id, Severity: gap.High, ChosenOption: "A", NextState: next}
	}
	tests := []struct {
		name    string
		state   gap.State
		d       conflict.Ruling
		holding bool // another open HIGH conflict holds the gap
		want    gap.State
		ok      bool
	}{
		{"blocked to open", gap.Blocked, high(gap.Open), false, gap.Open, true},
		{"proposal must be revised", gap.Proposed, high(gap.Open), false, gap.NeedsRevision, true},
		{"blocked to accepted", gap.Blocked, high(gap.Accepted), false, gap.Accepted, true},
		{"already there", gap.Open, high(gap.Open), false, "", false},
		{"no next state", gap.Blocked, high(""), false, "", false},
		{"held by another conflict", gap.Blocked, high(gap.Open), true, "", false},
		{"medium keeps the proposal in review", gap.Blocked, conflict.Ruling{Gap: id, Severity: gap.Medium, NextState: gap.Accepted}, false, "", false},
		{"no such transition", gap.Deferred, high(gap.Accepted), false, "", false},
		{"unknown gap", gap.Blocked, conflict.Ruling{Gap: "GAP-FLOW-404", Severity: gap.High, NextState: gap.Open}, false, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &state.State{Ledger: decideLedger(t, map[gap.ID]gap.State{id: tt.state})}
			if tt.holding {
				st.Conflicts = []conflict.Conflict{{IssueID: "ISSUE-R2-009", Issue: conflict.Issue{Severity: gap.High, Gap: id}, Status: conflict.StatusUnresolved}}
			}
			to, why, ok := DecisionMove(st, tt.d)
			if to != tt.want || ok != tt.ok {
				t.Fatalf("decisionMove = %s, %v; want %s, %v", to, ok, tt.want, tt.ok)
			}
			if ok && why != "DECISION-R3-001: option A chosen for ISSUE-R2-001" {
				t.Errorf("why = %q", why)
			}
		})
	}
}

func TestSeverityOverrides(t *testing.T) {
	tests := []struct {
		text string
		want []IssueSeverity
	}{
		{"ISSUE-R7-001: LOW", []IssueSeverity{{"ISSUE-R7-001", gap.Low}}},
		{"ISSUE-R7-001 and ISSUE-R7-002 to low", []IssueSeverity{{"ISSUE-R7-001", gap.Low}, {"ISSUE-R7-002", gap.Low}}},
		{"ISSUE-R7-001 is MEDIUM, ISSUE-R7-002 is HIGH", []IssueSeverity{{"ISSUE-R7-001", gap.Medium}, {"ISSUE-R7-002", gap.High}}},
		{"ISSUE-R7-001 looks fine", nil},
		{"downgrade everything to LOW", nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, SeverityOverrides(tt.text)); diff != "" {
			t.Errorf("severityOverrides(%q) (-want +got):\n%s", tt.text, diff)
		}
	}
}

func TestApplyOverridesDowngradesOpenConflicts(t *testing.T) {
	st := &state.State{Conflicts: []conflict.Conflict{
		{IssueID: "ISSUE-R7-001", Issue: conflict.Issue{ID: "ISSUE-R7-001", Severity: gap.High}, Status: conflict.StatusUnresolved},
		{IssueID: "ISSUE-R7-002", Issue: conflict.Issue{ID: "ISSUE-R7-002", Severity: gap.High}, Status: conflict.StatusResolved},
	}}
	if err := ApplyOverrides(st, 8, "ISSUE-R7-001 and ISSUE-R7-002 to MEDIUM"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(conflict.Overrides{"ISSUE-R7-001": gap.Medium, "ISSUE-R7-002": gap.Medium}, st.Overrides); diff != "" {
		t.Errorf("overrides (-want +got):\n%s", diff)
	}
	if got := st.Conflicts[0].Issue.Severity; got != gap.Medium {
		t.Errorf("open conflict severity = %s, want MEDIUM", got)
	}
	if got := st.Conflicts[1].Issue.Severity; got != gap.High {
		t.Errorf("resolved conflict severity = %s, want HIGH (left as decided)", got)
	}
}

func TestDecideAlert(t *testing.T) {
	alert := conflict.RateAlert{Kind: conflict.RateBlock, Round: 3}
	tests := []struct {
		effect, text string
		want         AlertAnswer
	}{
		{conflict.EffectRequestRevision, "ignored", AlertAnswer{Redo: conflict.BlockInstruction(alert)}},
		{conflict.EffectAdjustEngineer, "  Keep it short. ", AlertAnswer{Adjustment: "Keep it short."}},
		{conflict.EffectMediateScope, "Scope is the API only.", AlertAnswer{Adjustment: "Scope is the API only."}},
		{conflict.EffectAdjustEngineer, "   ", AlertAnswer{}},
		{conflict.EffectReviewReviewer, "ISSUE-R2-001: LOW", AlertAnswer{Overrides: "ISSUE-R2-001: LOW"}},
		{conflict.EffectAdjustReviewer, " Be concrete. ", AlertAnswer{ReviewerAdjustment: "Be concrete."}},
		{conflict.EffectContinue, "anything", AlertAnswer{}},
		{conflict.EffectAcceptWithJustification, "because", AlertAnswer{}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, DecideAlert(alert, tt.effect, tt.text)); diff != "" {
			t.Errorf("decideAlert(%s, %q) (-want +got):\n%s", tt.effect, tt.text, diff)
		}
	}
}

func TestDetectDisagreement(t *testing.T) {
	block := func(id, position string) string {
		return "## DISAGREE: " + id + "\n\n**Reviewer Concern:**\n> concern\n\n**Engineer Position:**\n" + position + "\n\n**Rationale:**\nBecause.\n\n"
	}
	issue := conflict.Issue{ID: "ISSUE-R2-001", Round: 2, Severity: gap.High, Gap: "GAP-FLOW-001",
		Summary: "Use schema-based validation", Suggestion: "Use schema-based validation"}
	tests := []struct {
		name      string
		out       string
		conflicts []string
		logged    []state.LoggedKind
		submitted int
	}{
		{"explicit block", block("ISSUE-R2-001", "Keep the 100 character threshold; it adds no complexity."),
			[]string{"ISSUE-R2-001"}, nil, 1},
		{"informal disagreement naming no issue", "## Disagree: the whole approach\n\n**Engineer Position:**\nDISAGREE\n\nIt is fine.\n",
			nil, []state.LoggedKind{state.LoggedUnmatchedDisagree}, 1},
		{"no disagreement", "## GAP-FLOW-001: Validation\n\nUse schemas.\n", nil, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &state.State{Round: 2, Issues: []conflict.Issue{issue}}
			cur := &state.RoundState{N: 3, Assigned: []gap.ID{"GAP-FLOW-001"}}
			d := DetectDisagreement(st, cur, 2, tt.out, "", ticks())
			var conflicts []string
			for _, c := range d.Conflicts {
				conflicts = append(conflicts, c.IssueID)
			}
			var logged []state.LoggedKind
			for _, e := range d.Logged {
				logged = append(logged, e.Kind)
				if e.Round != 3 || e.At.IsZero() {
					t.Errorf("logged %+v: want round 3 and a time", e)
				}
			}
			if diff := cmp.Diff(tt.conflicts, conflicts); diff != "" {
				t.Errorf("conflicts (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.logged, logged); diff != "" {
				t.Errorf("logged (-want +got):\n%s", diff)
			}
			if d.Submitted != tt.submitted {
				t.Errorf("submitted = %d, want %d", d.Submitted, tt.submitted)
			}
			if len(st.Conflicts) != 0 || len(st.Logged) != 0 || cur.Disagree.Detected {
				t.Errorf("detectDisagreement changed the state: %d conflicts, %d logged, detected %v", len(st.Conflicts), len(st.Logged), cur.Disagree.Detected)
			}
			ApplyDetection(st, cur, d)
			if !cur.Disagree.Detected || len(st.Conflicts) != len(tt.conflicts) || len(st.Logged) != len(tt.logged) || cur.Disagree.Submitted != tt.submitted {
				t.Errorf("applyDetection: detected %v, %d conflicts, %d logged, submitted %d", cur.Disagree.Detected, len(st.Conflicts), len(st.Logged), cur.Disagree.Submitted)
			}
		})
	}
}

func TestNextDecisionIDCountsEveryKind(t *testing.T) {
	st := &state.State{
		Decisions:         []state.DecisionRecord{{ID: "DECISION-R3-001"}, {ID: "DECISION-R2-004"}},
		ConflictDecisions: []conflict.Ruling{{ID: "DECISION-R3-002"}},
	}
	if got := NextDecisionID(st, 3); got != "DECISION-R3-003" {
		t.Errorf("nextDecisionID(3) = %s, want DECISION-R3-003", got)
	}
	if got := NextDecisionID(st, 4); got != "DECISION-R4-001" {
		t.Errorf("nextDecisionID(4) = %s, want DECISION-R4-001", got)
	}
}

// FuzzSeverityOverrides: the user's re-grading text never panics the
// reader, and every override names an issue the text names, with a valid
// severity named after it.
func FuzzSeverityOverrides(f *testing.F) {
	for _, s := range []string{"ISSUE-R7-001: LOW", "ISSUE-R7-001 and ISSUE-R7-002 to low", "issue-r1-001 high", "ISSUE-R1-001", "ISSUE-R1-001 ÿ CRITICAL"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, o := range SeverityOverrides(text) {
			if !o.Severity.Valid() {
				t.Fatalf("%q: override %s has invalid severity %v", text, o.ID, o.Severity)
			}
			if !strings.Contains(strings.ToUpper(text), strings.ToUpper(o.ID)) {
				t.Fatalf("%q: override names %s, which the text does not", text, o.ID)
			}
		}
	})
}
