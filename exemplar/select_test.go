package exemplar

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/validate"
)

// selView is the part of a Selection the mapping decides.
type selView struct {
	Tier         int
	Source       string
	Description  string
	Text         string
	HistoryRound int
	Notes        []string
}

func view(s Selection) selView {
	return selView{s.Tier, s.Source, s.Description, s.Text, s.HistoryRound, s.Notes}
}

const (
	sessionEngineer   = "## Gap Resolution: GAP-FLOW-001\n\nGAP-FLOW-001 is solved by a tracker."
	sessionProvenance = "---\nExample from this session (Round 2):\nThis output successfully addressed GAP-FLOW-001 and was approved by Reviewer.\n---"
	gapsForReference  = "Gap list for reference (address gaps by these IDs):\n- GAP-FLOW-001\n- GAP-FLOW-002"
	validGaps         = "Valid gap IDs for this session (reference only these):\n- GAP-FLOW-001\n- GAP-FLOW-002"

	noteTier1Miss = "Tier 1 miss: no canonical engineer example supplied (source not loaded, or its Section 7 has none)"
	noteTier2Miss = "Tier 2 miss: no validated engineer output from an earlier round"
	noteTier2Hit  = "Tier 2: round 2 chosen (score 20, 1 candidate(s); ties go to the most recent round)"
	noteTier2Gaps = "Tier 2: round 2 chosen (score 24, 1 candidate(s); ties go to the most recent round)" // +2 per reference
	noteNoSession = "Tier 2 not consulted: WRONG_FORMAT takes Tier 1 > Tier 3 (structure, not session context)"
	noteNoCanon   = "Tier 1 not consulted: INCONSISTENT_REFS takes the gap list with a session example, else a template"
)

// TestSelectMapping covers every row of the failure-type table (GAP-FLOW-008
// §5) with each tier available or not.
func TestSelectMapping(t *testing.T) {
	canonical := Canonical{Engineer: canonicalEngineer, Reviewer: canonicalReviewer}
	history := []HistoryItem{
		{Round: 2, Role: "engineer", Content: sessionEngineer, LedToAccepted: true},
		{Round: 2, Role: "reviewer", Content: "## Review: GAP-FLOW-001\n\nNO_ISSUES_FOUND"},
	}
	session := sessionProvenance + "\n\n" + sessionEngineer
	tests := []struct {
		name        string
		role        gap.Role
		failure     validate.FailureType
		noCanonical bool
		noHistory   bool
		want        selView
	}{
		{
			name: "FILE_MISSING: no example", failure: validate.MissingFile,
			want: selView{Tier: TierNone, Source: SourceNone, Description: "No example attached - file creation issue",
				Notes: []string{"FILE_MISSING: no example helps with a file creation issue"}},
		},
		{
			name: "EMPTY_OUTPUT: Tier 1 first", failure: validate.EmptyOutput,
			want: selView{Tier: TierCanonical, Source: SourceCanonical, Description: "Canonical example from workflow spec", Text: canonicalEngineer},
		},
		{
			name: "EMPTY_OUTPUT: then Tier 2", failure: validate.EmptyOutput, noCanonical: true,
			want: selView{Tier: TierSession, Source: "Tier 2 Session History (Round 2)", Description: "Successful output from previous round",
				Text: session, HistoryRound: 2, Notes: []string{noteTier1Miss, noteTier2Hit}},
		},
		{
			name: "EMPTY_OUTPUT: then Tier 3", failure: validate.EmptyOutput, noCanonical: true, noHistory: true,
			want: selView{Tier: TierTemplate, Source: SourceTemplate, Description: "Structural template", Text: EngineerTemplate,
				Notes: []string{noteTier1Miss, noteTier2Miss}},
		},
		{
			name: "WRONG_FORMAT: Tier 1", failure: validate.WrongFormat,
			want: selView{Tier: TierCanonical, Source: SourceCanonical, Description: "Canonical example - note required headers", Text: canonicalEngineer},
		},
		{
			name: "WRONG_FORMAT: Tier 3, session history not used", failure: validate.WrongFormat, noCanonical: true,
			want: selView{Tier: TierTemplate, Source: SourceTemplate, Description: "Structural template - follow this format exactly", Text: EngineerTemplate,
				Notes: []string{noteTier1Miss, noteNoSession}},
		},
		{
			name: "TRUNCATED: Tier 1, said to be complete and concise", failure: validate.Truncated,
			want: selView{Tier: TierCanonical, Source: SourceCanonical, Description: "Canonical example - complete and concise", Text: canonicalEngineer},
		},
		{
			name: "REFUSAL: Tier 1", failure: validate.Refusal,
			want: selView{Tier: TierCanonical, Source: SourceCanonical, Description: "Canonical example - the answer expected", Text: canonicalEngineer},
		},
		{
			name: "CLARIFICATION: Tier 1", role: gap.Reviewer, failure: validate.Clarification,
			want: selView{Tier: TierCanonical, Source: SourceCanonical, Description: "Canonical example - answer, do not ask", Text: canonicalReviewer},
		},
		{
			name: "AMBIGUOUS_STRUCTURE: Tier 3 as WRONG_FORMAT", failure: validate.AmbiguousStructure, noCanonical: true,
			want: selView{Tier: TierTemplate, Source: SourceTemplate, Description: "Structural template - follow this format exactly", Text: EngineerTemplate,
				Notes: []string{noteTier1Miss, "Tier 2 not consulted: AMBIGUOUS_STRUCTURE takes Tier 1 > Tier 3 (structure, not session context)"}},
		},
		{
			name: "WRONG_FORMAT: reviewer", role: gap.Reviewer, failure: validate.WrongFormat,
			want: selView{Tier: TierCanonical, Source: SourceCanonical, Description: "Canonical example - note required headers", Text: canonicalReviewer},
		},
		{
			name: "NO_GAPS_ADDRESSED: Tier 2 before Tier 1", failure: validate.NoGapsAddressed,
			want: selView{Tier: TierSession, Source: "Tier 2 Session History (Round 2)", Description: "Example showing gap references in context",
				Text: session, HistoryRound: 2, Notes: []string{noteTier2Gaps}},
		},
		{
			name: "NO_GAPS_ADDRESSED: Tier 1 with the gap list", failure: validate.NoGapsAddressed, noHistory: true,
			want: selView{Tier: TierCanonical, Source: SourceCanonical, Description: "Canonical example + gap list for reference",
				Text: canonicalEngineer + "\n\n" + gapsForReference, Notes: []string{noteTier2Miss}},
		},
		{
			name: "NO_GAPS_ADDRESSED: Tier 3", failure: validate.NoGapsAddressed, noCanonical: true, noHistory: true,
			want: selView{Tier: TierTemplate, Source: SourceTemplate, Description: "Structural template", Text: EngineerTemplate,
				Notes: []string{noteTier2Miss, noteTier1Miss}},
		},
		{
			name: "INCONSISTENT_REFS: gap list + session example", failure: validate.InconsistentRefs,
			want: selView{Tier: TierSession, Source: "Tier 2 Session History (Round 2)", Description: "Valid gap list + successful example",
				Text: validGaps + "\n\n" + session, HistoryRound: 2, Notes: []string{noteTier2Hit}},
		},
		{
			name: "INCONSISTENT_REFS: gap list + template, never Tier 1", failure: validate.InconsistentRefs, noHistory: true,
			want: selView{Tier: TierTemplate, Source: SourceTemplate, Description: "Valid gap list + template",
				Text: validGaps + "\n\n" + EngineerTemplate, Notes: []string{noteTier2Miss, noteNoCanon}},
		},
		{
			name: "other failure types: default template", failure: "THIN_CONTENT",
			want: selView{Tier: TierTemplate, Source: SourceTemplate, Description: "Default template", Text: EngineerTemplate,
				Notes: []string{`"THIN_CONTENT" has no example mapping: default template`}},
		},
		{
			name: "failure type and role are case-insensitive", role: " Reviewer ", failure: "empty_output",
			want: selView{Tier: TierCanonical, Source: SourceCanonical, Description: "Canonical example from workflow spec", Text: canonicalReviewer},
		},
		{
			name: "unknown role: nothing to attach", role: "architect", failure: validate.WrongFormat,
			want: selView{Tier: TierNone, Source: SourceNone, Description: "No example attached - unknown role",
				Notes: []string{
					"Tier 1 miss: no canonical architect example supplied (source not loaded, or its Section 7 has none)",
					noteNoSession,
					`Tier 3 miss: no template for role "architect"`,
				}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := Request{
				Role: cmpOr(tt.role, gap.Engineer), FailureType: tt.failure, CurrentRound: 3,
				Gaps: []gap.ID{"GAP-FLOW-001", "GAP-FLOW-002", "GAP-FLOW-001"}, Canonical: canonical, History: history,
				Budget: RetryBudget,
			}
			if tt.noCanonical {
				req.Canonical = Canonical{}
			}
			if tt.noHistory {
				req.History = nil
			}
			got := Select(req)
			if diff := cmp.Diff(tt.want, view(got)); diff != "" {
				t.Errorf("Select mismatch (-want +got):\n%s", diff)
			}
			if got.Chars != utf8.RuneCountInString(got.Text) || got.Tokens != (CharTokenizer{}).Count(got.Text) ||
				got.TruncatedFromTokens != 0 || got.Truncation != Untruncated {
				t.Errorf("sizes: %d chars, %d tokens, truncated from %d (%v)", got.Chars, got.Tokens, got.TruncatedFromTokens, got.Truncation)
			}
		})
	}
}

func cmpOr[T ~string](s, fallback T) T {
	if s == "" {
		return fallback
	}
	return s
}

func TestSelectWithoutGapList(t *testing.T) {
	for _, failure := range []validate.FailureType{validate.NoGapsAddressed, validate.InconsistentRefs} {
		got := Select(Request{Role: gap.Engineer, FailureType: failure, CurrentRound: 2,
			Canonical: Canonical{Engineer: canonicalEngineer}, Budget: RetryBudget})
		if strings.Contains(got.Text, "Gap list") || strings.Contains(got.Text, "Valid gap IDs") || got.Text == "" {
			t.Errorf("%s: text %q should be the example without a gap list", failure, got.Text)
		}
		if !strings.Contains(strings.Join(got.Notes, "\n"), "no valid gap list supplied") {
			t.Errorf("%s: notes %q do not record the missing gap list", failure, got.Notes)
		}
	}
}

func TestSelectBudget(t *testing.T) {
	req := Request{Role: gap.Engineer, FailureType: validate.WrongFormat, Canonical: Canonical{Engineer: canonicalEngineer}}
	for _, budget := range []int{0, -5} {
		req.Budget = budget
		got := Select(req)
		want := Selection{
			Tier: TierCanonical, Source: SourceCanonical, Description: "Canonical example - note required headers",
			TruncatedFromTokens: CharTokenizer{}.Count(canonicalEngineer), TruncatedFromChars: utf8.RuneCountInString(canonicalEngineer),
			Truncation: TruncatedHard,
			Notes:      []string{"budget " + itoaTest(budget) + " tokens: example dropped"},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("budget %d mismatch (-want +got):\n%s", budget, diff)
		}
	}
	// A budget that cuts the example is reported in sizes and notes.
	req.Budget = 50
	got := Select(req)
	if orig := (CharTokenizer{}).Count(canonicalEngineer); got.Tokens > 50 || got.Truncation != TruncatedStructurally || got.TruncatedFromTokens != orig {
		t.Errorf("budget 50: %d tokens, %v, from %d", got.Tokens, got.Truncation, got.TruncatedFromTokens)
	}
	if want := "truncated (structural) from 88 to " + itoaTest(got.Tokens) + " tokens (budget 50)"; got.Notes[len(got.Notes)-1] != want {
		t.Errorf("note %q, want %q", got.Notes[len(got.Notes)-1], want)
	}
}

func itoaTest(n int) string { return thousands(n) }

func TestSelectQuotesExtractionError(t *testing.T) {
	src := "## 7. Examples\n\n```\n" + canonicalEngineer + "\n```\n\n```\n## Review: X\n```\n"
	c, err := ExtractCanonical(src)
	if err == nil || c.Engineer == "" {
		t.Fatalf("fixture: got %+v, %v", c, err)
	}
	tests := []struct {
		name string
		role gap.Role
		err  error
		want string
	}{
		{"the role's own reason", gap.Reviewer, err,
			`Tier 1 miss: exemplar: canonical reviewer example: malformed example: the "## Review:" block has nothing under its heading (line 28)`},
		{"a reason for both roles", gap.Reviewer, &ExtractError{Err: ErrNoExamplesSection}, "Tier 1 miss: exemplar: no examples section"},
		{"a reason about the other role only", gap.Reviewer, &ExtractError{Role: gap.Engineer, Err: ErrNoExamples},
			"Tier 1 miss: no canonical reviewer example supplied (source not loaded, or its Section 7 has none)"},
		{"the host's own error", gap.Reviewer, errors.New("source.md: not found"),
			"Tier 1 miss: no canonical reviewer example supplied (source not loaded, or its Section 7 has none): source.md: not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Select(Request{Role: tt.role, FailureType: validate.WrongFormat, Canonical: c, CanonicalErr: tt.err, Budget: RetryBudget})
			if got.Tier != TierTemplate || len(got.Notes) == 0 || got.Notes[0] != tt.want {
				t.Errorf("tier %d, notes %q; want Tier 3 with first note %q", got.Tier, got.Notes, tt.want)
			}
		})
	}
}

func TestSelectInitial(t *testing.T) {
	tests := []struct {
		name      string
		role      gap.Role
		canonical Canonical
		want      selView
	}{
		{"canonical", gap.Engineer, Canonical{Engineer: canonicalEngineer},
			selView{Tier: TierCanonical, Source: SourceCanonical, Description: "Canonical example from workflow spec", Text: canonicalEngineer}},
		{"template", gap.Reviewer, Canonical{Engineer: canonicalEngineer},
			selView{Tier: TierTemplate, Source: SourceTemplate, Description: "Structural template", Text: ReviewerTemplate,
				Notes: []string{"Tier 1 miss: no canonical reviewer example supplied (source not loaded, or its Section 7 has none)"}}},
		{"unknown role", "", Canonical{},
			selView{Tier: TierNone, Source: SourceNone, Description: "No example attached - unknown role",
				Notes: []string{"Tier 1 miss: no canonical  example supplied (source not loaded, or its Section 7 has none)", `Tier 3 miss: no template for role ""`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SelectInitial(Request{Role: tt.role, FailureType: validate.MissingFile, Canonical: tt.canonical, Budget: InitialBudget,
				History: []HistoryItem{{Round: 1, Role: tt.role, Content: "ignored"}}, CurrentRound: 2})
			if diff := cmp.Diff(tt.want, view(got)); diff != "" {
				t.Errorf("SelectInitial mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSelectUsesTheRequestTokenizer(t *testing.T) {
	sel := Select(Request{Role: gap.Engineer, FailureType: validate.EmptyOutput, Canonical: Canonical{Engineer: canonicalEngineer},
		Budget: 30, Tokenizer: wordTokenizer{}})
	words := wordTokenizer{}.Count(sel.Text)
	if sel.Tokens != words || words > 30 || sel.Truncation != TruncatedStructurally ||
		sel.TruncatedFromTokens != (wordTokenizer{}).Count(canonicalEngineer) {
		t.Errorf("tokens %d (text has %d words), %v from %d; want ≤ 30 words counted by the request's tokenizer",
			sel.Tokens, words, sel.Truncation, sel.TruncatedFromTokens)
	}
}
