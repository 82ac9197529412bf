package conflict

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/refine-spec/refine/gap"
)

// prioritize returns the conflicts in the order the user should see them
// (§7 prioritize_conflicts): CRITICAL first, then HIGH, MEDIUM, LOW; within a
// severity older rounds first, then lower issue numbers; ties (two conflicts
// on one issue) by issue ID and detection round, so the order is total and
// deterministic. The input is not modified.
func prioritize(conflicts []Conflict) []Conflict {
	out := slices.Clone(conflicts)
	slices.SortStableFunc(out, func(a, b Conflict) int {
		return cmp.Or(
			compareIssues(a.Issue, b.Issue),
			cmp.Compare(a.IssueID, b.IssueID),
			cmp.Compare(a.Round, b.Round),
		)
	})
	return out
}

// compareIssues orders issues by severity (most important first), round,
// then number. An invalid severity sorts as MEDIUM.
func compareIssues(a, b Issue) int {
	return cmp.Or(
		cmp.Compare(rank(b.Severity), rank(a.Severity)),
		cmp.Compare(issueRound(a), issueRound(b)),
		cmp.Compare(a.Number(), b.Number()),
		cmp.Compare(a.ID, b.ID),
	)
}

func rank(s gap.Severity) gap.Severity {
	if !s.Valid() {
		return gap.Medium
	}
	return s
}

// Overrides are the user's severity overrides by issue ID (Example 3:
// "Override to LOW severity"). A nil map is empty; the zero value is ready
// to read.
type Overrides map[string]gap.Severity

// ApplyOverrides returns copies of issues with the overridden severities.
// Apply it before detection and rate checks, so that an issue the user
// downgraded below HIGH is neither a blocking conflict nor counted.
func ApplyOverrides(issues []Issue, o Overrides) []Issue {
	out := slices.Clone(issues)
	for i := range out {
		if s, ok := o[out[i].ID]; ok && s.Valid() {
			out[i].Severity = s
		}
	}
	return out
}

// OverrideSeverity applies a user severity override to a conflict. The
// first override keeps the Reviewer's severity in OriginalSeverity. An
// unresolved conflict overridden to LOW is no longer a conflict (Example 3)
// and becomes DOWNGRADED; one overridden to MEDIUM stays to be decided but
// no longer blocks; an override upward makes it block. Options are
// regenerated, because D and the recommendation depend on severity. A
// resolved conflict cannot be overridden: its decision stands.
func OverrideSeverity(c Conflict, s gap.Severity) (Conflict, error) {
	if !s.Valid() {
		return c, fmt.Errorf("conflict: override of %s: invalid severity %d", c.IssueID, int(s))
	}
	if c.Status == StatusResolved {
		return c, fmt.Errorf("conflict: %s is already resolved by %s: its severity can no longer be overridden", c.IssueID, c.DecisionID)
	}
	if c.OriginalSeverity == 0 {
		c.OriginalSeverity = c.Issue.Severity
	}
	c.Issue.Severity = s
	c.Options = generateOptions(c)
	if s == gap.Low {
		c.Status = statusDowngraded
	} else {
		c.Status = StatusUnresolved
	}
	return c, nil
}
