package refine_test

import (
	"fmt"
	"strings"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
)

// auto answers every question with its documented default.
func auto() *refinetest.Asker { return &refinetest.Asker{DefaultAfterScript: true} }

// then makes a scripted asker answer defaults once its script is used up.
func then(a *refinetest.Asker) *refinetest.Asker { a.DefaultAfterScript = true; return a }

// engineerDoc is a valid Engineer output resolving the given gaps.
func engineerDoc[T ~string](ids ...T) string {
	gs := make([]gap.ID, len(ids))
	for i, id := range ids {
		gs[i] = gap.ID(id)
	}
	return refinetest.EngineerOutput(gs...)
}

// reviewerDoc reviews gap with the given issues ("HIGH: text" form); no
// issues gives the NO_ISSUES_FOUND form.
func reviewerDoc[T ~string](round int, gapID T, issues ...string) string {
	var is []refinetest.Issue
	for _, s := range issues {
		sev, text, _ := strings.Cut(s, ": ")
		level, err := gap.ParseSeverity(sev)
		if err != nil {
			panic("reviewerDoc: " + err.Error())
		}
		is = append(is, refinetest.Issue{Severity: level, Summary: text})
	}
	return refinetest.ReviewerOutput(round, []gap.ID{gap.ID(gapID)}, is...)
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
