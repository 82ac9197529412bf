package convergence

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/refine-spec/refine/gap"
)

// Limitation is one known limitation of the final spec: an open or
// deferred gap, or anything else the host lists (an unresolved MEDIUM/LOW
// conflict, a waived issue).
type Limitation struct {
	// ID is a gap ID, issue ID or other reference.
	ID string `json:"id"`
	// Severity is zero when not applicable.
	Severity gap.Severity `json:"severity,omitempty"`
	Title    string       `json:"title"`
	// Note says why it is a limitation ("open", "deferred", …).
	Note string `json:"note,omitempty"`
}

// String writes the spec's line form without the list marker:
// "GAP-UX-003: Example session incomplete (LOW, deferred)".
func (l Limitation) String() string {
	var tags []string
	if l.Severity.Valid() {
		tags = append(tags, l.Severity.String())
	}
	if l.Note != "" {
		tags = append(tags, l.Note)
	}
	s := l.ID
	if l.Title != "" {
		s += ": " + l.Title
	}
	if len(tags) > 0 {
		s += " (" + strings.Join(tags, ", ") + ")"
	}
	return s
}

// Limitations lists l's open and deferred gaps as known limitations, most
// severe first, then in gap.Compare order; notes are "open" or "deferred".
func Limitations(l *gap.Ledger) []Limitation {
	var gaps []gap.Gap
	for _, g := range gapsOf(l) {
		if g.State.IsOpen() || g.State == gap.Deferred {
			gaps = append(gaps, g)
		}
	}
	slices.SortFunc(gaps, func(a, b gap.Gap) int {
		if c := cmp.Compare(b.Severity, a.Severity); c != 0 {
			return c
		}
		return gap.Compare(a.ID, b.ID)
	})
	out := make([]Limitation, len(gaps))
	for i, g := range gaps {
		note := "open"
		if g.State == gap.Deferred {
			note = "deferred"
		}
		out[i] = Limitation{ID: string(g.ID), Severity: g.Severity, Title: g.Title, Note: note}
	}
	return out
}

// SummaryInput is what final_summary.md reports.
type SummaryInput struct {
	Outcome Outcome
	// Reason is Verdict.Reason; shown when not empty.
	Reason string
	Rounds int
	// Started and Finished give the duration; either zero means unknown.
	Started, Finished time.Time
	Ledger            *gap.Ledger
	// Extra limitations follow the ledger's open and deferred gaps.
	Extra []Limitation
	// SpecKey is where the final spec was written; "" means "final_spec.md".
	SpecKey string
}

// Summary renders final_summary.md in GAP-FLOW-005's "Session Complete"
// format: status, rounds, duration, a gap summary by status and severity,
// known limitations and the output location.
func Summary(in SummaryInput) string {
	var b strings.Builder
	b.WriteString("## Session Complete\n\n")
	fmt.Fprintf(&b, "**Status:** %s\n", in.Outcome)
	if in.Reason != "" {
		fmt.Fprintf(&b, "**Reason:** %s\n", in.Reason)
	}
	fmt.Fprintf(&b, "**Rounds:** %d\n", in.Rounds)
	fmt.Fprintf(&b, "**Duration:** %s\n", duration(in.Started, in.Finished))

	b.WriteString("\n### Gap Summary\n")
	b.WriteString(gapSummaryTable(in.Ledger, in.Outcome))

	b.WriteString("\n### Known Limitations\n")
	limits := append(Limitations(in.Ledger), in.Extra...)
	if len(limits) == 0 {
		b.WriteString("- None\n")
	}
	for _, l := range limits {
		b.WriteString("- " + l.String() + "\n")
	}

	key := in.SpecKey
	if key == "" {
		key = "final_spec.md"
	}
	fmt.Fprintf(&b, "\n### Output\nFinal spec written to: `%s`\n", key)
	return b.String()
}

// gapSummaryTable counts gaps by status (rows) and severity (columns).
// Open gaps are "Accepted as-is" when the user or policy accepted the spec
// with them, plain "Open" otherwise; Superseded appears only after a split.
func gapSummaryTable(l *gap.Ledger, o Outcome) string {
	openLabel := "Open"
	if o == UserApproved || o == GoodEnough {
		openLabel = "Accepted as-is"
	}
	type tally struct{ count, critical, high, medium, low int }
	var resolved, open, deferred, superseded, total tally
	for _, g := range gapsOf(l) {
		var t *tally
		switch {
		case g.State == gap.Accepted:
			t = &resolved
		case g.State == gap.Deferred:
			t = &deferred
		case g.State == gap.Superseded:
			t = &superseded
		default:
			t = &open
		}
		for _, t := range []*tally{t, &total} {
			t.count++
			switch g.Severity {
			case gap.Critical:
				t.critical++
			case gap.High:
				t.high++
			case gap.Low:
				t.low++
			default:
				t.medium++
			}
		}
	}
	row := func(label string, t tally) []string {
		return []string{label, strconv.Itoa(t.count), strconv.Itoa(t.critical), strconv.Itoa(t.high), strconv.Itoa(t.medium), strconv.Itoa(t.low)}
	}
	cells := [][]string{
		{"Status", "Count", "Critical", "High", "Medium", "Low"},
		row("Resolved", resolved),
		row(openLabel, open),
		row("Deferred", deferred),
	}
	if superseded.count > 0 {
		cells = append(cells, row("Superseded (split)", superseded))
	}
	cells = append(cells, row("Total", total))
	return markdownTable(cells)
}

// duration writes an elapsed time the way the spec does ("2 hours"),
// to the minute, or "unknown" without both instants.
func duration(start, end time.Time) string {
	if start.IsZero() || end.IsZero() || end.Before(start) {
		return "unknown"
	}
	d := end.Sub(start)
	if d < time.Minute {
		s := int(d / time.Second)
		return fmt.Sprintf("%d %s", s, plural(s, "second", "seconds"))
	}
	h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
	var parts []string
	if h > 0 {
		parts = append(parts, fmt.Sprintf("%d %s", h, plural(h, "hour", "hours")))
	}
	if m > 0 {
		parts = append(parts, fmt.Sprintf("%d %s", m, plural(m, "minute", "minutes")))
	}
	return strings.Join(parts, " ")
}

// Resolution is an accepted gap's final resolution for final_spec.md.
type Resolution struct {
	ID    gap.ID
	Title string
	// Text is the accepted Engineer section, inserted verbatim.
	Text string
}

// FinalSpec composes final_spec.md: the source spec, then each accepted
// gap's final resolution (in gap.Compare order), the decisions (each entry
// verbatim, as rendered for decisions.md) and the known limitations. Every
// section is present, with "None." when empty, so readers find them all.
func FinalSpec(source string, accepted []Resolution, decisions []string, limitations []Limitation) string {
	var b strings.Builder
	b.WriteString(strings.TrimRight(source, "\n"))
	b.WriteString("\n\n---\n\n## Resolved Gaps\n\n")
	sorted := slices.Clone(accepted)
	slices.SortStableFunc(sorted, func(a, b Resolution) int { return gap.Compare(a.ID, b.ID) })
	if len(sorted) == 0 {
		b.WriteString("None.\n\n")
	}
	for _, r := range sorted {
		fmt.Fprintf(&b, "### %s", r.ID)
		if r.Title != "" {
			b.WriteString(": " + r.Title)
		}
		b.WriteString("\n\n" + strings.TrimSpace(r.Text) + "\n\n")
	}
	b.WriteString("## Decisions\n\n")
	if len(decisions) == 0 {
		b.WriteString("None.\n\n")
	}
	for _, d := range decisions {
		b.WriteString(strings.TrimSpace(d) + "\n\n")
	}
	b.WriteString("## Known Limitations\n\n")
	if len(limitations) == 0 {
		b.WriteString("None.\n")
	}
	for _, l := range limitations {
		b.WriteString("- " + l.String() + "\n")
	}
	return b.String()
}
