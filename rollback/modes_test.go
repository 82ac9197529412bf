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
		{"auto threshold 3, second", Policy{Mode: ModeAutoRetry, analysisThreshold: 3}, historyOf(5, 1), false, false, Step{Attempt: 2, Mode: ModeInteractive, Ask: true}},
		{"auto threshold 3, third", Policy{Mode: ModeAutoRetry, analysisThreshold: 3}, historyOf(5, 2), false, false, Step{Attempt: 3, Mode: ModeInteractive, Ask: true, Analyze: true}},
		{"auto threshold 1", Policy{Mode: ModeAutoRetry, analysisThreshold: 1}, History{}, false, false, Step{Attempt: 1, Mode: ModeInteractive, Ask: true, Analyze: true}},
		{"strict first", Policy{Mode: ModeStrict, analysisThreshold: 2}, History{}, false, false, Step{Attempt: 1, Mode: ModeStrict, Ask: true, Analyze: true}},
		{"limit", DefaultPolicy(), historyOf(3, 7), false, false, Step{Attempt: 1, Mode: ModeInteractive, LimitReached: true}},
		{"raised limit", Policy{maxRollbacks: 10}, historyOf(3, 7), false, false, Step{Attempt: 1, Mode: ModeInteractive, Ask: true}},
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

func TestDiagnose(t *testing.T) {
	long := strings.Repeat("A long enough output that is not minimal at all. ", 6)
	for _, tc := range []struct {
		name     string
		attempts []AttemptInfo
		want     []Heuristic
		conf     gap.Confidence
		action   Action
	}{
		{"single attempt", []AttemptInfo{{Attempt: 1, Reason: "too abstract", Engineer: long}}, nil, "", ActionContext},
		{
			"same reasons and patterns",
			[]AttemptInfo{
				{Attempt: 1, Reason: "Proposals too abstract", Engineer: long, Patterns: []Pattern{AbstractOutput}},
				{Attempt: 2, Reason: "Proposals still too abstract", Engineer: long, Patterns: []Pattern{AbstractOutput}},
			},
			[]Heuristic{sameFailureMode}, gap.ConfidenceHigh, ActionContext,
		},
		{
			"patterns outvote paraphrased reasons",
			[]AttemptInfo{
				{Attempt: 1, Reason: "Proposals too abstract", Engineer: "## Gap Resolution: GAP-FLOW-007\n### Solution\n" + long, Patterns: []Pattern{AbstractOutput}},
				{Attempt: 2, Reason: "Still no concrete examples", Engineer: "## Gap Resolution: GAP-FLOW-007\n### Solution\n" + long, Patterns: []Pattern{AbstractOutput}},
			},
			[]Heuristic{sameFailureMode}, gap.ConfidenceMedium, ActionContext,
		},
		{
			"minimal output",
			[]AttemptInfo{{Attempt: 1, Reason: "", Engineer: "tbd"}, {Attempt: 2, Reason: "", Engineer: "todo"}},
			[]Heuristic{minimalOutput}, gap.ConfidenceHigh, ActionContext,
		},
		{
			"references unknowns",
			[]AttemptInfo{
				{Attempt: 1, Reason: "uses undefined ROUND_STATE", Engineer: long, Patterns: []Pattern{domainConfusion}},
				{Attempt: 2, Reason: "ROUND_STATE still undefined", Engineer: long, Patterns: []Pattern{domainConfusion}},
			},
			[]Heuristic{sameFailureMode, referencesUnknowns}, gap.ConfidenceHigh, ActionContext,
		},
		{
			"contradiction",
			[]AttemptInfo{
				{Attempt: 1, Reason: "x", Engineer: long, Reviewer: "### High Priority\n- The proposal contradicts itself on limits."},
				{Attempt: 2, Reason: "y", Engineer: long},
			},
			[]Heuristic{DifferentFailureModes, selfContradiction}, gap.ConfidenceMedium, ActionSplit,
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
			if !errors.Is(err, errSplit) || !strings.Contains(err.Error(), tc.want) {
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
