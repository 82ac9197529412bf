package conflict

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/question"
)

// hcIssues returns n HIGH issues of round r.
func hcIssues(r, n int) []Issue {
	out := make([]Issue, n)
	for i := range out {
		out[i] = Issue{ID: fmt.Sprintf("ISSUE-R%d-%03d", r, i+1), Round: r, Severity: gap.High, Summary: fmt.Sprintf("Issue %d", i+1)}
	}
	return out
}

func ids(is []Issue) []string {
	var out []string
	for _, i := range is {
		out = append(out, i.ID)
	}
	return out
}

func kinds(as []RateAlert) []rateKind {
	var out []rateKind
	for _, a := range as {
		out = append(out, a.Kind)
	}
	return out
}

func TestCheckRateRound(t *testing.T) {
	tests := []struct {
		name      string
		total     int
		disagreed int
		submitted int
		want      []rateKind
		message   string
	}{
		{"exactly 50%: no warning", 4, 2, 2, nil, ""},
		{"51%: warning", 100, 51, 5, []rateKind{rateWarn}, "Engineer disagreed with 51% of HIGH/CRITICAL issues this round."},
		{"3 of 5 (60%): warning", 5, 3, 3, []rateKind{rateWarn}, "Engineer disagreed with 60% of HIGH/CRITICAL issues this round."},
		{"no HIGH/CRITICAL issues: no rate", 0, 0, 0, nil, ""},
		{"5 DISAGREEs: no block", 20, 5, 5, nil, ""},
		{"6 DISAGREEs: block", 20, 6, 6, []rateKind{RateBlock}, "Engineer submitted 6 DISAGREEs (limit: 5 per round)."},
		{"6 of 6: block, then warning", 6, 6, 6, []rateKind{RateBlock, rateWarn}, "Engineer submitted 6 DISAGREEs (limit: 5 per round)."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			issues := hcIssues(3, tt.total)
			in := RateInput{round: 4, highCritical: issues, disagreed: ids(issues[:tt.disagreed]), submitted: tt.submitted}
			h, alerts := CheckRate(RateHistory{}, in, defaultLimits())
			if diff := cmp.Diff(tt.want, kinds(alerts)); diff != "" {
				t.Errorf("alerts (-want +got):\n%s", diff)
			}
			if tt.message != "" && alerts[0].Message != tt.message {
				t.Errorf("message = %q, want %q", alerts[0].Message, tt.message)
			}
			if diff := cmp.Diff([]rateRecord{{Round: 4, Disagreed: tt.disagreed, Total: tt.total, Submitted: tt.submitted}}, h.Records); diff != "" {
				t.Errorf("history (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckRateSession(t *testing.T) {
	rec := func(r, d, t int) rateRecord { return rateRecord{Round: r, Disagreed: d, Total: t} }
	tests := []struct {
		name    string
		history []rateRecord
		d, t    int // this round (5)
		want    []rateKind
		message string
	}{
		{"two rounds only: no pattern yet", []rateRecord{rec(4, 2, 4)}, 2, 4, nil, ""},
		{"exactly 40% over 3 rounds: no alert", []rateRecord{rec(3, 2, 5), rec(4, 2, 5)}, 2, 5, nil, ""},
		{"over 40% over 3 rounds: alert", []rateRecord{rec(3, 2, 5), rec(4, 2, 5)}, 3, 6, []rateKind{rateSystematic},
			"Systematic DISAGREE pattern: 7/16 (44%) across last 3 rounds."},
		{"only the last 3 rounds count", []rateRecord{rec(1, 0, 10), rec(2, 0, 10), rec(3, 2, 4), rec(4, 2, 4)}, 1, 4, []rateKind{rateSystematic},
			"Systematic DISAGREE pattern: 5/12 (42%) across last 3 rounds."},
		{"old heavy rounds age out", []rateRecord{rec(1, 5, 5), rec(2, 5, 5), rec(3, 0, 4), rec(4, 1, 4)}, 1, 4, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			issues := hcIssues(4, tt.t)
			in := RateInput{round: 5, highCritical: issues, disagreed: ids(issues[:tt.d])}
			_, alerts := CheckRate(RateHistory{Records: tt.history}, in, defaultLimits())
			var got []rateKind
			var sys *RateAlert
			for i, a := range alerts {
				if a.Kind == rateSystematic {
					got = append(got, a.Kind)
					sys = &alerts[i]
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("alerts (-want +got):\n%s", diff)
			}
			if sys != nil {
				if sys.Message != tt.message {
					t.Errorf("message = %q, want %q", sys.Message, tt.message)
				}
				if len(sys.Window) != 3 || sys.Window[2].Round != 5 {
					t.Errorf("window = %+v", sys.Window)
				}
			}
		})
	}
}

func TestCheckRateReplacesRound(t *testing.T) {
	issues := hcIssues(2, 4)
	h, _ := CheckRate(RateHistory{}, RateInput{round: 3, highCritical: issues, disagreed: ids(issues)}, defaultLimits())
	orig := h
	h2, _ := CheckRate(h, RateInput{round: 3, highCritical: issues[:2], disagreed: ids(issues[:1])}, defaultLimits())
	if diff := cmp.Diff([]rateRecord{{Round: 3, Disagreed: 1, Total: 2}}, h2.Records); diff != "" {
		t.Errorf("re-check (-want +got):\n%s", diff)
	}
	if orig.Records[0].Disagreed != 4 {
		t.Error("CheckRate modified its input history")
	}
	// Disagreements with issues outside HIGH/CRITICAL do not count.
	_, alerts := CheckRate(RateHistory{}, RateInput{round: 3, highCritical: issues, disagreed: []string{"ISSUE-R2-001", "ISSUE-R2-009", "ISSUE-R2-010"}}, defaultLimits())
	if len(alerts) != 0 {
		t.Errorf("alerts = %+v", alerts)
	}
}

func TestRateQuestions(t *testing.T) {
	issues := hcIssues(2, 6)
	_, alerts := CheckRate(RateHistory{Records: []rateRecord{{Round: 1, Disagreed: 3, Total: 3}, {Round: 2, Disagreed: 3, Total: 3}}},
		RateInput{round: 3, highCritical: issues, disagreed: ids(issues), submitted: 6}, defaultLimits())
	if diff := cmp.Diff([]rateKind{RateBlock, rateWarn, rateSystematic}, kinds(alerts)); diff != "" {
		t.Fatalf("alerts (-want +got):\n%s", diff)
	}
	tests := []struct {
		kind    string // the question ID's prefix
		keys    []string
		def     string
		body    []string
		textReq string // key that requires text
	}{
		{"rate-block-", []string{"1", "2", "3"}, "1", []string{"DISAGREE LIMIT EXCEEDED", "Engineer submitted 6 DISAGREEs (limit: 5 per round).", "Engineer must reduce disagreements or provide session-level justification."}, "2"},
		{"rate-warning-", []string{"1", "2", "3", "4"}, "1", []string{"DISAGREE RATE WARNING", "Engineer disagreed with 6 of 6 HIGH/CRITICAL issues this round (100%).", "3. Fundamental misalignment on approach"}, ""},
		{"rate-systematic-", []string{"1", "2", "3", "4"}, "1", []string{"Systematic DISAGREE pattern: 12/12 (100%) across last 3 rounds.", "- Round 1: 3 of 3", "Consider: (1) Reviewer feedback style too rigid"}, ""},
	}
	for i, tt := range tests {
		p := RateQuestion(alerts[i])
		if !strings.HasPrefix(p.ID, tt.kind) || p.Kind != question.KindDisagreeRate || p.Default != tt.def {
			t.Errorf("%s: kind/default = %s/%s", tt.kind, p.Kind, p.Default)
		}
		if diff := cmp.Diff(tt.keys, promptKeys(p)); diff != "" {
			t.Errorf("%s keys (-want +got):\n%s", tt.kind, diff)
		}
		for _, s := range tt.body {
			if !strings.Contains(p.Body, s) {
				t.Errorf("%s body lacks %q:\n%s", tt.kind, s, p.Body)
			}
		}
		if err := validateAnswer(p, p.Default, ""); err != nil {
			t.Errorf("%s default rejected: %v", tt.kind, err)
		}
		if tt.textReq != "" {
			if err := validateAnswer(p, tt.textReq, ""); err == nil {
				t.Errorf("%s: option %s without text accepted", tt.kind, tt.textReq)
			}
			if err := validateAnswer(p, tt.textReq, "The spec is contested by design."); err != nil {
				t.Errorf("%s: %v", tt.kind, err)
			}
		}
	}
	if s := BlockInstruction(alerts[0]); !strings.Contains(s, "6 DISAGREE blocks (limit: 5 per round)") {
		t.Errorf("BlockInstruction = %q", s)
	}
}

func TestLimitsValidate(t *testing.T) {
	if err := defaultLimits().validate(); err != nil {
		t.Error(err)
	}
	for _, l := range []Limits{{RoundRate: 1.5, SessionRounds: 3}, {SessionRate: -1, SessionRounds: 3}, {SessionRounds: 0}, {SessionRounds: 3, MaxPerRound: -1}} {
		if l.validate() == nil {
			t.Errorf("%+v: no error", l)
		}
	}
}

// The minimum-evidence rule (docs/workflow.md#disagree-rate-limits): no
// warning for a single disagreement,
// no systematic alert on a round without a DISAGREE, never the same window
// twice, and only rounds with HIGH/CRITICAL issues make up the window.
func TestCheckRateEvidence(t *testing.T) {
	rec := func(r, d, t int) rateRecord { return rateRecord{Round: r, Disagreed: d, Total: t} }
	tests := []struct {
		name    string
		h       RateHistory
		d, t    int // round 5
		want    []rateKind
		alerted int
	}{
		{"1 of 1: straight to conflict resolution", RateHistory{}, 1, 1, nil, 0},
		{"2 of 3: warning", RateHistory{}, 2, 3, []rateKind{rateWarn}, 0},
		{"no DISAGREE this round: no systematic alert", RateHistory{Records: []rateRecord{rec(3, 3, 3), rec(4, 3, 3)}}, 0, 3, nil, 0},
		{"pattern with a DISAGREE this round", RateHistory{Records: []rateRecord{rec(3, 3, 3), rec(4, 3, 3)}}, 1, 3, []rateKind{rateSystematic}, 5},
		{"same window after an alert: none", RateHistory{Records: []rateRecord{rec(3, 3, 3), rec(4, 3, 3)}, Alerted: 4}, 1, 3, nil, 4},
		{"rounds without HIGH/CRITICAL issues are skipped", RateHistory{Records: []rateRecord{rec(2, 2, 2), rec(3, 2, 2), rec(4, 0, 0)}}, 1, 2, []rateKind{rateSystematic}, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			issues := hcIssues(4, tt.t)
			h, alerts := CheckRate(tt.h, RateInput{round: 5, highCritical: issues, disagreed: ids(issues[:tt.d]), submitted: tt.d}, defaultLimits())
			if diff := cmp.Diff(tt.want, kinds(alerts)); diff != "" {
				t.Errorf("alerts (-want +got):\n%s", diff)
			}
			if h.Alerted != tt.alerted {
				t.Errorf("Alerted = %d, want %d", h.Alerted, tt.alerted)
			}
		})
	}
}
