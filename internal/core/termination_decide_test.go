package core

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/conflict"
	"github.com/refine-spec/refine/convergence"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/internal/rollbacktext"
	"github.com/refine-spec/refine/question"
	"github.com/refine-spec/refine/rollback"
	"github.com/refine-spec/refine/validate"
)

func TestDecideEarlyTermination(t *testing.T) {
	tests := []struct {
		key  string
		auto bool
		want EarlyTerminationAnswer
	}{
		{convergence.KeyContinue, false, EarlyTerminationAnswer{}},
		{convergence.KeyContinue, true, EarlyTerminationAnswer{}},
		{convergence.KeyPause, false, EarlyTerminationAnswer{Record: true, Pause: true}},
		// A person's acceptance is USER_APPROVED, the policy's GOOD_ENOUGH.
		{convergence.KeyAccept, false, EarlyTerminationAnswer{Record: true, SetChoice: true, Choice: string(convergence.ChoiceForceComplete)}},
		{convergence.KeyAccept, true, EarlyTerminationAnswer{Record: true, SetChoice: true, Choice: string(convergence.ChoiceAccept)}},
		{convergence.KeyStop, false, EarlyTerminationAnswer{Record: true, SetChoice: true, Choice: convergence.KeyStop}},
		{"", false, EarlyTerminationAnswer{Record: true, SetChoice: true, Choice: ""}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, DecideEarlyTermination(tt.key, tt.auto)); diff != "" {
			t.Errorf("decideEarlyTermination(%q, auto %v) (-want +got):\n%s", tt.key, tt.auto, diff)
		}
	}
}

func TestEarlyTerminationQuestionDefault(t *testing.T) {
	st := &state.State{Round: 4, Ledger: decideLedger(t, map[gap.ID]gap.State{"GAP-FLOW-001": gap.Open})}
	converging := EarlyTerminationQuestion(st, 10, true)
	if converging.ID != "r4-early-termination" || converging.Default != convergence.KeyContinue {
		t.Errorf("converging: ID %q default %q, want r4-early-termination and continue", converging.ID, converging.Default)
	}
	if stalled := EarlyTerminationQuestion(st, 10, false); stalled.Default == convergence.KeyContinue {
		t.Errorf("stalled: default %q, want the offer's own default", stalled.Default)
	}
}

func TestDecideDivergence(t *testing.T) {
	var l gap.Ledger
	for _, g := range []gap.Gap{
		{ID: "GAP-FLOW-001", Severity: gap.High, State: gap.Open},
		{ID: "GAP-FLOW-002", Severity: gap.Medium, State: gap.Open},
		{ID: "GAP-FLOW-003", Severity: gap.Low, State: gap.InProgress},
		{ID: "GAP-FLOW-004", Severity: gap.Low, State: gap.Accepted},
	} {
		if err := l.Add(g); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, key, text string
		want            DivergenceAnswer
	}{
		{"narrow to named gaps", convergence.KeyNarrowScope, "defer GAP-FLOW-001",
			DivergenceAnswer{Decision: "L: deferred GAP-FLOW-001", Defer: []gap.ID{"GAP-FLOW-001"}, Narrow: true, ResetStall: true}},
		{"narrow by default", convergence.KeyNarrowScope, "",
			DivergenceAnswer{Decision: "L: deferred GAP-FLOW-002, GAP-FLOW-003", Defer: []gap.ID{"GAP-FLOW-002", "GAP-FLOW-003"}, Narrow: true, ResetStall: true}},
		{"narrow naming a closed gap falls back", convergence.KeyNarrowScope, "GAP-FLOW-004",
			DivergenceAnswer{Decision: "L (invalid narrow-scope selection: GAP-FLOW-004 (not open); deferred the default set instead): deferred GAP-FLOW-002, GAP-FLOW-003",
				Defer: []gap.ID{"GAP-FLOW-002", "GAP-FLOW-003"}, Narrow: true, ResetStall: true}},
		{"accept complexity", convergence.KeyAcceptComplexity, "", DivergenceAnswer{Decision: "L", AcceptComplexity: true}},
		{"pause for input", convergence.KeyPauseForInput, "  Focus on the API. ", DivergenceAnswer{Decision: "L", Adjustment: "Focus on the API.", ResetStall: true}},
		{"force complete", convergence.KeyForceComplete, "", DivergenceAnswer{Decision: "L", Choice: string(convergence.ChoiceForceComplete)}},
		{"stop", convergence.KeyStop, "", DivergenceAnswer{Decision: "L", Choice: string(convergence.ChoiceStop)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, DecideDivergence(&l, tt.key, "L", tt.text)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplyDivergenceDefers(t *testing.T) {
	st := &state.State{Ledger: decideLedger(t, map[gap.ID]gap.State{"GAP-FLOW-001": gap.Open, "GAP-FLOW-002": gap.Accepted})}
	tr := Tracker(st, &Params{})
	da := DivergenceAnswer{Defer: []gap.ID{"GAP-FLOW-001"}, Narrow: true, ResetStall: true, Choice: "stop"}
	if err := ApplyDivergence(st, tr, 3, da, ticks()); err != nil {
		t.Fatal(err)
	}
	if g, _ := st.Ledger.Get("GAP-FLOW-001"); g.State != gap.Deferred {
		t.Errorf("GAP-FLOW-001 is %s, want DEFERRED", g.State)
	}
	if st.Choice != "stop" {
		t.Errorf("choice = %q, want stop", st.Choice)
	}
	// A gap that cannot be deferred fails with the round named.
	da.Defer = []gap.ID{"GAP-FLOW-002"}
	if err := ApplyDivergence(st, tr, 3, da, ticks()); err == nil {
		t.Error("deferring an ACCEPTED gap: no error")
	}
}

func TestLastReviewApproved(t *testing.T) {
	oneGap := decideLedger(t, map[gap.ID]gap.State{"GAP-FLOW-001": gap.Open})
	tests := []struct {
		name   string
		rounds []state.RoundRecord
		ledger gap.Ledger
		want   bool
	}{
		{"last verdict approve", []state.RoundRecord{{N: 1, Verdict: string(validate.Revise)}, {N: 2, Verdict: string(validate.Approve)}}, oneGap, true},
		{"last verdict revise", []state.RoundRecord{{N: 1, Verdict: string(validate.Approve)}, {N: 2, Verdict: string(validate.Revise)}}, oneGap, false},
		{"skipped review keeps the earlier verdict", []state.RoundRecord{{N: 1, Verdict: string(validate.Approve)}, {N: 2}}, oneGap, true},
		{"never reviewed, gaps", nil, oneGap, false},
		{"never reviewed, no gap", nil, gap.Ledger{}, true},
	}
	for _, tt := range tests {
		st := &state.State{Rounds: tt.rounds, Ledger: tt.ledger}
		if got := LastReviewApproved(st); got != tt.want {
			t.Errorf("%s: lastReviewApproved = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestPlanReviewGaps(t *testing.T) {
	st := &state.State{
		Ledger: decideLedger(t, map[gap.ID]gap.State{"GAP-REVIEW-002": gap.Open, "GAP-FLOW-007": gap.Open}),
		Issues: []conflict.Issue{
			{ID: "ISSUE-R3-001", Round: 3, Severity: gap.Critical, Summary: "Retries\nare unbounded"},
			{ID: "ISSUE-R3-002", Round: 3, Severity: gap.High, Gap: "GAP-FLOW-007", Summary: "names a gap"},
			{ID: "ISSUE-R3-003", Round: 3, Severity: gap.Medium, Summary: "too low"},
			{ID: "ISSUE-R2-001", Round: 2, Severity: gap.High, Summary: "another round"},
			{ID: "ISSUE-R3-004", Round: 3, Severity: gap.High},
		},
	}
	want := []ReviewGap{
		{Issue: 0, Gap: gap.Gap{ID: "GAP-REVIEW-003", Title: "Retries are unbounded (from ISSUE-R3-001)", Severity: gap.Critical, Round: 3}},
		{Issue: 4, Gap: gap.Gap{ID: "GAP-REVIEW-004", Title: "Reviewer issue ISSUE-R3-004 (from ISSUE-R3-004)", Severity: gap.High, Round: 3}},
	}
	plan := PlanReviewGaps(st, 3)
	if diff := cmp.Diff(want, plan); diff != "" {
		t.Fatalf("planReviewGaps (-want +got):\n%s", diff)
	}
	if logs := AddReviewGaps(st, plan); len(logs) != 0 {
		t.Fatalf("addReviewGaps refused %v", logs)
	}
	if st.Issues[0].Gap != "GAP-REVIEW-003" || st.Issues[4].Gap != "GAP-REVIEW-004" {
		t.Errorf("issues not linked: %s, %s", st.Issues[0].Gap, st.Issues[4].Gap)
	}
	// Planned again, nothing is left to add; added again, each is refused.
	if again := PlanReviewGaps(st, 3); len(again) != 0 {
		t.Errorf("second plan = %v, want none", again)
	}
	if logs := AddReviewGaps(st, plan); len(logs) != 2 || logs[0].Msg != "review gap not added" {
		t.Errorf("re-adding: logs %v, want two refusals", logs)
	}
}

func TestRecordRetryOutcome(t *testing.T) {
	tests := []struct {
		name      string
		status    state.RoleStatus
		split     bool
		outcome   string
		auto      string
		succeeded bool
	}{
		{"accepted", state.RoleAccepted, false, "Retry successful", "Successful on retry", true},
		{"accepted after a split", state.RoleAccepted, true, "Proceeded with split gaps", "Successful on retry", true},
		{"skipped", state.RoleSkipped, false, "Retry failed (SKIP)", "Failed on retry", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &state.State{AutoRetries: []rollbacktext.AutoRetry{{Round: 2}, {Round: 1}}}
			rec := rollback.Record{Round: 2}
			if tt.split {
				rec.Split = &rollback.SplitRecord{}
			}
			st.Rollbacks.Records = []rollback.Record{rec, {Round: 2, Outcome: "Retry failed (earlier)"}, {Round: 3}}
			RecordRetryOutcome(st, &state.RoundState{N: 2, Engineer: state.RolePhase{Status: tt.status}})
			r := st.Rollbacks.Records
			if r[0].Outcome != tt.outcome || r[0].Succeeded != tt.succeeded {
				t.Errorf("record = %q/%v, want %q/%v", r[0].Outcome, r[0].Succeeded, tt.outcome, tt.succeeded)
			}
			if r[1].Outcome != "Retry failed (earlier)" || r[2].Outcome != "" {
				t.Errorf("other records changed: %q, %q", r[1].Outcome, r[2].Outcome)
			}
			if st.AutoRetries[0].Outcome != tt.auto || st.AutoRetries[1].Outcome != "" {
				t.Errorf("auto retries = %q, %q; want %q, \"\"", st.AutoRetries[0].Outcome, st.AutoRetries[1].Outcome, tt.auto)
			}
		})
	}
}

func TestChoiceBetweenRounds(t *testing.T) {
	for _, tt := range []struct{ choice, want string }{
		{"", ""},
		{string(convergence.ChoiceContinue), string(convergence.ChoiceContinue)},
		{string(convergence.ChoiceAccept), ""},
		{string(convergence.ChoiceForceComplete), ""},
		{string(convergence.ChoiceStop), ""},
	} {
		if got := choiceBetweenRounds(tt.choice); got != tt.want {
			t.Errorf("choiceBetweenRounds(%q) = %q, want %q", tt.choice, got, tt.want)
		}
	}
}

func TestBlockedWithoutDecisions(t *testing.T) {
	st := &state.State{Round: 4}
	err := BlockedWithoutDecisions(st)
	if err == nil || err.Error() != "round 5: every open gap is BLOCKED and no conflict is pending: unblock a gap or abandon the session" {
		t.Errorf("no conflict pending: err = %v", err)
	}
	st.Conflicts = []conflict.Conflict{{IssueID: "ISSUE-R4-001", Status: conflict.StatusUnresolved}}
	if err := BlockedWithoutDecisions(st); err != nil {
		t.Errorf("a conflict pending: err = %v, want nil", err)
	}
}

func TestDropPendingAtEnd(t *testing.T) {
	cleanup := question.Question{ID: "archive-cleanup", Kind: question.KindRollback, Title: "ARCHIVE CLEANUP"}
	st := &state.State{
		Pending: []question.Question{{ID: "r3-engineer-escalation-1", Kind: question.KindEscalation}, cleanup, {ID: "r3-divergence", Kind: question.KindDivergence}},
		Answers: map[string]question.Answer{"r3-divergence": {Key: "stop"}, "archive-cleanup": {Key: "1"}, "elsewhere": {Key: "2"}},
	}
	DropPendingAtEnd(st)
	if diff := cmp.Diff([]question.Question{cleanup}, st.Pending); diff != "" {
		t.Errorf("pending (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]question.Answer{"archive-cleanup": {Key: "1"}, "elsewhere": {Key: "2"}}, st.Answers); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
}
