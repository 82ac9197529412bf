package rollbacktext

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/question"
	"github.com/refine-spec/refine/rollback"
)

func TestOptionsQuestion(t *testing.T) {
	p := OptionsQuestion(3, 1, "That round wasn't helpful", 1)
	want := `ROUND 3 ROLLBACK OPTIONS

Round 3 is being rolled back (rollback 1 of this round).
Reason: That round wasn't helpful

What adjustments would you like for the retry?

Options:
1. Retry with same prompt
2. Retry with narrowed scope
3. Retry with user-provided context
5. Skip to next round
`
	if diff := cmp.Diff(want, p.Text()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	p = OptionsQuestion(3, 1, "", 3)
	if o, ok := p.Option("4"); !ok || o.Effect != EffectMultiRound {
		t.Errorf("option 4 = %+v, %v", o, ok)
	}
	if p.Default != "1" || !p.AllowText || p.ID != "rollback-options-r3-a1" {
		t.Errorf("prompt %+v", p)
	}
	if OverrideMessage(false) != "Auto-retry disabled for this round. What adjustments would you like?" {
		t.Error(OverrideMessage(false))
	}
}

func TestAnalysisQuestionWithoutSplitTitles(t *testing.T) {
	attempts := []rollback.AttemptInfo{{Attempt: 1, Reason: "a b c"}, {Attempt: 2, Reason: "x y z"}}
	d := rollback.Diagnose(attempts)
	p := AnalysisQuestion(RCAInput{Round: 4, Attempts: attempts, Diagnosis: d, Gap: "GAP-FLOW-003"})
	if o, _ := p.Option("1"); o.Label != "Split gap (give sub-gap titles, one per line)" || !o.Recommended {
		t.Errorf("option 1 = %+v", o)
	}
	if p.Default != "3" {
		t.Errorf("default %q: without titles the split needs text, reassign is the automated choice", p.Default)
	}
	p = AnalysisQuestion(RCAInput{Round: 4, Attempts: attempts[:1], Diagnosis: rollback.Diagnose(attempts[:1])})
	if _, ok := p.Option("1"); ok || p.Title != "ROLLBACK ROOT CAUSE ANALYSIS" || !strings.HasPrefix(p.Body, "Round 4 has been rolled back once.\n") {
		t.Errorf("strict first-attempt prompt: %q\n%s", p.Title, p.Body)
	}
}

func TestSplitDecision(t *testing.T) {
	ids := []gap.ID{"GAP-FLOW-007a", "GAP-FLOW-007b"}
	if SplitDecision(ids) != "Split gap into 007a, 007b" {
		t.Error(SplitDecision(ids))
	}
}

func TestRecoveryQuestions(t *testing.T) {
	one := []rollback.RoundDecision{{ID: "DECISION-R5-001", Summary: "Severity weights", Choice: "Severity weights remain as defined in GAP-FLOW-012", Rationale: "Weights are working well in practice"}}
	p := RecoveryQuestion(5, one)
	var labels []string
	for _, o := range p.Options {
		labels = append(labels, o.Label)
	}
	if diff := cmp.Diff([]string{"Re-apply this decision to current decisions.md", "Modify and apply (edit rationale/choice)", "Ignore (decision remains archived only)"}, labels); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if p.Default != "3" {
		t.Errorf("default %q", p.Default)
	}
	three := append(one, rollback.RoundDecision{ID: "DECISION-R5-002"}, rollback.RoundDecision{ID: "DECISION-R5-003"})
	p = RecoveryQuestion(5, three)
	if o, _ := p.Option("4"); o.Label != "Re-apply all decisions" {
		t.Errorf("option 4 %+v", o)
	}
	rec, err := ResolveRecovery(three, question.Option{Effect: EffectReapplyAll})
	if err != nil || len(rec.Reapply) != 3 {
		t.Errorf("reapply all: %+v %v", rec, err)
	}
	if _, err := ResolveRecovery(three, question.Option{Effect: ReapplyEffect("DECISION-R9-001")}); !errors.Is(err, ErrUnknownEffect) {
		t.Errorf("err = %v", err)
	}
	if p, _ := RecoveryQuestion(5, nil), 0; p.Default != "1" || len(p.Options) != 1 {
		t.Errorf("no decisions: %+v", p)
	}

	m := Modified(one[0], 5, "Choice: CRITICAL=8\nRationale: halved")
	if m.Choice != "CRITICAL=8" || m.Rationale != "halved" || m.Note != "Re-applied from rolled-back Round 5 (modified)" {
		t.Errorf("modified %+v", m)
	}
	if m := Modified(one[0], 5, "just a new choice"); m.Choice != "just a new choice" || m.Rationale != one[0].Rationale {
		t.Errorf("plain edit %+v", m)
	}
	mp := ModifyQuestion(5, three, "")
	if mp.Default != "back" || !mp.AllowText || len(mp.Options) != 4 || !slices.Equal(mp.TextRequired, []string{"1", "2", "3"}) {
		t.Errorf("modify prompt %+v", mp)
	}
	if d, ok := ModifyTarget(three, mp.Options[1]); !ok || d.ID != "DECISION-R5-002" {
		t.Errorf("option 2 modifies %+v, %v", d, ok)
	}
	if _, ok := ModifyTarget(three, mp.Options[3]); ok {
		t.Error("back modifies a decision")
	}
	if mp := ModifyQuestion(5, three, "Choice: CRITICAL=8"); len(mp.TextRequired) != 0 || !strings.Contains(mp.Body, `uses the text given with "Modify": "Choice: CRITICAL=8"`) {
		t.Errorf("with the text given with Modify: %+v", mp)
	}
	// A custom entry text is kept verbatim, with the note appended.
	custom := Reapply(rollback.RoundDecision{ID: "DECISION-R5-004", Text: "### DECISION-R5-004\nfree form\n"}, 5)
	if got := custom.Entry(); got != "### DECISION-R5-004\nfree form\n- **Note:** Re-applied from rolled-back Round 5\n" {
		t.Errorf("entry %q", got)
	}
	if got := rollback.ParseDecisionsFromRound(rollback.DecisionsFromRound(5, []rollback.RoundDecision{custom})); len(got) != 1 || got[0].Note != custom.Note || got[0].Entry() != custom.Entry() {
		t.Errorf("parse back %+v", got)
	}
}
