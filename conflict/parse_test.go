package conflict

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/refine-spec/refine/gap"
)

func TestParseDisagreements(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []Disagreement
	}{
		{
			name: "spec format",
			src: `## DISAGREE: ISSUE-R5-003

**Reviewer Concern:**
> "Retry mechanism should use exponential backoff.
> Implement 1s, 2s, 4s delays."

**Engineer Position:**
Backoff adds complexity.

**Rationale:**
Local file validation is fast.

More evidence.

**Alternative Approach (if any):**
Instant retries locally.

**Request:** Escalate to user for resolution
`,
			want: []Disagreement{{
				IssueID:          "ISSUE-R5-003",
				ReviewerConcern:  "\"Retry mechanism should use exponential backoff.\nImplement 1s, 2s, 4s delays.\"",
				EngineerPosition: "Backoff adds complexity.",
				Rationale:        "Local file validation is fast.\n\nMore evidence.",
				Alternative:      "Instant retries locally.",
				Line:             1,
			}},
		},
		{
			name: "inline values, colon outside bold, list markers, thematic break",
			src:  "# Round 6\n\n## DISAGREE: ISSUE-R5-003 (timing)\n\n- **Reviewer Concern:** > quoted\n**Engineer Position**: keep it\n**Rationale:** because\n\n---\n\nTrailing prose is not the rationale.\n",
			want: []Disagreement{{IssueID: "ISSUE-R5-003", ReviewerConcern: "quoted", EngineerPosition: "keep it", Rationale: "because", Line: 3}},
		},
		{
			name: "CRLF and two blocks",
			src:  "## DISAGREE: ISSUE-R1-001\r\n**Rationale:** a\r\n## DISAGREE: ISSUE-R1-002\r\n**Rationale:** b\r\n",
			want: []Disagreement{{IssueID: "ISSUE-R1-001", Rationale: "a", Line: 1}, {IssueID: "ISSUE-R1-002", Rationale: "b", Line: 3}},
		},
		{
			name: "no ID in the heading",
			src:  "## DISAGREE: retry timing\n**Rationale:** fast\n",
			want: []Disagreement{{Rationale: "fast", Line: 1}},
		},
		{
			name: "examples in code do not count",
			src:  "```markdown\n## DISAGREE: ISSUE-R1-001\n**Rationale:** x\n```\n\n## DISAGREE: `ISSUE-R1-002`\n",
			want: []Disagreement{{Line: 6}},
		},
		{
			name: "not DISAGREE headings",
			src:  "## Disagreements\n## DISAGREEMENT: ISSUE-R1-001\n## Response to ISSUE-R1-001\n#### 3. DISAGREE Rate Limiting\n",
		},
		{
			name: "label text inside code is content",
			src:  "## DISAGREE: ISSUE-R1-001\n**Rationale:** see\n`**Engineer Position:** not a label`\n",
			want: []Disagreement{{IssueID: "ISSUE-R1-001", Rationale: "see\n`**Engineer Position:** not a label`", Line: 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, parseEngineerDisagreements(tt.src)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestKeywords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Retry mechanism should use exponential backoff", []string{"backoff", "exponential", "mechanism", "retry"}},
		{"Implement 1s, 2s, 4s delays between retries", []string{"delays", "implement", "retries"}},
		{"context-aware http2 v2 UTF8 TTL", []string{"aware", "context", "http2"}},
		{"THIS that With which", []string{}},
		{"", []string{}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, keywords(tt.in)); diff != "" {
			t.Errorf("Keywords(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestMatchIssue(t *testing.T) {
	is := Issue{
		ID: "ISSUE-R2-001", Summary: "Error threshold of 100 chars is arbitrary",
		Suggestion: "Use schema-based validation", Location: "validate.go line 40",
	}
	// Summary keywords: arbitrary, chars, error, threshold.
	tests := []struct {
		name    string
		content string
		want    softMatch
	}{
		{"half the keywords", "The threshold for error output stays.", softMatch{Matched: true, Confidence: gap.ConfidenceMedium, Reason: softMatchReason, KeywordOverlap: 0.5}},
		{"a quarter", "The threshold stays.", softMatch{KeywordOverlap: 0.25}},
		{"quote of the suggestion", "We will not USE schema-based\nvalidation here.", softMatch{Matched: true, Confidence: gap.ConfidenceMedium, Reason: softMatchReason, QuoteFound: true}},
		{"location", "See validate.go, line 40.", softMatch{Matched: true, Confidence: gap.ConfidenceMedium, Reason: softMatchReason, LocationReferenced: true}},
		{"nothing", "Unrelated text.", softMatch{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, matchIssueText(tt.content, is)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	// An empty location or a one-word summary is no quote: the spec's
	// `"" in content` would match everything.
	if m := matchIssueText("anything at all", Issue{Summary: "Typo"}); m.Matched {
		t.Errorf("empty fields matched: %+v", m)
	}
}
