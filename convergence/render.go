package convergence

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Table renders rows as the markdown convergence table of status.md,
// without a heading, columns padded so the raw file reads well. Net values
// carry a sign (+1, 0, -4) as in the spec. With no rows it is the header
// alone.
func Table(rows []Row) string {
	// The spec's columns (GAP-FLOW-002 example) with Deferred, Reopened and
	// Weighted Net next to the column each refines.
	cells := make([][]string, 0, len(rows)+1)
	cells = append(cells, []string{"Round", "Gaps Start", "Resolved", "Deferred", "New", "Reopened", "Gaps End", "Net", "Weighted Net", "State"})
	for _, r := range rows {
		cells = append(cells, []string{
			strconv.Itoa(r.Round),
			strconv.Itoa(r.GapsStart),
			strconv.Itoa(r.Resolved),
			strconv.Itoa(r.Deferred),
			strconv.Itoa(r.New),
			strconv.Itoa(r.Reopened),
			strconv.Itoa(r.GapsEnd),
			signed(r.Net),
			signed(r.WeightedNet),
			string(r.State),
		})
	}
	return markdownTable(cells)
}

// markdownTable renders cells[0] as the header and the rest as body rows,
// each column padded to its widest cell.
func markdownTable(cells [][]string) string {
	widths := make([]int, len(cells[0]))
	for _, row := range cells {
		for i, c := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(c), 3)
		}
	}
	var b strings.Builder
	line := func(row []string) {
		b.WriteByte('|')
		for i, c := range row {
			b.WriteByte(' ')
			b.WriteString(c)
			b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)))
			b.WriteString(" |")
		}
		b.WriteByte('\n')
	}
	line(cells[0])
	b.WriteByte('|')
	for _, w := range widths {
		b.WriteString(strings.Repeat("-", w+2))
		b.WriteByte('|')
	}
	b.WriteByte('\n')
	for _, row := range cells[1:] {
		line(row)
	}
	return b.String()
}

// signed formats n with an explicit plus for positive values.
func signed(n int) string {
	if n > 0 {
		return "+" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}
