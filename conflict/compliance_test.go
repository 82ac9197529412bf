package conflict

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/gap"
)

func decided(option string) Ruling {
	return Ruling{
		ID: "DECISION-R5-001", Round: 5, IssueID: "ISSUE-R4-007", Subject: "Schema validation strictness",
		Type: explicit, Gap: "GAP-COMM-004", Severity: gap.Critical, ChosenOption: option,
		EngineerPosition: "Unknown fields should be passed through silently so that newer senders keep working.",
		Decision:         "Implement strict mode validation. Fail on unexpected keys.",
	}
}

func TestCheckCompliance(t *testing.T) {
	const reArgued = "Engineer re-argued ISSUE-R4-007 which was already resolved by user. " +
		`Decision DECISION-R5-001: Option A - "Implement strict mode validation. Fail on unexpected keys." (line %d). ` +
		"Honor the decision; note any new concern as a NEW gap, not as disagreement with the decided conflict."
	tests := []struct {
		name string
		out  string
		dec  Ruling
		want []Violation
	}{
		{
			name: "new DISAGREE block on a decided issue",
			out:  "## Gap Resolution: GAP-COMM-004\n\nStrict.\n\n" + block("ISSUE-R4-007", "Still lenient."),
			dec:  decided("A"),
			want: []Violation{{Kind: violationReArgued, IssueID: "ISSUE-R4-007", DecisionID: "DECISION-R5-001", Line: 5, Fatal: true, Message: sprintf(reArgued, 5)}},
		},
		{
			name: "DISAGREE: ISSUE-… in prose",
			out:  "## Gap Resolution: GAP-COMM-004\n\nWe DISAGREE:  ISSUE-R4-007 remains wrong.\n",
			dec:  decided("A"),
			want: []Violation{{Kind: violationReArgued, IssueID: "ISSUE-R4-007", DecisionID: "DECISION-R5-001", Line: 3, Fatal: true, Message: sprintf(reArgued, 3)}},
		},
		{
			name: "re-argued even when the user chose B",
			out:  block("ISSUE-R4-007", "x"),
			dec:  decided("B"),
			want: []Violation{{Kind: violationReArgued, IssueID: "ISSUE-R4-007", DecisionID: "DECISION-R5-001", Line: 1, Fatal: true,
				Message: "Engineer re-argued ISSUE-R4-007 which was already resolved by user. " +
					`Decision DECISION-R5-001: Option B - "Implement strict mode validation. Fail on unexpected keys." (line 1). ` +
					"Honor the decision; note any new concern as a NEW gap, not as disagreement with the decided conflict."}},
		},
		{
			name: "Round 1 format naming the issue",
			out:  "## Response to ISSUE-R4-007\n\n**Engineer Position:** DISAGREE\n\n**Rationale:** lenient is better.\n",
			dec:  decided("A"),
			want: []Violation{{Kind: violationReArgued, IssueID: "ISSUE-R4-007", DecisionID: "DECISION-R5-001", Line: 1, Fatal: true, Message: sprintf(reArgued, 1)}},
		},
		{
			name: "quoted in code: an example, not a re-argument",
			out:  "## Gap Resolution: GAP-COMM-004\n\n```\n## DISAGREE: ISSUE-R4-007\n```\n\nThe `DISAGREE: ISSUE-R4-007` form is gone.\n",
			dec:  decided("A"),
		},
		{
			name: "honoring the decision",
			out:  "## Gap Resolution: GAP-COMM-004\n\nPer the decision on ISSUE-R4-007, the parser now fails on unexpected keys.\n",
			dec:  decided("A"),
		},
		{
			name: "rejected position repeated: warning",
			out:  "## Gap Resolution: GAP-COMM-004\n\nUnknown fields are passed through silently, so newer senders keep working.\n",
			dec:  decided("A"),
			want: []Violation{{Kind: violationRepeatedPosition, IssueID: "ISSUE-R4-007", DecisionID: "DECISION-R5-001", Line: 3,
				Message: `Engineer may be proposing same position rejected in ISSUE-R4-007 (line 3). Decision DECISION-R5-001: Option A - "Implement strict mode validation. Fail on unexpected keys."`}},
		},
		{
			name: "position the user chose: no warning",
			out:  "## Gap Resolution: GAP-COMM-004\n\nUnknown fields are passed through silently, so newer senders keep working.\n",
			dec:  decided("B"),
		},
		{
			name: "waivers are not checked",
			out:  block("ISSUE-R4-007", "x"),
			dec:  Ruling{ID: "DECISION-R5-002", IssueID: "ISSUE-R4-007", ChosenOption: OptionWaive},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CheckCompliance(tt.out, []Ruling{tt.dec})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if CheckCompliance("anything", nil) != nil {
		t.Error("no decisions, yet violations")
	}
}
