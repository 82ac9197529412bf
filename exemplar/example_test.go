package exemplar_test

import (
	"fmt"
	"strings"

	"github.com/refine-spec/refine/exemplar"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/validate"
)

// A workflow spec whose Section 7 holds the canonical Engineer example.
const source = "# Workflow\n\n## 7. Examples\n\n```markdown\n---\nrole: engineer\n---\n" +
	"## Gap Resolution: GAP-XXX\n\n**Confidence:** HIGH | MEDIUM | LOW\n\n### Proposed Solution\n[1-3 paragraphs]\n```\n"

// A retry after WRONG_FORMAT: the canonical example is chosen, fitted to the
// retry budget and laid out in front of the original prompt.
func Example() {
	canonical, err := exemplar.ExtractCanonical(source)
	if err != nil {
		fmt.Println("tier 1 incomplete:", err) // logged; selection falls through
	}
	sel := exemplar.Select(exemplar.Request{
		Role:         gap.Engineer,
		FailureType:  validate.WrongFormat,
		CurrentRound: 3,
		Gaps:         []gap.ID{"GAP-FLOW-001"},
		Canonical:    canonical,
		CanonicalErr: err,
		Budget:       exemplar.RetryBudget,
	})
	fmt.Println(sel.Source, "/", sel.Tokens, "tokens")

	modification := "FORMAT CORRECTION REQUIRED:\n\nYour previous output did not follow the required structure."
	fmt.Println(exemplar.RetryPrompt("Address GAP-FLOW-001.", modification, sel.Description, sel.Text, 1, 2))

	entry := exemplar.NewLogEntry(3, gap.Engineer, 1, validate.WrongFormat, sel)
	entry.Outcome = exemplar.OutcomeSuccess
	fmt.Print(exemplar.RenderLog([]exemplar.LogEntry{entry}))
	// Output:
	// tier 1 incomplete: exemplar: canonical reviewer example: no example block: section "7. Examples" holds no "## Review:" block (line 3)
	// Tier 1 Canonical (workflow spec Section 7) / 26 tokens
	// ═══════════════════════════════════════════════════════════════════════════════
	//                          RETRY ATTEMPT 1 of 2
	// ═══════════════════════════════════════════════════════════════════════════════
	//
	// FORMAT CORRECTION REQUIRED:
	//
	// Your previous output did not follow the required structure.
	//
	// ───────────────────────────────────────────────────────────────────────────────
	//                               EXAMPLE OUTPUT
	// Source: Canonical example - note required headers
	// ───────────────────────────────────────────────────────────────────────────────
	//
	// ## Gap Resolution: GAP-XXX
	//
	// **Confidence:** HIGH | MEDIUM | LOW
	//
	// ### Proposed Solution
	// [1-3 paragraphs]
	//
	// ═══════════════════════════════════════════════════════════════════════════════
	//
	// Address GAP-FLOW-001.
	// ## Example Attachment Log
	//
	// ### Round 3 - Engineer Retry 1
	// - **Failure Type:** WRONG_FORMAT
	// - **Example Source:** Tier 1 (Canonical from workflow spec)
	// - **Example Size:** 103 chars (26 tokens)
	// - **Truncated:** No
	// - **Retry Outcome:** Success
	//
	// ### Example Source Statistics
	// | Source | Uses | Success Rate |
	// |--------|------|--------------|
	// | Tier 1 (Canonical) | 1 | 100% |
	// | Tier 2 (Session) | 0 | - |
	// | Tier 3 (Template) | 0 | - |
}

// Structural truncation keeps the resolution header and the priority
// sections that fit, abbreviating the first that does not.
func ExampleTruncate() {
	output := "## Gap Resolution: GAP-FLOW-002\n\n**Confidence:** HIGH\n\n" +
		"### Proposed Solution\n\nA convergence tracker measures gap delta per round.\n\n" + strings.Repeat("Detail. ", 40) + "\n\n" +
		"### Trade-offs\n\n- Objective\n"
	t := exemplar.Truncate(output, 52, nil)
	fmt.Printf("%s, %d of %d tokens:\n%s\n", t.Kind, t.Tokens, t.OriginalTokens, t.Text)
	// Output:
	// structural, 51 of 121 tokens:
	// ## Gap Resolution: GAP-FLOW-002
	//
	// **Confidence:** HIGH
	//
	// ### Proposed Solution
	//
	// A convergence tracker measures gap delta per round.
	//
	// [Example truncated for length - see canonical format for full structure]
}
