package refine_test

import (
	"fmt"
	"strings"

	"github.com/refine-spec/refine/refinetest"
)

// auto answers every question with its documented default.
func auto() *refinetest.Asker { return &refinetest.Asker{DefaultAfterScript: true} }

// then makes a scripted asker answer defaults once its script is used up.
func then(a *refinetest.Asker) *refinetest.Asker { a.DefaultAfterScript = true; return a }

// engineerDoc is a valid Engineer output resolving the given gaps.
func engineerDoc(ids ...string) string {
	var b strings.Builder
	b.WriteString("# Engineer Proposals\n\n")
	for _, id := range ids {
		fmt.Fprintf(&b, `## Gap Resolution: %s

**Confidence:** HIGH

### Proposed Solution

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

`, id, id)
	}
	return b.String()
}

// reviewerDoc reviews gap with the given issues ("HIGH: text" form); no
// issues gives the NO_ISSUES_FOUND form.
func reviewerDoc(round int, gapID string, issues ...string) string {
	if len(issues) == 0 {
		return fmt.Sprintf("## Review: %s\n\nNO_ISSUES_FOUND\n\n### Completeness Checks\n- [x] All proposals reviewed\n", gapID)
	}
	sections := map[string][]string{}
	for i, is := range issues {
		sev, text, _ := strings.Cut(is, ": ")
		sections[sev] = append(sections[sev], fmt.Sprintf("- **ISSUE-R%d-%03d**: %s (%s)\n  - Location: Proposed Solution\n  - Impact: implementations diverge\n  - Suggestion: specify the retry bound explicitly", round, i+1, text, gapID))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## Review: %s\n\n", gapID)
	for _, h := range []struct{ sev, title string }{{"CRITICAL", "### Critical Issues"}, {"HIGH", "### High Priority"}, {"MEDIUM", "### Medium Priority"}, {"LOW", "### Low Priority / Nits"}} {
		b.WriteString(h.title + "\n\n")
		if len(sections[h.sev]) == 0 {
			b.WriteString("None found\n\n")
			continue
		}
		b.WriteString(strings.Join(sections[h.sev], "\n") + "\n\n")
	}
	return b.String()
}

// revisedDoc is a round-N+1 Engineer output that addresses issueID in
// substance: a revised section, a response paragraph naming the issue and
// using the suggestion's words ("specify the retry bound explicitly").
func revisedDoc(gapID, issueID string) string {
	return fmt.Sprintf(`## Gap Resolution: %s (Revised)

**Confidence:** HIGH

### Response to %s

%s asked us to specify the retry bound explicitly. We now specify it: the
retry bound is 2 validation retries per role per round, after which the
Mediator escalates to the user with the five documented options.

### Proposed Solution

The Mediator validates each output, retries at most twice with a
failure-specific prompt modification, and escalates when the bound is hit.
Every retry is journaled with its prompt and raw response.

### Examples

`+"```"+`
attempt 1: WRONG_FORMAT -> retry 1
attempt 2: valid
`+"```"+`

### Trade-offs

**Pros:**
- Bounded cost
- Predictable behaviour

**Cons:**
- Two retries may not fix every failure

### New Gaps Introduced

- None
`, gapID, issueID, issueID)
}
