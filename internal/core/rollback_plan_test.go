package core

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/rollback"
	"github.com/refine-spec/refine/store"
)

// TestPlanRollbackFromValues plans a rollback of round 2 to round 1 from
// values alone (no Session, no Store): the restored state keeps what
// outlives the rounds, drops what round 2 logged, reopens the session and
// offers round 2's decisions for recovery; the ops archive round 2 and
// leave the live files to the commit; the old state is left as it was.
func TestPlanRollbackFromValues(t *testing.T) {
	target, err := json.Marshal(&state.State{Schema: state.SchemaVersion, SessionID: "from-backup", Round: 1})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	old := &state.State{
		Schema: state.SchemaVersion, SessionID: "s1", CreatedAt: at.Add(-time.Hour), Round: 2, Outcome: StatusUserApproved,
		Rollbacks:  rollback.History{Records: []rollback.Record{{Round: 2, Attempt: 1, Target: 1, Outcome: "Retry succeeded", Succeeded: true}}},
		AttemptLog: []state.AttemptFact{{Round: 1, Role: llm.Engineer}, {Round: 2, Role: llm.Engineer}},
		Decisions:  []state.DecisionRecord{{ID: "D-2.1", Round: 2, Decision: "keep"}, {ID: "D-2.2", Round: 2, Decision: "roll back", Procedural: true}},
	}
	keys := append([]string{state.BackupKeyStatus(1), state.BackupKeyDecisions(1), state.BackupKeyState(1)}, state.OutputKey(2, llm.Engineer), state.OutputKey(2, llm.Reviewer))
	plan, err := rollback.PlanRollback(rollback.Request{Current: 2, To: 1, Keys: keys, History: old.Rollbacks, Limit: 7})
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		state.BackupKeyStatus(1): []byte("# status\n"), state.BackupKeyDecisions(1): []byte("# decisions\n"),
		rollback.StateBackupKey(1): target, state.OutputKey(2, llm.Engineer): []byte("engineer"), state.OutputKey(2, llm.Reviewer): []byte("reviewer"),
	}
	before, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	x := RollbackExec{To: 1, Reason: "drift", Trigger: rollback.TriggerUser, Decision: "Retry with same prompt", Adjustments: []string{"be brief"}}
	c, err := PlanRollback(old, x, RollbackInputs{Plan: plan, Files: files, Current: 2, Now: at, Mode: rollback.ModeInteractive, Threshold: 2})
	if err != nil {
		t.Fatal(err)
	}
	if after, _ := json.Marshal(old); string(after) != string(before) {
		t.Errorf("planRollback changed the old state:\n%s\nwant\n%s", after, before)
	}
	st := c.State
	if st.SessionID != "s1" || st.Round != 1 || st.Outcome != "" {
		t.Errorf("restored: session %q round %d outcome %q; want s1, 1, reopened", st.SessionID, st.Round, st.Outcome)
	}
	recs := st.Rollbacks.Records
	if len(recs) != 2 || recs[0].Outcome != "Retry failed (rolled back again)" || recs[1].Attempt != 2 || recs[1].UserDecision != x.Decision {
		t.Errorf("records %+v; want the earlier retry failed and this rollback as attempt 2", recs)
	}
	if diff := cmp.Diff([]state.AttemptFact{{Round: 1, Role: llm.Engineer}}, st.AttemptLog); diff != "" {
		t.Errorf("attempt log (-want +got):\n%s", diff)
	}
	if len(st.Recover) != 1 || st.Recover[0].ID != "D-2.1" {
		t.Errorf("recover %+v; want round 2's own decision D-2.1", st.Recover)
	}
	if diff := cmp.Diff([]string{"be brief"}, st.Adjustments); diff != "" {
		t.Errorf("adjustments (-want +got):\n%s", diff)
	}
	var puts, deletes []string
	for _, op := range c.Ops {
		if op.Kind == store.OpDelete {
			deletes = append(deletes, op.Key)
		} else {
			puts = append(puts, op.Key)
		}
	}
	if diff := cmp.Diff([]string{rollback.ArchiveName(2, 2)}, puts); diff != "" {
		t.Errorf("puts (-want +got):\n%s", diff)
	}
	if !slices.Contains(deletes, state.OutputKey(2, llm.Engineer)) {
		t.Errorf("deletes %v; want round 2's folder removed", deletes)
	}
	if c.Report.Round != 1 || !slices.Equal(c.Report.Undone, []int{2}) || c.Report.Analysis == "" || c.AutoLog != "" {
		t.Errorf("report %+v, auto log %q", c.Report, c.AutoLog)
	}
}
