package rollback

import (
	"fmt"
	"strings"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/markdown"
	"github.com/refine-spec/refine/internal/rollbackfmt"
)

// RoundDecision is a decision made in a round, as this package needs it: plain
// fields the engine fills from its state (decisions are never parsed back
// from LLM output).
type RoundDecision struct {
	// ID is "DECISION-R6-001".
	ID string `json:"id"`
	// Issue is the issue or conflict the decision resolved, if any.
	Issue string `json:"issue,omitempty"`
	// Summary is the decision's title ("Error threshold weights").
	Summary string `json:"summary,omitempty"`
	// Option is the option key the user chose, if the decision came from a question.
	Option string `json:"option,omitempty"`
	// Choice is what was decided ("CRITICAL=16, HIGH=4, MEDIUM=2, LOW=1").
	Choice string `json:"choice,omitempty"`
	// Rationale is why.
	Rationale string `json:"rationale,omitempty"`
	// Text is the entry exactly as decisions.md shows it; when empty, Entry
	// renders one from the fields above.
	Text string `json:"text,omitempty"`
	// Note is an annotation appended to the entry ("Re-applied from
	// rolled-back Round 6").
	Note string `json:"note,omitempty"`
}

// Entry renders the decision as a decisions.md entry: Text when set,
// otherwise
//
//	### DECISION-R6-001: Error threshold weights
//	- **Issue:** ISSUE-R5-003
//	- **Option:** A
//	- **Choice:** CRITICAL=16, HIGH=4, MEDIUM=2, LOW=1
//	- **Rationale:** Matches GAP-FLOW-012 severity definitions
//
// with a final "- **Note:** …" line when Note is set. Empty fields are left out.
func (d RoundDecision) Entry() string {
	var b strings.Builder
	if d.Text != "" {
		b.WriteString(strings.TrimRight(d.Text, "\n") + "\n")
	} else {
		b.WriteString("### " + d.ID)
		if s := rollbackfmt.OneLine(d.Summary); s != "" {
			b.WriteString(": " + s)
		}
		b.WriteString("\n")
		for _, f := range [...]struct{ name, v string }{
			{"Issue", d.Issue}, {"Option", d.Option}, {"Choice", d.Choice}, {"Rationale", d.Rationale},
		} {
			if v := rollbackfmt.OneLine(f.v); v != "" {
				fmt.Fprintf(&b, "- **%s:** %s\n", f.name, v)
			}
		}
	}
	if n := rollbackfmt.OneLine(d.Note); n != "" {
		fmt.Fprintf(&b, "- **Note:** %s\n", n)
	}
	return b.String()
}

// Round returns the round in the decision's ID (6 for DECISION-R6-001), or 0.
func (d RoundDecision) Round() int {
	id, err := gap.ParseDecisionID(d.ID)
	if err != nil {
		return 0
	}
	return id.Round
}

// DecisionsFromRound renders decisions_from_round_N.md, the spec's archive
// of a rolled-back round's decisions:
//
//	# Decisions Made During Round N (Rolled Back)
//
//	**Note:** These decisions were made during Round N, which was subsequently rolled back.
//	They are preserved for reference but are NOT active in the session.
//
//	[Original decision entries from round N]
//
// With no decisions the entries are replaced by a line saying so.
func DecisionsFromRound(round int, decisions []RoundDecision) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Decisions Made During Round %d (Rolled Back)\n\n", round)
	fmt.Fprintf(&b, "**Note:** These decisions were made during Round %d, which was subsequently rolled back.\n", round)
	b.WriteString("They are preserved for reference but are NOT active in the session.\n")
	if len(decisions) == 0 {
		fmt.Fprintf(&b, "\nNo decisions were made during Round %d.\n", round)
	}
	for _, d := range decisions {
		b.WriteString("\n" + d.Entry())
	}
	return b.String()
}

// ParseDecisionsFromRound recovers decisions from a decisions_from_round_N.md
// written with default entries (for recovery from an archive when the state
// no longer holds them). Each heading that starts with a decision ID opens
// an entry; Text is the entry verbatim, and the fields are read from its
// "- **Field:** value" lines. It never fails; unrecognised text is skipped.
func ParseDecisionsFromRound(md string) []RoundDecision {
	doc := markdown.Parse(md)
	var out []RoundDecision
	for _, s := range doc.Sections() {
		ids := gap.FindDecisionMatches(s.Title)
		if len(ids) == 0 || ids[0].Start != 0 {
			continue
		}
		d := RoundDecision{ID: ids[0].ID, Text: strings.TrimRight(doc.Full(s), "\n") + "\n"}
		if rest, ok := strings.CutPrefix(s.Title[ids[0].End:], ":"); ok {
			d.Summary = strings.TrimSpace(rest)
		}
		for line := range strings.SplitSeq(doc.Body(s), "\n") {
			name, value, ok := strings.Cut(strings.TrimSpace(line), ":** ")
			if !ok {
				continue
			}
			value = strings.TrimSpace(value)
			switch strings.TrimPrefix(name, "- **") {
			case "Issue":
				d.Issue = value
			case "Option":
				d.Option = value
			case "Choice":
				d.Choice = value
			case "Rationale":
				d.Rationale = value
			case "Note":
				d.Note = value
			}
		}
		if d.Note != "" {
			// Keep Text without the note so Entry does not print it twice.
			if i := strings.LastIndex(d.Text, "- **Note:**"); i >= 0 {
				d.Text = d.Text[:i]
			}
		}
		out = append(out, d)
	}
	return out
}
