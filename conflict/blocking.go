package conflict

import (
	"slices"

	"github.com/refine-spec/refine/gap"
)

// Blocking counts the unresolved CRITICAL and HIGH conflicts, the input of
// the termination decision (§8): an unresolved CRITICAL blocks every
// outcome but ABANDONED; an unresolved HIGH blocks COMPLETE and GOOD_ENOUGH
// and needs an acknowledgment for USER_APPROVED. MEDIUM and LOW conflicts
// never block; they are documented as known limitations.
func Blocking(conflicts []Conflict) (unresolvedCritical, unresolvedHigh int) {
	for _, c := range conflicts {
		if !c.Open() {
			continue
		}
		switch c.Issue.Severity {
		case gap.Critical:
			unresolvedCritical++
		case gap.High:
			unresolvedHigh++
		}
	}
	return unresolvedCritical, unresolvedHigh
}

// BlockedGaps returns the distinct gaps with an unresolved HIGH or CRITICAL
// conflict, sorted by gap.Compare: the gaps to hold BLOCKED until the user
// decides (an open gap moves to BLOCKED while an unresolved HIGH/CRITICAL
// conflict or a user decision holds it; docs/workflow.md#gap-states).
// Conflicts on issues that name no gap block no gap
// (they still count in Blocking).
func BlockedGaps(conflicts []Conflict) []gap.ID {
	var out []gap.ID
	for _, c := range conflicts {
		if c.Open() && c.Issue.Severity.AtLeastHigh() && c.Issue.Gap != "" && !slices.Contains(out, c.Issue.Gap) {
			out = append(out, c.Issue.Gap)
		}
	}
	slices.SortFunc(out, gap.Compare)
	return out
}

// Pending returns the conflicts still waiting for the user, in prioritize
// order: the queue to present.
func Pending(conflicts []Conflict) []Conflict {
	var out []Conflict
	for _, c := range conflicts {
		if c.Open() {
			out = append(out, c)
		}
	}
	return prioritize(out)
}
