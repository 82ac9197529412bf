package conflict

import (
	"strings"
	"testing"

	"github.com/refine-spec/refine/gap"
)

// The Options Summary derives its trade-offs from the two positions and
// its "Recommended?" column from §4/§7's rules, saying why when nothing is
// recommended (#27 item 8).
func TestOptionsSummaryDerived(t *testing.T) {
	mk := func(sev gap.Severity, summary, position, rationale string) Conflict {
		return Conflict{IssueID: "ISSUE-R1-001", Type: explicit, Round: 2, Subject: summary,
			Issue:            Issue{ID: "ISSUE-R1-001", Severity: sev, Summary: summary, Suggestion: "Use cursors.", Impact: "Clients miss orders", Gap: "GAP-API-001"},
			ReviewerPosition: "Use cursors.", EngineerPosition: position, EngineerRationale: rationale}
	}
	tests := []struct {
		name string
		c    Conflict
		want []string
	}{
		{"HIGH: none recommended, A is the unattended default",
			mk(gap.High, "Offsets skip orders", "Offsets are fine.", "Trade-off analysis: cursors forbid jumping to page N. More text."),
			[]string{"| A | Reviewer | Gives up the Engineer's point: cursors forbid jumping to page N | - (unattended default) |",
				"| B | Engineer | May leave unaddressed: Clients miss orders | - |",
				"**Note:** HIGH severity has no default recommendation"}},
		{"MEDIUM: a synthesis that addresses both is recommended",
			mk(gap.Medium, "Offsets skip orders", "Cursors add complexity.", ""),
			[]string{"| A | Reviewer | Gives up the Engineer's point: cursors add complexity | - |",
				"| C | Synthesis | Partial complexity for flexibility | Yes (addresses both concerns) |"}},
		{"MEDIUM: no synthesis, none recommended",
			mk(gap.Medium, "Offsets skip orders", "Offsets are fine.", ""),
			[]string{"| A | Reviewer | Gives up the Engineer's point: offsets are fine | - (unattended default) |",
				"**Note:** no option addresses both concerns"}},
		{"LOW: resolves to the Engineer",
			mk(gap.Low, "Offsets skip orders", "Offsets are fine.", ""),
			[]string{"| A | Reviewer | Gives up the Engineer's point: offsets are fine | - |",
				"| B | Engineer | May leave unaddressed: Clients miss orders | Yes (LOW: resolves to the Engineer) |"}},
		{"CRITICAL: A recommended",
			mk(gap.Critical, "Offsets skip orders", "Offsets are fine.", ""),
			[]string{"| A | Reviewer | Gives up the Engineer's point: offsets are fine | Yes (CRITICAL) |"}},
		{"CRITICAL with a safety argument and no synthesis: none, and why",
			mk(gap.Critical, "Offsets skip orders", "Cursors risk data loss on restore.", ""),
			[]string{"| A | Reviewer | Gives up the Engineer's point: cursors risk data loss on restore | - (unattended default) |",
				"**Note:** the Engineer's rationale raises safety or correctness"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := present(tc.c)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("presentation lacks %q:\n%s", w, got[strings.Index(got, "### Options Summary"):])
				}
			}
			if strings.Contains(got, "May add complexity or constraints per Engineer concern") {
				t.Error("the canned trade-off is back")
			}
		})
	}
}

func TestBrief(t *testing.T) {
	long := strings.Repeat("word ", 60)
	if got := brief(long); len(got) > briefLen+len(" …") || !strings.HasSuffix(got, " …") {
		t.Errorf("brief of a long text = %q", got)
	}
	if got := brief("TTL must stay. Other."); got != "TTL must stay" {
		t.Errorf("brief keeps an acronym's case: %q", got)
	}
}
