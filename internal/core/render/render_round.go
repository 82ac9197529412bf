package render

import (
	"fmt"
	"strings"

	"github.com/refine-spec/refine/conflict"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/core/state"
)

// RoundSummary renders round_NNN/summary.md of round r, the Mediator's
// synthesis, from state as the round ends.
func RoundSummary(st *state.State, r state.RoundRecord) string {
	var b strings.Builder
	writeRoundHeader(&b, r)
	writeGapChanges(&b, st.Ledger.Gaps, r.N)
	writeRoundIssues(&b, st.Issues, r.N)
	writeNewGaps(&b, &st.Ledger, r.NewGaps)
	if st.Tracker != nil {
		if note := noProgressNote(st.Tracker.Rows(), r.N); note != "" {
			fmt.Fprintf(&b, "\n## Convergence\n\n%s\n", note)
		}
	}
	writeValidationWarnings(&b, ValidationRows(st, r.N, r.N))
	writeOpenGaps(&b, st.Ledger.Open(), r.N)
	return b.String()
}

// writeRoundHeader writes the summary's title and the round's times,
// assignment, roles, verdict and unreviewed proposals.
func writeRoundHeader(b *strings.Builder, r state.RoundRecord) {
	fmt.Fprintf(b, "# Round %d Summary\n\n- **Started:** %s\n- **Finished:** %s\n- **Assigned:** %s\n- **Engineer:** %s\n- **Reviewer:** %s\n",
		r.N, Timestamp(r.StartedAt), Timestamp(r.FinishedAt), Dash(JoinIDs(r.Assigned)), r.Engineer, r.Reviewer)
	if r.Verdict != "" {
		fmt.Fprintf(b, "- **Verdict:** %s\n", r.Verdict)
	}
	if len(r.Unreviewed) > 0 {
		fmt.Fprintf(b, "- **Unreviewed:** %s (the Reviewer was skipped; these proposals stay PROPOSED, marked \"unreviewed\", and go to the next Reviewer)\n", JoinIDs(r.Unreviewed))
	}
}

// writeGapChanges writes the "## Gap Changes" table: the transitions of
// round n.
func writeGapChanges(b *strings.Builder, gaps []gap.Gap, n int) {
	fmt.Fprintf(b, "\n## Gap Changes\n\n| Gap | From | To | Reason |\n|-----|------|----|--------|\n")
	for _, g := range gaps {
		for _, t := range g.History {
			if t.Round == n {
				fmt.Fprintf(b, "| %s | %s | %s | %s |\n", g.ID, t.From, t.To, Cell(t.Reason))
			}
		}
	}
}

// writeRoundIssues writes the "## Reviewer Issues" table of round n, if
// the Reviewer raised any.
func writeRoundIssues(b *strings.Builder, all []conflict.Issue, n int) {
	var issues []conflict.Issue
	for _, is := range all {
		if is.Round == n {
			issues = append(issues, is)
		}
	}
	if len(issues) == 0 {
		return
	}
	b.WriteString("\n## Reviewer Issues\n\n| Issue | Severity | Gap | Summary |\n|-------|----------|-----|---------|\n")
	for _, is := range issues {
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", is.ID, is.Severity, Dash(string(is.Gap)), Cell(is.Summary))
	}
}

// writeNewGaps writes the "## New Gaps" the round found, if any.
func writeNewGaps(b *strings.Builder, l *gap.Ledger, ids []gap.ID) {
	if len(ids) == 0 {
		return
	}
	fmt.Fprintf(b, "\n## New Gaps\n\n")
	for _, id := range ids {
		g, _ := l.Get(id)
		fmt.Fprintf(b, "- %s (%s): %s\n", id, g.Severity, g.Title)
	}
}

// writeValidationWarnings writes the "## Validation Warnings" among the
// round's validation rows, if any.
func writeValidationWarnings(b *strings.Builder, rows []state.ValidationEntry) {
	var warnings []string
	for _, v := range rows {
		if v.Result == resultWarn {
			warnings = append(warnings, fmt.Sprintf("%s: %s", v.Role.Title(), v.Message))
		}
	}
	if len(warnings) == 0 {
		return
	}
	b.WriteString("\n## Validation Warnings\n\n")
	for _, w := range warnings {
		fmt.Fprintf(b, "- %s\n", w)
	}
}

// writeOpenGaps writes the "## Open Gaps After Round N" list.
func writeOpenGaps(b *strings.Builder, open []gap.Gap, n int) {
	fmt.Fprintf(b, "\n## Open Gaps After Round %d\n\n", n)
	if len(open) == 0 {
		b.WriteString("None.\n")
	}
	for _, g := range open {
		fmt.Fprintf(b, "- %s (%s) %s\n", g.ID, g.Severity, g.State)
	}
}
