package exemplar

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/validate"
)

// The four worked examples of GAP-FLOW-008 ("### Examples"). Where an
// example's wording and the spec's select_example_for_failure code differ,
// the code wins (see Example 1).

// exampleSource returns the "Source:" block of a retry prompt followed by
// the start of its example.
func exampleSource(desc, example string) string {
	return "Source: " + desc + "\n" + singleRule + "\n\n" + example
}

func TestWorkedExample1WrongFormatFirstRound(t *testing.T) {
	// Round 1, Engineer: 200 chars of prose without headers → WRONG_FORMAT.
	// Tier 1 exists (the workflow spec's Section 7): canonical attached.
	canonical, err := ExtractCanonical(workflowSpec())
	if err != nil {
		t.Fatal(err)
	}
	sel := Select(Request{Role: gap.Engineer, FailureType: validate.WrongFormat, CurrentRound: 1, Canonical: canonical, Budget: RetryBudget})
	if sel.Tier != TierCanonical || sel.Text != canonicalEngineer || sel.Notes != nil {
		t.Fatalf("got tier %d, notes %q, text %q", sel.Tier, sel.Notes, sel.Text)
	}
	// The example shows "Source: Canonical example from workflow spec"; the
	// code gives WRONG_FORMAT "Canonical example - note required headers".
	prompt := RetryPrompt("ORIGINAL", "FORMAT CORRECTION REQUIRED:", sel.Description, sel.Text, 1, 2)
	want := exampleSource("Canonical example - note required headers",
		"## Gap Resolution: GAP-XXX\n\n**Confidence:** HIGH | MEDIUM | LOW\n\n### Proposed Solution\n[1-3 paragraphs describing the solution]\n")
	if !strings.Contains(prompt, want) {
		t.Errorf("retry prompt lacks\n%s\ngot:\n%s", want, prompt)
	}
	entry := NewLogEntry(1, gap.Engineer, 1, validate.WrongFormat, sel)
	if entry.Source != "Tier 1 (Canonical from workflow spec)" || entry.Chars != utf8.RuneCountInString(canonicalEngineer) || entry.TruncatedFromChars != 0 {
		t.Errorf("log entry %+v", entry)
	}
}

func TestWorkedExample2NoGapsAddressedLaterRound(t *testing.T) {
	// Round 5, Engineer: 2,000 chars of general concepts → NO_GAPS_ADDRESSED.
	// Tier 1 exists but Tier 2 comes first: round 3 addressed 2 gaps.
	round3 := "## Gap Resolution: GAP-FLOW-002\n\n**Confidence:** HIGH\n\n### Proposed Solution\n\nGAP-FLOW-002 is resolved by a tracker; it also closes GAP-FLOW-003.\n\n" +
		"## Gap Resolution: GAP-FLOW-003\n\n**Confidence:** MEDIUM\n\n### Proposed Solution\n\nSee GAP-FLOW-002.\n"
	history := []HistoryItem{
		{Round: 1, Role: "engineer", Content: "## Gap Resolution: GAP-FLOW-001\n\nFirst try at GAP-FLOW-001.", LedToAccepted: true},
		{Round: 2, Role: "engineer", Content: "## Gap Resolution: GAP-FLOW-004\n\nText.", RolledBack: true, LedToAccepted: true},
		{Round: 3, Role: "engineer", Content: round3, LedToAccepted: true},
		{Round: 4, Role: "engineer", Content: "## Gap Resolution: GAP-FLOW-005\n\nText."},
		{Round: 3, Role: "reviewer", Content: "## Review: GAP-FLOW-002 GAP-FLOW-003 GAP-FLOW-002 GAP-FLOW-003 GAP-FLOW-002", LedToAccepted: true},
	}
	sel := Select(Request{Role: gap.Engineer, FailureType: validate.NoGapsAddressed, CurrentRound: 5,
		Gaps: []gap.ID{"GAP-FLOW-002", "GAP-FLOW-003"}, Canonical: Canonical{Engineer: canonicalEngineer}, History: history, Budget: RetryBudget})
	want := selView{
		Tier: TierSession, Source: "Tier 2 Session History (Round 3)", Description: "Example showing gap references in context",
		Text: "---\nExample from this session (Round 3):\nThis output successfully addressed GAP-FLOW-002, GAP-FLOW-003 and was approved by Reviewer.\n---\n\n" +
			strings.TrimSuffix(round3, "\n"),
		HistoryRound: 3,
		// Round 3: 7 references, capped at +10, +20 accepted = 30; round 1: 2
		// references +4, +20 = 24; round 4: 1 reference = 2.
		Notes: []string{"Tier 2: round 3 chosen (score 30, 3 candidate(s); ties go to the most recent round)"},
	}
	if diff := cmp.Diff(want, view(sel)); diff != "" {
		t.Fatalf("Select mismatch (-want +got):\n%s", diff)
	}
	prompt := RetryPrompt("ORIGINAL", "GAP REFERENCE REQUIRED:", sel.Description, sel.Text, 1, 2)
	if w := exampleSource("Example showing gap references in context", "---\nExample from this session (Round 3):\n"); !strings.Contains(prompt, w) {
		t.Errorf("retry prompt lacks %q:\n%s", w, prompt)
	}
}

// reviewFixture builds a Reviewer output like spec example 3's round 4: 22
// critical issues, then a High Priority list of three long issues, padded to
// exactly chars characters by the Medium Priority section.
func reviewFixture(chars int) (review, header, critical string, high []string) {
	header = "## Review: GAP-FLOW-001 through GAP-FLOW-007"
	var crit []string
	for i := 1; i <= 22; i++ {
		crit = append(crit, padTo(fmt.Sprintf("- **ISSUE-R4-%03d**: detail ", i), 280))
	}
	critical = "### Critical Issues\n\n" + strings.Join(crit, "\n")
	for i := 23; i <= 25; i++ {
		high = append(high, padTo(fmt.Sprintf("- **ISSUE-R4-%03d**: detail ", i), 650))
	}
	highSection := "### High Priority\n\n" + strings.Join(high, "\n")
	rest := "### Low Priority / Nits\n\nNone found.\n\n### Consistency Checks\n\n- [x] Consistent with existing architecture?"
	medium := "### Medium Priority\n\n"
	fixed := len(blocks(header, critical, highSection, medium, rest))
	review = blocks(header, critical, highSection, padTo(medium, len(medium)+chars-fixed), rest)
	return review, header, critical, high
}

func TestWorkedExample3TokenTruncation(t *testing.T) {
	// Round 7, Reviewer: 800 sparse chars → EMPTY_OUTPUT. No canonical
	// Reviewer example; Tier 2: round 4's excellent 8,500-char review, over
	// the 2,000-token budget: truncated structurally.
	review, header, critical, high := reviewFixture(8500)
	if n := utf8.RuneCountInString(review); n != 8500 {
		t.Fatalf("fixture is %d chars", n)
	}
	canonical, canonicalErr := ExtractCanonical("## 7. Examples\n\n```\n" + canonicalEngineer + "\n```\n")
	history := []HistoryItem{
		{Round: 2, Role: "reviewer", Content: padTo("## Review: GAP-FLOW-001\n\n### Critical Issues\n\nNone found.\n", 1000)},
		{Round: 4, Role: "reviewer", Content: review, LedToAccepted: true},
		{Round: 5, Role: "reviewer", Content: padTo("## Review: GAP-FLOW-003\n\n### Critical Issues\n\nNone found.\n", 1200)},
		{Round: 6, Role: "reviewer", Content: review, RolledBack: true, LedToAccepted: true},
	}
	sel := Select(Request{Role: gap.Reviewer, FailureType: validate.EmptyOutput, CurrentRound: 7, Canonical: canonical,
		CanonicalErr: canonicalErr, History: history, Budget: RetryBudget})

	provenance := "---\nExample from this session (Round 4):\nThis review of GAP-FLOW-001 through GAP-FLOW-007 passed Mediator validation and led to ACCEPTED gaps.\n---"
	// Headers and Critical Issues whole; High Priority abbreviated to its
	// first 2 issues ("[First 2 issues only]"); the rest dropped.
	wantText := blocks(provenance, header, critical, "### High Priority\n\n"+high[0]+"\n"+high[1], StructuralNotice)
	want := selView{
		Tier: TierSession, Source: "Tier 2 Session History (Round 4)", Description: "Successful output from previous round",
		Text: wantText, HistoryRound: 4,
		Notes: []string{
			`Tier 1 miss: exemplar: canonical reviewer example: no example block: section "7. Examples" holds no "## Review:" block (line 1)`,
			"Tier 2: round 4 chosen (score 22, 3 candidate(s); ties go to the most recent round)",
			fmt.Sprintf("truncated (structural) from %s to %s tokens (budget 2,000)",
				thousands(CharTokenizer{}.Count(provenance+"\n\n"+review)), thousands(CharTokenizer{}.Count(wantText))),
		},
	}
	if diff := cmp.Diff(want, view(sel)); diff != "" {
		t.Fatalf("Select mismatch (-want +got):\n%s", diff)
	}
	if sel.Tokens > RetryBudget || sel.Truncation != TruncatedStructurally || sel.TruncatedFromChars != utf8.RuneCountInString(provenance)+2+8500 {
		t.Errorf("sizes: %d tokens, %v, from %d chars", sel.Tokens, sel.Truncation, sel.TruncatedFromChars)
	}
	// Adding the third issue would break the budget: the cut is the longest.
	if longer := strings.Replace(wantText, high[1], high[1]+"\n"+high[2], 1); (CharTokenizer{}).Count(longer) <= RetryBudget {
		t.Errorf("a third High Priority issue would have fitted")
	}
	entry := NewLogEntry(7, gap.Reviewer, 1, validate.EmptyOutput, sel)
	if entry.Source != "Tier 2 (Round 4 reviewer.md)" || entry.TruncatedFromChars != sel.TruncatedFromChars {
		t.Errorf("log entry %+v", entry)
	}
}

func TestWorkedExample4TemplateFallback(t *testing.T) {
	// Round 1 of a new session, Engineer: garbled output → WRONG_FORMAT.
	// source.md not loaded (no Tier 1), no earlier rounds: the template.
	sel := Select(Request{Role: gap.Engineer, FailureType: validate.WrongFormat, CurrentRound: 1, Budget: RetryBudget})
	want := selView{
		Tier: TierTemplate, Source: SourceTemplate, Description: "Structural template - follow this format exactly",
		Text: EngineerTemplate,
		Notes: []string{
			"Tier 1 miss: no canonical engineer example supplied (source not loaded, or its Section 7 has none)",
			"Tier 2 not consulted: WRONG_FORMAT takes Tier 1 > Tier 3 (structure, not session context)",
		},
	}
	if diff := cmp.Diff(want, view(sel)); diff != "" {
		t.Fatalf("Select mismatch (-want +got):\n%s", diff)
	}
	prompt := RetryPrompt("ORIGINAL", "FORMAT CORRECTION REQUIRED:", sel.Description, sel.Text, 1, 2)
	w := exampleSource("Structural template - follow this format exactly",
		"## Gap Resolution: [GAP-ID]\n\n**Confidence:** [HIGH | MEDIUM | LOW]\n\n### Proposed Solution\n\n[Describe your solution here. Be specific and concrete.]\n")
	if !strings.Contains(prompt, w) {
		t.Errorf("retry prompt lacks\n%s\ngot:\n%s", w, prompt)
	}
}

// TestTemplatesMatchSpec reads the templates out of the spec, so the
// compiled-in copies cannot drift from it.
func TestTemplatesMatchSpec(t *testing.T) {
	spec := readSpec(t, "round-07-example-attachment.md")
	for _, tt := range []struct{ marker, want string }{
		{"**Engineer Template:**\n\n```markdown\n", EngineerTemplate},
		{"**Reviewer Template:**\n\n```markdown\n", ReviewerTemplate},
	} {
		i := strings.Index(spec, tt.marker)
		if i < 0 {
			t.Fatalf("%q not found in the spec", tt.marker)
		}
		body := spec[i+len(tt.marker):]
		body = body[:strings.Index(body, "\n```")]
		if diff := cmp.Diff(body, tt.want); diff != "" {
			t.Errorf("template differs from the spec (-spec +ours):\n%s", diff)
		}
	}
}
