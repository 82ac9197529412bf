package conflict

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/gap"
)

// roundTrip encodes v as JSON and decodes it into a new T.
func roundTrip[T any](t *testing.T, v T) T {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%v in %s", err, b)
	}
	return out
}

func TestJSONRoundTrip(t *testing.T) {
	c := sampleConflict(t, gap.Critical)
	c, _ = OverrideSeverity(c, gap.High)
	c = c.withAnalysis(analysis{Subject: "Threshold", Synthesis: &Synthesis{Proposal: "p", TradeOff: "t"}})
	d, c2, err := Decide(c, Resolution{Option: "C", Text: "ok"}, "DECISION-R3-001", mustTime(t, "2026-01-12T11:00:00Z"))
	if err != nil {
		t.Fatal(err)
	}
	f := DetectImplicit(ImplicitInput{Round: 4, EngineerOutput: revised, Issues: []Issue{retryIssue(gap.High)}})[0]
	h, alerts := CheckRate(RateHistory{}, RateInputFor(4, hcIssues(3, 2), []Conflict{conflictOn("ISSUE-R3-001", 3, gap.High, "")}, 6), defaultLimits())

	for name, check := range map[string]func() (any, any){
		"conflict": func() (any, any) { return c2, roundTrip(t, c2) },
		"decision": func() (any, any) { return d, roundTrip(t, d) },
		"finding":  func() (any, any) { return f, roundTrip(t, f) },
		"ignore":   func() (any, any) { s := IgnoreSet{}.with("ISSUE-R1-001"); return s, roundTrip(t, s) },
		"history":  func() (any, any) { return h, roundTrip(t, h) },
		"alerts":   func() (any, any) { return alerts, roundTrip(t, alerts) },
		"overrides": func() (any, any) {
			o := Overrides{"ISSUE-R1-001": gap.Low}
			return o, roundTrip(t, o)
		},
		"prompt": func() (any, any) { p := ConflictQuestion(c); return p, roundTrip(t, p) },
		"limits": func() (any, any) { return defaultLimits(), roundTrip(t, defaultLimits()) },
	} {
		want, got := check()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s round trip (-want +got):\n%s", name, diff)
		}
	}
	// Severities are stored by name.
	b, _ := json.Marshal(c2)
	if !json.Valid(b) || !strings.Contains(string(b), `"severity":"HIGH"`) || !strings.Contains(string(b), `"original_severity":"CRITICAL"`) {
		t.Errorf("conflict JSON: %s", b)
	}
}
