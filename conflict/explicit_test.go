package conflict

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/gap"
)

func explicitIssues() []Issue {
	return []Issue{
		{ID: "ISSUE-R2-001", Round: 2, Severity: gap.High, Gap: "GAP-FLOW-001",
			Summary: "Error threshold of 100 chars is arbitrary", Suggestion: "Use schema-based validation", Impact: "Empty-looking files pass"},
		{ID: "ISSUE-R2-002", Round: 2, Severity: gap.Critical, Gap: "GAP-FLOW-003",
			Summary: "Backup rotation loses data", Suggestion: "Keep last 3 backups", Location: "Section 5 Rotation"},
		{ID: "ISSUE-R2-003", Round: 2, Severity: gap.Low, Gap: "GAP-FLOW-001", Summary: "Typo in heading"},
		{ID: "ISSUE-R2-004", Round: 2, Severity: gap.Medium, Gap: "GAP-FLOW-004", Summary: "Status table lacks timestamps"},
	}
}

func block(id, position string) string {
	return "## DISAGREE: " + id + "\n\n**Reviewer Concern:**\n> concern\n\n**Engineer Position:**\n" + position + "\n\n**Rationale:**\nBecause.\n\n"
}

func TestDetectExplicit(t *testing.T) {
	type got struct {
		Conflicts []string // issue:source:confidence
		Logged    []string
		Unmatched int
		Submitted int
	}
	tests := []struct {
		name string
		out  string
		want got
	}{
		{
			name: "exact blocks, prioritised",
			out:  block("ISSUE-R2-001", "Keep 100 chars.") + block("ISSUE-R2-002", "One backup is enough."),
			want: got{Conflicts: []string{"ISSUE-R2-002:DISAGREE_BLOCK:HIGH", "ISSUE-R2-001:DISAGREE_BLOCK:HIGH"}, Submitted: 2},
		},
		{
			name: "LOW issue: a low-priority conflict, after the MEDIUM one",
			out:  block("ISSUE-R2-003", "The heading is fine.") + block("ISSUE-R2-004", "Timestamps clutter the table."),
			want: got{Conflicts: []string{"ISSUE-R2-004:DISAGREE_BLOCK:HIGH", "ISSUE-R2-003:DISAGREE_BLOCK:HIGH"}, Submitted: 2},
		},
		{
			name: "duplicate block: logged",
			out:  block("ISSUE-R2-001", "a") + block("ISSUE-R2-001", "b"),
			want: got{Conflicts: []string{"ISSUE-R2-001:DISAGREE_BLOCK:HIGH"}, Logged: []string{"ISSUE-R2-001"}, Submitted: 2},
		},
		{
			name: "unknown ID: soft match on keywords",
			out:  block("ISSUE-R9-001", "The error threshold of 100 chars is simple, not arbitrary."),
			want: got{Conflicts: []string{"ISSUE-R2-001:SOFT_MATCH:MEDIUM"}, Submitted: 1},
		},
		{
			name: "no ID: soft match on the location",
			out:  block("retry timing", "Section 5 (Rotation) is fine as written."),
			want: got{Conflicts: []string{"ISSUE-R2-002:SOFT_MATCH:MEDIUM"}, Submitted: 1},
		},
		{
			name: "no ID, no match: unmatched",
			out:  block("general", "I dislike the colour scheme."),
			want: got{Unmatched: 1, Submitted: 1},
		},
		{
			name: "informal heading",
			out:  "## Disagree: backup count\n\nWe keep one backup; backup rotation loses no data with fsync.\n",
			want: got{Conflicts: []string{"ISSUE-R2-002:SOFT_MATCH:MEDIUM"}, Submitted: 1},
		},
		{
			name: "Round 1 format, ID in the heading",
			out:  "## Response to ISSUE-R2-001\n\n**Reviewer Concern:** threshold\n\n**Engineer Position:** DISAGREE\n\n**Rationale:** 100 chars catches 99% of empty files.\n",
			want: got{Conflicts: []string{"ISSUE-R2-001:SOFT_MATCH:MEDIUM"}, Submitted: 1},
		},
		{
			name: "a topic heading mentioning DISAGREE is not a disagreement",
			out:  "## Gap Resolution: GAP-FLOW-006\n\n#### 3. DISAGREE Rate Limiting (Addressing ISSUE-R2-001)\n\nRate limits bound the error threshold of 100 chars.\n",
		},
		{
			name: "blocks in code are examples",
			out:  "```markdown\n" + block("ISSUE-R2-001", "x") + "```\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := DetectExplicit(ExplicitInput{Round: 3, EngineerOutput: tt.out, Issues: explicitIssues()})
			var g got
			for _, c := range res.Conflicts {
				g.Conflicts = append(g.Conflicts, c.IssueID+":"+string(c.Source)+":"+string(c.MatchConfidence))
				if c.Source == sourceSoftMatch && !strings.Contains(present(c), "soft matching") {
					t.Errorf("soft match presented without its note")
				}
			}
			for _, d := range res.Logged {
				g.Logged = append(g.Logged, d.IssueID)
			}
			g.Unmatched, g.Submitted = len(res.Unmatched), res.Submitted
			if diff := cmp.Diff(tt.want, g); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDetectExplicitUsesGivenDisagreements(t *testing.T) {
	// The engine may pass validate's parsed blocks; the output is then
	// read only for informal disagreements.
	res := DetectExplicit(ExplicitInput{
		Round:         3,
		disagreements: []Disagreement{{IssueID: "ISSUE-R2-001", EngineerPosition: "Keep it.", Rationale: "Simple."}},
		Issues:        explicitIssues(),
		At:            mustTime(t, "2026-01-12T10:00:00Z"),
	})
	if len(res.Conflicts) != 1 {
		t.Fatalf("conflicts = %+v", res.Conflicts)
	}
	c := res.Conflicts[0]
	if c.EngineerPosition != "Keep it." || c.EngineerRationale != "Simple." || c.Round != 3 || c.DetectedAt.IsZero() || c.Subject != "Error threshold of 100 chars is arbitrary" {
		t.Errorf("conflict = %+v", c)
	}
}

// A DISAGREE block naming an earlier round's issue by ID is a conflict
// with it (validation accepts any issue of the session); soft matching
// stays with the issues answered.
func TestDetectExplicitEarlierIssue(t *testing.T) {
	earlier := Issue{ID: "ISSUE-R1-001", Round: 1, Severity: gap.High, Gap: "GAP-TEST-001", Summary: "retry bound unspecified"}
	current := Issue{ID: "ISSUE-R2-001", Round: 2, Severity: gap.Medium, Gap: "GAP-TEST-002", Summary: "glossary wording"}
	out := "## DISAGREE: ISSUE-R1-001\n\n**Reviewer Concern:**\n> retry bound unspecified\n\n**Engineer Position:**\nThe bound belongs to the host.\n\n**Rationale:**\nHosts differ.\n\n**Request:** Escalate to user for resolution\n"
	res := DetectExplicit(ExplicitInput{Round: 3, EngineerOutput: out, Issues: []Issue{current}, Earlier: []Issue{earlier}})
	if len(res.Conflicts) != 1 || res.Conflicts[0].IssueID != "ISSUE-R1-001" || len(res.Unmatched) != 0 {
		t.Fatalf("conflicts %+v, unmatched %+v; want one conflict with ISSUE-R1-001", res.Conflicts, res.Unmatched)
	}
	without := DetectExplicit(ExplicitInput{Round: 3, EngineerOutput: out, Issues: []Issue{current}})
	if len(without.Conflicts) == 1 && without.Conflicts[0].IssueID == "ISSUE-R1-001" {
		t.Errorf("without Earlier the old issue was matched: %+v", without.Conflicts)
	}
}
