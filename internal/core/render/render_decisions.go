package render

import (
	"fmt"
	"strings"

	"github.com/refine-spec/refine/conflict"
	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/internal/rollbacktext"
)

// Decisions renders decisions.md from state.
func Decisions(st *state.State) string {
	var b strings.Builder
	b.WriteString("# Decisions\n\nDecisions recorded during this session. Later prompts carry them; they are not re-argued.\n")
	if len(st.Decisions) == 0 && len(st.ConflictDecisions) == 0 {
		b.WriteString("\nNo decisions recorded yet.\n")
	}
	writeDecisionRecords(&b, st.Decisions)
	if len(st.ConflictDecisions) > 0 {
		// Each round has its own "## Round N Conflict Resolutions" heading
		// (FLOW-006): no empty heading above them (#40).
		b.WriteString("\n" + conflict.RenderDecisions(st.ConflictDecisions))
	}
	for _, r := range st.Rollbacks.Records {
		b.WriteString("\n" + rollbacktext.DecisionsNoticeIn(r.Round, r.At, r.Reason, r.Archive))
	}
	if len(st.Adjustments) > 0 {
		b.WriteString("\n## Standing Adjustments\n\n")
		for _, a := range st.Adjustments {
			fmt.Fprintf(&b, "- %s\n", a)
		}
	}
	return b.String()
}

// writeDecisionRecords writes the answered questions' decisions under a
// heading per round.
func writeDecisionRecords(b *strings.Builder, decisions []state.DecisionRecord) {
	round := -1
	for _, d := range decisions {
		if d.Round != round {
			round = d.Round
			fmt.Fprintf(b, "\n## Round %d\n", round)
		}
		title := d.Question
		if d.Issue != "" {
			title = d.Issue + ": " + title
		}
		fmt.Fprintf(b, "\n### %s — %s\n\n**Decision ID:** %s\n**Date:** %s\n**Chosen Option:** %s\n**Decision:** %s\n", d.ID, title, d.ID, Timestamp(d.At), d.Option, d.Decision)
		if d.Text != "" {
			fmt.Fprintf(b, "**User note:** %s\n", d.Text)
		}
	}
}
