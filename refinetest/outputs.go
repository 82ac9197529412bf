package refinetest

import (
	"fmt"
	"strings"

	"github.com/refine-spec/refine/gap"
)

// The builders below write role outputs that refine's validators accept,
// so a host's test can script an Engineer or a Reviewer without copying the
// output format. Each returns markdown as an LLM would write it.

// EngineerOutput returns a valid Engineer output with one "## Gap
// Resolution:" section per gap (Confidence, Proposed Solution, Examples,
// Trade-offs, New Gaps Introduced), each concrete enough to pass the
// content checks.
func EngineerOutput(gaps ...gap.ID) string {
	var b strings.Builder
	b.WriteString("# Engineer Proposals\n\n")
	for _, id := range gaps {
		b.WriteString(resolution(id, "", ""))
	}
	return b.String()
}

// Revision returns a valid Engineer output that revises gap in answer to
// issue: a "### Response to ISSUE-…" paragraph that names the issue and
// repeats its suggestion, so the implicit-disagreement checks see the
// issue addressed. suggestion may be empty.
func Revision(id gap.ID, issue, suggestion string) string {
	if suggestion == "" {
		suggestion = "make the behaviour explicit"
	}
	resp := fmt.Sprintf("### Response to %s\n\n%s asked us to %s. We now do: the revised solution below states it\nexplicitly, with its bound and its failure behaviour.\n\n", issue, issue, suggestion)
	return "# Engineer Proposals\n\n" + resolution(id, " (Revised)", resp)
}

// NewGap returns an Engineer output resolving gaps that also introduces a
// new gap under "### New Gaps Introduced".
func NewGap(newID gap.ID, sev gap.Severity, title string, gaps ...gap.ID) string {
	out := EngineerOutput(gaps...)
	entry := fmt.Sprintf("- %s (%s): %s\n", newID, sev, title)
	if i := strings.LastIndex(out, "- None\n"); i >= 0 {
		return out[:i] + entry + out[i+len("- None\n"):]
	}
	return out
}

// Disagree returns a "## DISAGREE:" block in the format the Mediator
// parses: the Reviewer's concern quoted, the Engineer's position and
// rationale, and the request to escalate. Append it to an Engineer output.
func Disagree(issue, concern, position string) string {
	if position == "" {
		position = "The current proposal stands; the change asked for over-constrains implementations."
	}
	return fmt.Sprintf(`## DISAGREE: %s

**Reviewer Concern:**
> %s

**Engineer Position:**
%s

**Rationale:**
Different hosts have different failure profiles, and the trade-off is theirs to make.

**Request:** Escalate to user for resolution
`, issue, concern, position)
}

// Issue is one Reviewer finding for ReviewerOutput.
type Issue struct {
	Severity gap.Severity
	// Gap the issue is against; the first reviewed gap when empty.
	Gap gap.ID
	// Summary is the one-line finding.
	Summary string
	// Suggestion is what the Reviewer asks for; a default when empty.
	Suggestion string
}

// ReviewerOutput returns a valid Reviewer output for round reviewing the
// reviewed gaps ("## Review: GAP-A-001, GAP-A-002"), with the issues
// numbered ISSUE-R{round}-001, -002, … in the order given, each under its
// severity's section. No issues gives the NO_ISSUES_FOUND form with the
// completeness checklist (verdict APPROVE).
func ReviewerOutput(round int, reviewed []gap.ID, issues ...Issue) string {
	header := make([]string, len(reviewed))
	for i, id := range reviewed {
		header[i] = string(id)
	}
	title := strings.Join(header, ", ")
	if len(issues) == 0 {
		return fmt.Sprintf("## Review: %s\n\nNO_ISSUES_FOUND\n\n### Completeness Checks\n- [x] All proposals reviewed\n", title)
	}
	sections := map[gap.Severity][]string{}
	for i, is := range issues {
		id := is.Gap
		if id == "" && len(reviewed) > 0 {
			id = reviewed[0]
		}
		sug := is.Suggestion
		if sug == "" {
			sug = "specify the retry bound explicitly"
		}
		sections[is.Severity] = append(sections[is.Severity], fmt.Sprintf(
			"- **%s**: %s (%s)\n  - Location: Proposed Solution\n  - Impact: implementations diverge\n  - Suggestion: %s",
			IssueID(round, i+1), is.Summary, id, sug))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## Review: %s\n\n", title)
	for _, h := range []struct {
		sev   gap.Severity
		title string
	}{{gap.Critical, "### Critical Issues"}, {gap.High, "### High Priority"}, {gap.Medium, "### Medium Priority"}, {gap.Low, "### Low Priority / Nits"}} {
		b.WriteString(h.title + "\n\n")
		if len(sections[h.sev]) == 0 {
			b.WriteString("None found\n\n")
			continue
		}
		b.WriteString(strings.Join(sections[h.sev], "\n") + "\n\n")
	}
	return b.String()
}

// IssueID returns the ID the Reviewer of round gives its n-th issue:
// IssueID(3, 1) is "ISSUE-R3-001".
func IssueID(round, n int) string { return fmt.Sprintf("ISSUE-R%d-%03d", round, n) }

func resolution(id gap.ID, suffix, response string) string {
	return fmt.Sprintf(`## Gap Resolution: %s%s

**Confidence:** HIGH

%s### Proposed Solution

Resolve %s with a concrete, testable mechanism: the Mediator records every
transition with its round and timestamp, validates inputs before acting, and
reports failures with the exact location so a user can act on them quickly.

### Examples

`+"```"+`
status: ok
`+"```"+`

### Trade-offs

**Pros:**
- Simple
- Testable

**Cons:**
- More state

### New Gaps Introduced

- None

`, id, suffix, response, id)
}
