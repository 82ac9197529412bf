package rollback

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/refine-spec/refine/gap"
)

func historyOf(round, n int) History {
	var h History
	for k := 1; k <= n; k++ {
		h.Records = append(h.Records, Record{Round: round, Attempt: k})
	}
	return h
}

func TestPolicyNext(t *testing.T) {
	for _, tc := range []struct {
		name       string
		p          Policy
		h          History
		off, multi bool
		want       Step
	}{
		{"interactive first", Policy{Mode: ModeInteractive}, History{}, false, false, Step{Attempt: 1, Mode: ModeInteractive, Ask: true}},
		{"interactive second", Policy{Mode: ModeInteractive}, historyOf(5, 1), false, false, Step{Attempt: 2, Mode: ModeInteractive, Ask: true, Analyze: true}},
		{"zero policy is interactive", Policy{}, History{}, false, false, Step{Attempt: 1, Mode: ModeInteractive, Ask: true}},
		{"auto first", Policy{Mode: ModeAutoRetry}, History{}, false, false, Step{Attempt: 1, Mode: ModeAutoRetry, AutoRetry: true}},
		{"auto disabled by user", Policy{Mode: ModeAutoRetry}, History{}, true, false, Step{Attempt: 1, Mode: ModeInteractive, Ask: true}},
		{"auto multi-round", Policy{Mode: ModeAutoRetry}, History{}, false, true, Step{Attempt: 1, Mode: ModeInteractive, Ask: true}},
		{"auto second", Policy{Mode: ModeAutoRetry}, historyOf(5, 1), false, false, Step{Attempt: 2, Mode: ModeInteractive, Ask: true, Analyze: true}},
		{"auto, other round rolled back", Policy{Mode: ModeAutoRetry}, historyOf(4, 1), false, false, Step{Attempt: 1, Mode: ModeAutoRetry, AutoRetry: true}},
		{"auto threshold 3, second", Policy{Mode: ModeAutoRetry, AnalysisThreshold: 3}, historyOf(5, 1), false, false, Step{Attempt: 2, Mode: ModeInteractive, Ask: true}},
		{"auto threshold 3, third", Policy{Mode: ModeAutoRetry, AnalysisThreshold: 3}, historyOf(5, 2), false, false, Step{Attempt: 3, Mode: ModeInteractive, Ask: true, Analyze: true}},
		{"auto threshold 1", Policy{Mode: ModeAutoRetry, AnalysisThreshold: 1}, History{}, false, false, Step{Attempt: 1, Mode: ModeInteractive, Ask: true, Analyze: true}},
		{"strict first", Policy{Mode: ModeStrict, AnalysisThreshold: 2}, History{}, false, false, Step{Attempt: 1, Mode: ModeStrict, Ask: true, Analyze: true}},
		{"limit", DefaultPolicy(), historyOf(3, 7), false, false, Step{Attempt: 1, Mode: ModeInteractive, LimitReached: true}},
		{"raised limit", Policy{Limit: 10}, historyOf(3, 7), false, false, Step{Attempt: 1, Mode: ModeInteractive, Ask: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.p.Next(5, tc.h, tc.off, tc.multi)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"auto-retry": ModeAutoRetry, " Interactive ": ModeInteractive, "STRICT": ModeStrict, "auto retry": ModeAutoRetry} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseMode("yolo"); err == nil {
		t.Error("ParseMode accepted yolo")
	}
}

func TestOptionsPrompt(t *testing.T) {
	p := OptionsPrompt(3, 1, "That round wasn't helpful", 1)
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
	p = OptionsPrompt(3, 1, "", 3)
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

func TestDiagnose(t *testing.T) {
	long := strings.Repeat("A long enough output that is not minimal at all. ", 6)
	for _, tc := range []struct {
		name     string
		attempts []AttemptInfo
		want     []Heuristic
		conf     Confidence
		action   Action
	}{
		{"single attempt", []AttemptInfo{{Attempt: 1, Reason: "too abstract", Engineer: long}}, nil, "", ActionContext},
		{
			"same reasons and patterns",
			[]AttemptInfo{
				{Attempt: 1, Reason: "Proposals too abstract", Engineer: long, Patterns: []Pattern{AbstractOutput}},
				{Attempt: 2, Reason: "Proposals still too abstract", Engineer: long, Patterns: []Pattern{AbstractOutput}},
			},
			[]Heuristic{SameFailureMode}, High, ActionContext,
		},
		{
			"patterns outvote paraphrased reasons",
			[]AttemptInfo{
				{Attempt: 1, Reason: "Proposals too abstract", Engineer: "## Gap Resolution: GAP-FLOW-007\n### Solution\n" + long, Patterns: []Pattern{AbstractOutput}},
				{Attempt: 2, Reason: "Still no concrete examples", Engineer: "## Gap Resolution: GAP-FLOW-007\n### Solution\n" + long, Patterns: []Pattern{AbstractOutput}},
			},
			[]Heuristic{SameFailureMode}, Medium, ActionContext,
		},
		{
			"minimal output",
			[]AttemptInfo{{Attempt: 1, Reason: "", Engineer: "tbd"}, {Attempt: 2, Reason: "", Engineer: "todo"}},
			[]Heuristic{MinimalOutput}, High, ActionContext,
		},
		{
			"references unknowns",
			[]AttemptInfo{
				{Attempt: 1, Reason: "uses undefined ROUND_STATE", Engineer: long, Patterns: []Pattern{DomainConfusion}},
				{Attempt: 2, Reason: "ROUND_STATE still undefined", Engineer: long, Patterns: []Pattern{DomainConfusion}},
			},
			[]Heuristic{SameFailureMode, ReferencesUnknowns}, High, ActionContext,
		},
		{
			"contradiction",
			[]AttemptInfo{
				{Attempt: 1, Reason: "x", Engineer: long, Reviewer: "### High Priority\n- The proposal contradicts itself on limits."},
				{Attempt: 2, Reason: "y", Engineer: long},
			},
			[]Heuristic{DifferentFailureModes, SelfContradiction}, Medium, ActionSplit,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Diagnose(tc.attempts)
			var got []Heuristic
			for _, c := range d.Causes {
				got = append(got, c.Heuristic)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("heuristics (-want +got):\n%s\n%+v", diff, d.Causes)
			}
			if len(d.Causes) > 0 && d.Causes[0].Confidence != tc.conf {
				t.Errorf("confidence %s, want %s", d.Causes[0].Confidence, tc.conf)
			}
			if d.Action != tc.action {
				t.Errorf("action %s, want %s", d.Action, tc.action)
			}
		})
	}
}

func TestAnalysisPromptWithoutSplitTitles(t *testing.T) {
	attempts := []AttemptInfo{{Attempt: 1, Reason: "a b c"}, {Attempt: 2, Reason: "x y z"}}
	d := Diagnose(attempts)
	p := AnalysisPrompt(RCAInput{Round: 4, Attempts: attempts, Diagnosis: d, Gap: "GAP-FLOW-003"})
	if o, _ := p.Option("1"); o.Label != "Split gap (give sub-gap titles, one per line)" || !o.Recommended {
		t.Errorf("option 1 = %+v", o)
	}
	if p.Default != "3" {
		t.Errorf("default %q: without titles the split needs text, reassign is the automated choice", p.Default)
	}
	p = AnalysisPrompt(RCAInput{Round: 4, Attempts: attempts[:1], Diagnosis: Diagnose(attempts[:1])})
	if _, ok := p.Option("1"); ok || p.Title != "ROLLBACK ROOT CAUSE ANALYSIS" || !strings.HasPrefix(p.Body, "Round 4 has been rolled back once.\n") {
		t.Errorf("strict first-attempt prompt: %q\n%s", p.Title, p.Body)
	}
}

func TestApplySplit(t *testing.T) {
	base := func() gap.Ledger {
		var l gap.Ledger
		l.Add(gap.Gap{ID: "GAP-FLOW-007", Title: "Rollback", Severity: gap.High, Blocking: true})
		l.Add(gap.Gap{ID: "GAP-FLOW-008", State: gap.Accepted})
		l.Add(gap.Gap{ID: "GAP-FLOW-009a"})
		l.Add(gap.Gap{ID: "GAP-FLOW-010"})
		l.Add(gap.Gap{ID: "GAP-FLOW-010b"})
		return l
	}
	for _, tc := range []struct {
		name   string
		parent gap.ID
		titles []string
		want   string
	}{
		{"unknown", "GAP-FLOW-099", []string{"a", "b"}, "unknown gap"},
		{"closed parent", "GAP-FLOW-008", []string{"a", "b"}, "invalid gap state transition"},
		{"already a sub-gap", "GAP-FLOW-009a", []string{"a", "b"}, "already a sub-gap"},
		{"one title", "GAP-FLOW-007", []string{"a"}, "1 sub-gap titles"},
		{"empty title", "GAP-FLOW-007", []string{"a", " "}, "title 2 is empty"},
		{"child exists", "GAP-FLOW-010", []string{"a", "b"}, "duplicate gap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := base()
			before := l.Clone()
			_, err := ApplySplit(&l, tc.parent, tc.titles, 3, t0, "")
			if !errors.Is(err, ErrSplit) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want ErrSplit mentioning %q", err, tc.want)
			}
			if diff := cmp.Diff(*before, l); diff != "" {
				t.Errorf("ledger changed on error (-before +after):\n%s", diff)
			}
		})
	}
	l := base()
	ids, err := ApplySplit(&l, "GAP-FLOW-007", []string{"A", "B"}, 3, t0.Add(time.Hour), "")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := l.Get("GAP-FLOW-007")
	if last := p.History[len(p.History)-1]; last.To != gap.Superseded || last.Reason != "split into GAP-FLOW-007a, GAP-FLOW-007b" || last.Round != 3 {
		t.Errorf("transition %+v", last)
	}
	c, _ := l.Get(ids[1])
	if !c.Blocking || c.Severity != gap.High || c.Title != "B" {
		t.Errorf("child %+v", c)
	}
	if SplitDecision(ids) != "Split gap into 007a, 007b" {
		t.Error(SplitDecision(ids))
	}
}

func TestParseSplitTitles(t *testing.T) {
	in := `- GAP-FLOW-007a: "Rollback state restoration" (what gets rolled back)
- GAP-FLOW-007b: "Rollback user experience"

3. Rollback policies and limits`
	want := []string{"Rollback state restoration (what gets rolled back)", "Rollback user experience", "Rollback policies and limits"}
	if diff := cmp.Diff(want, ParseSplitTitles(in)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "b"}, ParseSplitTitles("a; b")); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestRecoveryPrompts(t *testing.T) {
	one := []Decision{{ID: "DECISION-R5-001", Summary: "Severity weights", Choice: "Severity weights remain as defined in GAP-FLOW-012", Rationale: "Weights are working well in practice"}}
	p := RecoveryPrompt(5, one)
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
	three := append(one, Decision{ID: "DECISION-R5-002"}, Decision{ID: "DECISION-R5-003"})
	p = RecoveryPrompt(5, three)
	if o, _ := p.Option("4"); o.Label != "Re-apply all decisions" {
		t.Errorf("option 4 %+v", o)
	}
	rec, err := ResolveRecovery(three, Option{Effect: EffectReapplyAll})
	if err != nil || len(rec.Reapply) != 3 {
		t.Errorf("reapply all: %+v %v", rec, err)
	}
	if _, err := ResolveRecovery(three, Option{Effect: ReapplyEffect("DECISION-R9-001")}); !errors.Is(err, ErrUnknownEffect) {
		t.Errorf("err = %v", err)
	}
	if p, _ := RecoveryPrompt(5, nil), 0; p.Default != "1" || len(p.Options) != 1 {
		t.Errorf("no decisions: %+v", p)
	}

	m := Modified(one[0], 5, "Choice: CRITICAL=8\nRationale: halved")
	if m.Choice != "CRITICAL=8" || m.Rationale != "halved" || m.Note != "Re-applied from rolled-back Round 5 (modified)" {
		t.Errorf("modified %+v", m)
	}
	if m := Modified(one[0], 5, "just a new choice"); m.Choice != "just a new choice" || m.Rationale != one[0].Rationale {
		t.Errorf("plain edit %+v", m)
	}
	mp := ModifyPrompt(5, one[0])
	if mp.Default != "2" || !mp.AllowText {
		t.Errorf("modify prompt %+v", mp)
	}
	// A custom entry text is kept verbatim, with the note appended.
	custom := Reapply(Decision{ID: "DECISION-R5-004", Text: "### DECISION-R5-004\nfree form\n"}, 5)
	if got := custom.Entry(); got != "### DECISION-R5-004\nfree form\n- **Note:** Re-applied from rolled-back Round 5\n" {
		t.Errorf("entry %q", got)
	}
	if got := ParseDecisionsFromRound(DecisionsFromRound(5, []Decision{custom})); len(got) != 1 || got[0].Note != custom.Note || got[0].Entry() != custom.Entry() {
		t.Errorf("parse back %+v", got)
	}
}
