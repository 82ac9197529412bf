package conflict

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/gap"
)

func TestSynthesize(t *testing.T) {
	tests := []struct {
		name      string
		summary   string
		position  string
		rationale string
		want      Synthesis
		ok        bool
	}{
		{"pattern 1: complexity", "Retries need backoff", "", "Adds complexity for little gain.", Synthesis{
			Proposal: "Implement add strict mode as optional/configurable, with simpler default", TradeOff: "Partial complexity for flexibility", AddressesBoth: true}, true},
		{"pattern 1 in the position", "Retries need backoff", "Too much Complexity.", "", Synthesis{
			Proposal: "Implement add strict mode as optional/configurable, with simpler default", TradeOff: "Partial complexity for flexibility", AddressesBoth: true}, true},
		{"pattern 2: threshold", "Error threshold is arbitrary", "", "It works.", Synthesis{
			Proposal: "Make threshold configurable with default matching Reviewer's suggestion", TradeOff: "Configuration complexity for correctness", AddressesBoth: true}, true},
		{"pattern 2: limit", "Retry limit too low", "", "", Synthesis{
			Proposal: "Make threshold configurable with default matching Reviewer's suggestion", TradeOff: "Configuration complexity for correctness", AddressesBoth: true}, true},
		{"pattern 3: out of scope", "Add metrics", "", "This is Out Of Scope for v1.", Synthesis{
			Proposal: "Defer to v2 with explicit placeholder in spec", TradeOff: "Delayed implementation"}, true},
		{"pattern 1 wins over 3", "Add metrics", "", "complexity, and out of scope", Synthesis{
			Proposal: "Implement add strict mode as optional/configurable, with simpler default", TradeOff: "Partial complexity for flexibility", AddressesBoth: true}, true},
		{"no pattern", "Add metrics", "No.", "Not needed.", Synthesis{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := synthesize(Issue{Summary: tt.summary, Suggestion: "Add strict mode."}, tt.position, tt.rationale)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSuggestionClause(t *testing.T) {
	for in, want := range map[string]string{
		"Implement 1s, 2s, 4s delays between retries": "1s, 2s, 4s delays between retries",
		"Add strict mode validation.":                 "add strict mode validation",
		"TTL of one hour":                             "TTL of one hour",
		"":                                            "",
	} {
		if got := suggestionClause(in); got != want {
			t.Errorf("suggestionClause(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestGenerateOptions(t *testing.T) {
	tests := []struct {
		name      string
		sev       gap.Severity
		typ       Type
		rationale string
		syn       *Synthesis
		keys      []string
		rec       []string
	}{
		{"HIGH, no synthesis: A B, none recommended", gap.High, explicit, "It is fine.", nil, []string{"A", "B"}, nil},
		{"HIGH with synthesis: still none recommended", gap.High, explicit, "Adds complexity.", nil, []string{"A", "B", "C"}, nil},
		{"CRITICAL: A recommended, D offered", gap.Critical, explicit, "It is fine.", nil, []string{"A", "B", "D"}, []string{"A"}},
		{"CRITICAL, safety argument, synthesis for both: C", gap.Critical, explicit, "The Reviewer's approach risks data loss; adds complexity.", nil, []string{"A", "B", "C", "D"}, []string{"C"}},
		{"CRITICAL, correctness argument, no synthesis: none", gap.Critical, explicit, "Correctness suffers.", nil, []string{"A", "B", "D"}, nil},
		{"MEDIUM, synthesis for both: C", gap.Medium, explicit, "complexity", nil, []string{"A", "B", "C"}, []string{"C"}},
		{"LOW: the Engineer's position (§7: may auto-resolve to Engineer)", gap.Low, explicit, "out of scope", nil, []string{"A", "B", "C"}, []string{"B"}},
		{"host synthesis replaces patterns", gap.Medium, explicit, "It is fine.", &Synthesis{Proposal: "Both.", TradeOff: "t", AddressesBoth: true}, []string{"A", "B", "C"}, []string{"C"}},
		{"implicit CRITICAL: A recommended", gap.Critical, implicitConverted, "", nil, []string{"A", "B", "D"}, []string{"A"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Conflict{
				IssueID: "ISSUE-R1-001", Type: tt.typ,
				Issue:             Issue{ID: "ISSUE-R1-001", Severity: tt.sev, Summary: "Add metrics", Suggestion: "Export counters", Impact: "Blind operators"},
				EngineerPosition:  "Not now.",
				EngineerRationale: tt.rationale,
				Synthesis:         tt.syn,
			}
			opts := generateOptions(c)
			if diff := cmp.Diff(tt.keys, keys(opts)); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.rec, recommendedKeys(opts)); diff != "" {
				t.Errorf("recommended (-want +got):\n%s", diff)
			}
			if len(opts) < 2 || len(opts) > 4 {
				t.Errorf("%d options, want 2 to 4", len(opts))
			}
			if opts[0].Description != "Export counters" || opts[1].TradeOff != "May leave unaddressed: Blind operators" {
				t.Errorf("A/B = %+v / %+v", opts[0], opts[1])
			}
		})
	}
}
