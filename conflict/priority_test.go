package conflict

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/gap"
)

func conflictOn(id string, round int, sev gap.Severity, g gap.ID) Conflict {
	c := Conflict{IssueID: id, Type: explicit, Issue: Issue{ID: id, Round: round, Severity: sev, Gap: g, Summary: "s"}, Status: StatusUnresolved}
	c.Options = generateOptions(c)
	return c
}

func TestPrioritize(t *testing.T) {
	in := []Conflict{
		conflictOn("ISSUE-R3-002", 3, gap.High, "GAP-A-001"),
		conflictOn("ISSUE-R3-001", 3, gap.Low, "GAP-A-001"),
		conflictOn("ISSUE-R2-010", 2, gap.High, "GAP-A-001"),
		conflictOn("ISSUE-R3-005", 3, gap.Critical, "GAP-A-001"),
		conflictOn("ISSUE-R2-003", 0, gap.High, "GAP-A-001"), // round taken from the ID
		conflictOn("ISSUE-R3-004", 3, gap.Medium, "GAP-A-001"),
	}
	want := []string{"ISSUE-R3-005", "ISSUE-R2-003", "ISSUE-R2-010", "ISSUE-R3-002", "ISSUE-R3-004", "ISSUE-R3-001"}
	if diff := cmp.Diff(want, conflictIDs(prioritize(in))); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if in[0].IssueID != "ISSUE-R3-002" {
		t.Error("Prioritize modified its input")
	}
}

func TestOverrides(t *testing.T) {
	issues := []Issue{{ID: "ISSUE-R1-001", Severity: gap.High}, {ID: "ISSUE-R1-002", Severity: gap.Critical}}
	got := ApplyOverrides(issues, Overrides{"ISSUE-R1-001": gap.Low, "ISSUE-R9-009": gap.High})
	if got[0].Severity != gap.Low || got[1].Severity != gap.Critical || issues[0].Severity != gap.High {
		t.Errorf("ApplyOverrides = %+v (input %+v)", got, issues)
	}

	tests := []struct {
		name   string
		from   gap.Severity
		to     gap.Severity
		status Status
		keys   []string
	}{
		{"to LOW: no longer a conflict", gap.High, gap.Low, statusDowngraded, []string{"A", "B"}},
		{"to MEDIUM: still to decide, not blocking", gap.Critical, gap.Medium, StatusUnresolved, []string{"A", "B"}},
		{"upward to CRITICAL: D appears", gap.Medium, gap.Critical, StatusUnresolved, []string{"A", "B", "D"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := OverrideSeverity(conflictOn("ISSUE-R1-001", 1, tt.from, "GAP-A-001"), tt.to)
			if err != nil {
				t.Fatal(err)
			}
			if c.Status != tt.status || c.Issue.Severity != tt.to || c.OriginalSeverity != tt.from {
				t.Errorf("status %s severity %s original %s", c.Status, c.Issue.Severity, c.OriginalSeverity)
			}
			if diff := cmp.Diff(tt.keys, keys(c.Options)); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
	resolved := conflictOn("ISSUE-R1-001", 1, gap.High, "GAP-A-001")
	resolved.Status, resolved.DecisionID = StatusResolved, "DECISION-R2-001"
	if _, err := OverrideSeverity(resolved, gap.Low); err == nil {
		t.Error("override of a resolved conflict: no error")
	}
	if _, err := OverrideSeverity(resolved, 0); err == nil {
		t.Error("invalid severity: no error")
	}
	// An analysis synthesis survives an override.
	c := conflictOn("ISSUE-R1-001", 1, gap.High, "GAP-A-001").withAnalysis(analysis{Synthesis: &Synthesis{Proposal: "Mix.", TradeOff: "t", AddressesBoth: true}})
	c, _ = OverrideSeverity(c, gap.Medium)
	if diff := cmp.Diff([]string{"C"}, recommendedKeys(c.Options)); diff != "" {
		t.Errorf("after override (-want +got):\n%s", diff)
	}
}

func TestBlocking(t *testing.T) {
	resolved := conflictOn("ISSUE-R1-004", 1, gap.Critical, "GAP-A-004")
	resolved.Status = StatusResolved
	downgraded, _ := OverrideSeverity(conflictOn("ISSUE-R1-005", 1, gap.High, "GAP-A-005"), gap.Low)
	cs := []Conflict{
		conflictOn("ISSUE-R1-001", 1, gap.Critical, "GAP-B-002"),
		conflictOn("ISSUE-R1-002", 1, gap.High, "GAP-A-003"),
		conflictOn("ISSUE-R1-003", 1, gap.High, "GAP-B-002"),
		conflictOn("ISSUE-R1-006", 1, gap.Medium, "GAP-A-006"),
		conflictOn("ISSUE-R1-007", 1, gap.High, ""),
		resolved, downgraded,
	}
	crit, high := Blocking(cs)
	if crit != 1 || high != 3 {
		t.Errorf("Blocking = %d, %d; want 1, 3", crit, high)
	}
	if diff := cmp.Diff([]gap.ID{"GAP-A-003", "GAP-B-002"}, BlockedGaps(cs)); diff != "" {
		t.Errorf("BlockedGaps (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"ISSUE-R1-001", "ISSUE-R1-002", "ISSUE-R1-003", "ISSUE-R1-007", "ISSUE-R1-006"}, conflictIDs(Pending(cs))); diff != "" {
		t.Errorf("Pending (-want +got):\n%s", diff)
	}
}
