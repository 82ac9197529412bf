package core

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/internal/rollbacktext"
	"github.com/refine-spec/refine/question"
	"github.com/refine-spec/refine/rollback"
)

// fakeRollbackView is a rollbackView of fixed values: the dialogs'
// transition is tested without a Session or a Store.
type fakeRollbackView struct {
	targets []rollbacktext.Target
	rca     rollbacktext.RCAInput
}

func (v *fakeRollbackView) RCA(*state.RollbackFlow, int) (rollbacktext.RCAInput, error) {
	return v.rca, nil
}
func (v *fakeRollbackView) Targets(int) ([]rollbacktext.Target, error) { return v.targets, nil }
func (v *fakeRollbackView) TargetCount(int) int                        { return len(v.targets) }
func (v *fakeRollbackView) Simplest(ids []gap.ID) gap.ID               { return ids[len(ids)-1] }

// history is a rollback history of one record per round in rounds.
func history(rounds ...int) rollback.History {
	var h rollback.History
	for _, r := range rounds {
		h.Records = append(h.Records, rollback.Record{Round: r, Attempt: h.Attempts(r) + 1})
	}
	return h
}

// staged says whether m only moved the flow to another stage.
func staged(m FlowMove) bool {
	return m.Ask == nil && m.Exec == nil && !m.Pause && !m.Cancel && !m.AtLimit
}

func TestRollbackDialogsDecide(t *testing.T) {
	interactive := RollbackPolicy{Limit: 7, Mode: rollback.ModeInteractive, Threshold: 2}
	auto := RollbackPolicy{Limit: 7, Mode: rollback.ModeAutoRetry, Threshold: 2}
	tests := []struct {
		name      string
		policy    RollbackPolicy
		history   rollback.History
		flow      state.RollbackFlow
		wantStage state.FlowStage
		wantExec  *RollbackExec
	}{
		{name: "first rollback asks the options", policy: interactive, flow: state.RollbackFlow{Current: 3, To: 2}, wantStage: state.StageOptions},
		{name: "adjustments given run at once", policy: interactive, flow: state.RollbackFlow{Current: 3, To: 2, Adjustments: []string{"x"}}, wantExec: &RollbackExec{}},
		{name: "second rollback of a round asks the analysis", policy: interactive, history: history(3), flow: state.RollbackFlow{Current: 3, To: 2}, wantStage: state.StageAnalysis},
		{name: "another round's rollback does not count", policy: interactive, history: history(2), flow: state.RollbackFlow{Current: 3, To: 2}, wantStage: state.StageOptions},
		{name: "STRICT analyses the first rollback", policy: RollbackPolicy{Limit: 7, Mode: rollback.ModeStrict, Threshold: 1}, flow: state.RollbackFlow{Current: 3, To: 2}, wantStage: state.StageAnalysis},
		{name: "AUTO_RETRY retries the first rollback", policy: auto, flow: state.RollbackFlow{Current: 3, To: 2}, wantExec: &RollbackExec{Auto: true}},
		{name: "AUTO_RETRY asks for several rounds", policy: auto, flow: state.RollbackFlow{Current: 3, To: 1}, wantStage: state.StageOptions},
		{name: "the limit comes first", policy: RollbackPolicy{Limit: 2, Mode: rollback.ModeAutoRetry, Threshold: 2}, history: history(1, 2), flow: state.RollbackFlow{Current: 3, To: 2}, wantStage: state.StageLimit},
		{name: "several rounds past the limit", policy: RollbackPolicy{Limit: 3, Mode: rollback.ModeInteractive, Threshold: 2}, history: history(1), flow: state.RollbackFlow{Current: 4, To: 1}, wantStage: state.StageLimit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := RollbackDialogs{St: &state.State{Rollbacks: tt.history}, Policy: tt.policy, View: &fakeRollbackView{}}
			f := tt.flow
			m, err := d.Step(&f)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantExec, m.Exec); diff != "" {
				t.Errorf("exec (-want +got):\n%s", diff)
			}
			if f.Stage != tt.wantStage {
				t.Errorf("stage = %q, want %q", f.Stage, tt.wantStage)
			}
			if m.Ask != nil || m.Cancel || m.Pause {
				t.Errorf("deciding asked or ended: %+v", m)
			}
		})
	}
}

// TestRollbackDialogsMultiRound walks the options → targets → confirm
// dialogs through the transition alone: each answer moves the flow, a
// target gone from the table is asked for again, and the confirmation
// carries out the rollback to the chosen round.
func TestRollbackDialogsMultiRound(t *testing.T) {
	view := &fakeRollbackView{targets: []rollbacktext.Target{{Round: 3}, {Round: 2}, {Round: 1}}}
	d := RollbackDialogs{St: &state.State{}, Policy: RollbackPolicy{Limit: 7, Mode: rollback.ModeInteractive, Threshold: 2}, View: view}
	f := &state.RollbackFlow{Current: 4, To: 3, Stage: state.StageOptions, Reason: "drift"}

	answer := func(key string) FlowMove {
		t.Helper()
		m, err := d.Step(f)
		if err != nil {
			t.Fatal(err)
		}
		if m.Ask == nil {
			t.Fatalf("stage %q asked nothing", f.Stage)
		}
		return d.Answer(f, m.Ask, question.Answer{Key: key})
	}
	if m := answer("4"); !staged(m) || f.Stage != state.StageTargets {
		t.Fatalf("multiple rounds: move %+v, stage %q; want the targets stage", m, f.Stage)
	}
	if m := answer("2"); !staged(m) || f.Stage != state.StageConfirm || f.To != 2 {
		t.Fatalf("target 2: move %+v, stage %q, to %d; want the confirmation of round 2", m, f.Stage, f.To)
	}
	if m := answer("2"); !staged(m) || f.Stage != state.StageTargets || f.Seq != 1 {
		t.Fatalf("choose different target: move %+v, stage %q, seq %d", m, f.Stage, f.Seq)
	}
	if m := answer("1"); f.Stage != state.StageConfirm || f.To != 1 || !staged(m) {
		t.Fatalf("target 1: move %+v, stage %q, to %d", m, f.Stage, f.To)
	}
	// The backups of round 1 were rotated out meanwhile: asked again.
	view.targets = view.targets[:2]
	if m, err := d.Step(f); err != nil || !staged(m) || f.Stage != state.StageTargets || f.Seq != 2 {
		t.Fatalf("missing target: move %+v, err %v, stage %q, seq %d; want the targets asked again", m, err, f.Stage, f.Seq)
	}
	answer("2")
	m := answer("1")
	if m.Exec == nil || m.Exec.Decision != "Rollback to Round 2 (2 rounds back)" || f.To != 2 {
		t.Fatalf("confirmed: move %+v, to %d; want the rollback to round 2", m, f.To)
	}
	if got, want := len(f.Decisions), 6; got != want {
		t.Errorf("noted %d answers, want %d", got, want)
	}
	x := flowExecution(f, *m.Exec)
	if x.To != 2 || x.Reason != "drift" || x.FileIn != 4 || len(x.File) != 6 {
		t.Errorf("execution: to %d, reason %q, filed under %d: %d answers; want 2, drift, 4: 6", x.To, x.Reason, x.FileIn, len(x.File))
	}
}

func TestRollbackDialogsOptionsAnswers(t *testing.T) {
	st := &state.State{Current: &state.RoundState{N: 3, Assigned: []gap.ID{"GAP-AUTH-001", "GAP-PAGE-002"}}}
	for _, g := range []gap.Gap{{ID: "GAP-AUTH-001", Title: "auth", Severity: gap.High}, {ID: "GAP-PAGE-002", Title: "paging", Severity: gap.Low}} {
		if err := st.Ledger.Add(g); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		flow state.RollbackFlow
		ans  question.Answer
		want FlowMove
	}{
		{name: "same prompt with text", ans: question.Answer{Key: "1", Text: " be brief "},
			want: FlowMove{Exec: &RollbackExec{Adjustments: []string{"be brief"}, Decision: "Retry with same prompt"}}},
		{name: "narrowed scope keeps the least severe gap", ans: question.Answer{Key: "2"},
			want: FlowMove{Exec: &RollbackExec{Next: &state.NextRoundPlan{Only: []gap.ID{"GAP-PAGE-002"}}, Decision: "Retry with narrowed scope: GAP-PAGE-002"}}},
		{name: "context without text uses the user's words", flow: state.RollbackFlow{Text: "the reason"}, ans: question.Answer{Key: "3"},
			want: FlowMove{Exec: &RollbackExec{Adjustments: []string{"the reason"}, Decision: "Retry with user-provided context"}}},
		{name: "skip keeps the round", ans: question.Answer{Key: "5"},
			want: FlowMove{Cancel: true, Skip: true, Label: "Skip to next round", Report: RollbackReport{Decision: "Skip to next round"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := RollbackDialogs{St: st, Policy: RollbackPolicy{Limit: 7, Threshold: 2, Weights: gap.DefaultWeights()}, View: &fakeRollbackView{}}
			f := tt.flow
			f.Current, f.To, f.Stage = 3, 2, state.StageOptions
			m, err := d.Step(&f)
			if err != nil || m.Ask == nil {
				t.Fatalf("step: %+v, %v; want the options question", m, err)
			}
			got := d.Answer(&f, m.Ask, tt.ans)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(FlowAsk{})); diff != "" {
				t.Errorf("move (-want +got):\n%s", diff)
			}
			if len(f.Decisions) != 1 {
				t.Errorf("noted %d answers, want 1", len(f.Decisions))
			}
		})
	}
}

// TestRollbackDialogsLimitDeferred: a deferred limit question reports
// the questions pending and ErrRollbackLimit, nothing rolled back.
func TestRollbackDialogsLimitDeferred(t *testing.T) {
	st := &state.State{Rollbacks: history(1, 2)}
	d := RollbackDialogs{St: st, Policy: RollbackPolicy{Limit: 2, Threshold: 2}, View: &fakeRollbackView{}}
	f := &state.RollbackFlow{Current: 3, To: 2, Stage: state.StageLimit}
	m, err := d.Step(f)
	if err != nil || m.Ask == nil || !m.Ask.AtLimit {
		t.Fatalf("step: %+v, %v; want the limit question", m, err)
	}
	if m.Ask.Q.ID != "r3-rollback-limit-2" {
		t.Errorf("question ID %q", m.Ask.Q.ID)
	}
	st.Pending = []question.Question{m.Ask.Q}
	rep, err := FlowPaused(st, 2, m.Ask)
	if !errors.Is(err, ErrRollbackLimit) {
		t.Fatalf("err = %v, want ErrRollbackLimit", err)
	}
	if len(rep.Pending) != 1 || len(rep.Undone) != 0 || rep.Decision != "the limit question waits for an answer" {
		t.Errorf("report %+v", rep)
	}
}
