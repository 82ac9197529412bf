package conflict

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/gap"
)

func sampleConflict(t *testing.T, sev gap.Severity) Conflict {
	t.Helper()
	is := explicitIssues()[0]
	is.Severity = sev
	res := DetectExplicit(ExplicitInput{Round: 3, EngineerOutput: block("ISSUE-R2-001", "Keep the 100 character threshold; it adds no complexity."), Issues: []Issue{is}, At: mustTime(t, "2026-01-12T09:00:00Z")})
	if len(res.Conflicts) != 1 {
		t.Fatalf("conflicts = %+v", res.Conflicts)
	}
	return res.Conflicts[0]
}

func TestDecideDefaults(t *testing.T) {
	at := mustTime(t, "2026-01-12T11:00:00+01:00")
	tests := []struct {
		option, text string
		sev          gap.Severity
		decision     string
		action       string
		gapAction    string
		rationale    string
		next         gap.State
	}{
		{"A", "Schemas are safer.", gap.High, "Adopt the Reviewer's position: Use schema-based validation",
			"Implement the Reviewer's suggestion for ISSUE-R2-001: Use schema-based validation",
			"GAP-FLOW-001 must implement the chosen option before ACCEPTED.", "Schemas are safer.", gap.Open},
		{"B", "", gap.High, "Keep the Engineer's position: Keep the 100 character threshold; it adds no complexity.",
			"Keep your current approach for ISSUE-R2-001; no change is required.",
			"GAP-FLOW-001 may now transition to ACCEPTED", "(none given)", gap.Accepted},
		{"C", "Both.", gap.High, "Implement use schema-based validation as optional/configurable, with simpler default",
			"Implement the synthesis for ISSUE-R2-001: Implement use schema-based validation as optional/configurable, with simpler default",
			"GAP-FLOW-001 may proceed with this approach.", "Both.", gap.Open},
		{"D", "Use a 10-byte minimum plus a header check.", gap.Critical, "Use a 10-byte minimum plus a header check.",
			"Implement the user's alternative for ISSUE-R2-001: Use a 10-byte minimum plus a header check.",
			"GAP-FLOW-001 may proceed with the user's alternative.", "User-specified alternative", gap.Open},
	}
	for _, tt := range tests {
		t.Run(tt.option, func(t *testing.T) {
			c := sampleConflict(t, tt.sev)
			d, c2, err := Decide(c, Resolution{Option: tt.option, Text: tt.text}, "DECISION-R3-002", at)
			if err != nil {
				t.Fatal(err)
			}
			want := Ruling{
				ID: "DECISION-R3-002", Round: 3, IssueID: "ISSUE-R2-001", Subject: "Error threshold of 100 chars is arbitrary",
				Type: explicit, Gap: "GAP-FLOW-001", Severity: tt.sev,
				ReviewerSummary: "Use schema-based validation", EngineerSummary: "Keep the 100 character threshold; it adds no complexity",
				EngineerPosition: "Keep the 100 character threshold; it adds no complexity.",
				ChosenOption:     tt.option, Decision: tt.decision, Rationale: tt.rationale, Constraints: "None",
				EngineerAction: tt.action, GapAction: tt.gapAction, NextState: tt.next,
				DecidedBy: decidedByUser, Timestamp: at.UTC(),
			}
			if diff := cmp.Diff(want, d); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
			if c2.Status != StatusResolved || c2.DecisionID != d.ID {
				t.Errorf("conflict after = %s %s", c2.Status, c2.DecisionID)
			}
			if !strings.Contains(renderDecision(d), "**Timestamp:** 2026-01-12T10:00:00Z") {
				t.Error("timestamp not rendered in UTC ISO 8601")
			}
		})
	}
}

func TestDecideErrors(t *testing.T) {
	at := mustTime(t, "2026-01-12T11:00:00Z")
	high := sampleConflict(t, gap.High)
	crit := sampleConflict(t, gap.Critical)
	resolved := high
	resolved.Status = StatusResolved
	tests := []struct {
		name string
		c    Conflict
		r    Resolution
		id   string
		want string
	}{
		{"option not offered", high, Resolution{Option: "D"}, "DECISION-R3-001", `option "D" was not offered for question conflict-r3-ISSUE-R2-001: want one of A, B, C`},
		{"lower-case key", high, Resolution{Option: "a"}, "DECISION-R3-001", "want one of A, B, C"},
		{"no option", high, Resolution{}, "DECISION-R3-001", "needs a choice: want one of A, B, C"},
		{"D without the alternative", crit, Resolution{Option: "D"}, "DECISION-R3-001", "needs text: describe your alternative"},
		{"already resolved", resolved, Resolution{Option: "A"}, "DECISION-R3-001", "is RESOLVED, not open"},
		{"bad decision ID", high, Resolution{Option: "A"}, "DECISION-3-1", "not a decision ID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, c, err := Decide(tt.c, tt.r, tt.id, at)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
			if c.Status != tt.c.Status {
				t.Error("conflict changed on error")
			}
		})
	}
	if _, _, err := Decide(high, Resolution{Option: "Z"}, "DECISION-R3-001", at); !errors.Is(err, errInvalidAnswer) {
		t.Errorf("err = %v, want ErrInvalidAnswer", err)
	}
	// D's alternative may come as the host's Decision wording.
	if _, _, err := Decide(crit, Resolution{Option: "D", Decision: "Header check."}, "DECISION-R3-001", at); err != nil {
		t.Error(err)
	}
}

func TestAutoResolution(t *testing.T) {
	for _, tt := range []struct {
		sev  gap.Severity
		want string
	}{{gap.Critical, "A"}, {gap.High, "A"}, {gap.Medium, "C"}} {
		c := sampleConflict(t, tt.sev)
		r := autoResolution(c)
		d, _, err := Decide(c, r, "DECISION-R3-001", mustTime(t, "2026-01-12T11:00:00Z"))
		if err != nil {
			t.Fatal(err)
		}
		if d.ChosenOption != tt.want || d.DecidedBy != decidedByAutomated {
			t.Errorf("%s: automated choice %s by %s, want %s", tt.sev, d.ChosenOption, d.DecidedBy, tt.want)
		}
	}
}

func TestDecisionIDsAndRendering(t *testing.T) {
	at := mustTime(t, "2026-01-12T11:00:00Z")
	ds := []Ruling{
		{ID: "DECISION-R3-002", Round: 3, IssueID: "ISSUE-R2-004", Subject: "S4", Type: explicit, Severity: gap.Medium, ChosenOption: "B", Decision: "d", Rationale: "r", Constraints: "None", EngineerAction: "e", GapAction: "g", DecidedBy: "User", Timestamp: at},
		{ID: "DECISION-R2-001", Round: 2, IssueID: "ISSUE-R1-001", Subject: "S1", Type: explicit, Severity: gap.High, ChosenOption: "A", Decision: "d", Rationale: "r", Constraints: "None", EngineerAction: "e", GapAction: "g", DecidedBy: "User", Timestamp: at},
		{ID: "DECISION-R3-001", Round: 3, IssueID: "ISSUE-R2-001", Subject: "S2", Type: implicitConverted, Severity: gap.Critical, ChosenOption: "A", Decision: "d", Rationale: "r", Constraints: "None", EngineerAction: "e", GapAction: "g", DecidedBy: "User", Timestamp: at},
	}
	var ids []string
	for _, d := range ds {
		ids = append(ids, d.ID)
	}
	if got := gap.NextDecisionID(ids, 3); got != "DECISION-R3-003" {
		t.Errorf("NextDecisionID(3) = %s", got)
	}
	if got := gap.NextDecisionID(ids, 4); got != "DECISION-R4-001" {
		t.Errorf("NextDecisionID(4) = %s", got)
	}
	md := RenderDecisions(ds)
	var heads []string
	for l := range strings.Lines(md) {
		if strings.HasPrefix(l, "## ") || strings.HasPrefix(l, "<!--") {
			heads = append(heads, strings.TrimSpace(l))
		}
	}
	want := []string{"## Round 2 Conflict Resolutions", "<!-- DECISION-R2-001 -->", "## Round 3 Conflict Resolutions", "<!-- DECISION-R3-001 -->", "<!-- DECISION-R3-002 -->"}
	if diff := cmp.Diff(want, heads); diff != "" {
		t.Errorf("decisions.md outline (-want +got):\n%s", diff)
	}
	if RenderDecisions(nil) != "" || ResolutionBlock(nil) != "" {
		t.Error("empty input rendered something")
	}
	recent := RecentDecisions(ds, 4)
	if diff := cmp.Diff([]string{"DECISION-R3-001", "DECISION-R3-002"}, decisionIDs(recent)); diff != "" {
		t.Errorf("RecentDecisions (-want +got):\n%s", diff)
	}
	block := ResolutionBlock(recent)
	for _, s := range []string{"### ISSUE-R2-001: S2\n\n**User Decision:** Option A - d\n**Rationale:** r\n\n**Your Action Required:**\ne\n\n---\n", "IMPORTANT: Do not re-argue decided conflicts."} {
		if !strings.Contains(block, s) {
			t.Errorf("block lacks %q:\n%s", s, block)
		}
	}
}

func decisionIDs(ds []Ruling) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.ID)
	}
	return out
}
