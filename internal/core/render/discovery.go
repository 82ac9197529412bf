package render

import (
	"fmt"
	"strings"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/core/state"
)

// writeWhereOpen writes, under the gaps table, where the spec leaves each
// gap open and why it matters, for the gaps that say (discovery's, or a
// gap list's Location and Why lines).
func writeWhereOpen(b *strings.Builder, l *gap.Ledger) {
	header := false
	for _, g := range l.Gaps {
		if g.Location == "" && g.Why == "" {
			continue
		}
		if !header {
			b.WriteString("\n### Where the spec leaves them open\n\n")
			header = true
		}
		fmt.Fprintf(b, "- **%s**", g.ID)
		if g.Location != "" {
			fmt.Fprintf(b, " — Location: %s", OneLine(g.Location))
		}
		if g.Why != "" {
			fmt.Fprintf(b, " — Why: %s", OneLine(g.Why))
		}
		b.WriteString("\n")
	}
}

// writeDiscovery writes the "## Discovery" section: the discovery step's
// attempts and how its list became the session's (DESIGN §19).
func writeDiscovery(b *strings.Builder, d *state.DiscoveryState) {
	if d == nil {
		return
	}
	b.WriteString("\n## Discovery\n\n")
	switch d.Step {
	case state.DiscoverDone:
		fmt.Fprintf(b, "The gap list was %s (decisions.md, round 0); it is in discovery/gaps.md.\n", d.Confirmed)
	case state.DiscoverConfirm:
		if d.NoGaps {
			b.WriteString("The Reviewer found no gaps (NO_GAPS_FOUND); the confirmation waits.\n")
		} else {
			fmt.Fprintf(b, "The Reviewer proposes %d gap(s); the confirmation waits.\n", len(d.Proposed))
		}
	case state.DiscoverEscalate:
		b.WriteString("Every discovery attempt failed validation; the question of what to do waits.\n")
	default:
		b.WriteString("The Reviewer's discovery call is in progress.\n")
	}
	if len(d.Given) > 0 {
		fmt.Fprintf(b, "\nGiven with the session: %s (discovery proposed additions).\n", JoinIDs(d.Given))
	}
	if len(d.Attempts) == 0 {
		return
	}
	b.WriteString("\n| Attempt | Outcome | Failure Type | Message |\n|---------|---------|--------------|---------|\n")
	for _, a := range d.Attempts {
		outcome, ft := "valid", "-"
		if !a.Success {
			outcome, ft = "failed", string(a.FailureType)
		}
		fmt.Fprintf(b, "| %d | %s | %s | %s |\n", a.N, outcome, ft, Cell(Dash(OneLine(a.Message))))
	}
}
