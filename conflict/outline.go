package conflict

import (
	"sort"
	"strings"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/markdown"
)

// unitKind classifies a block of lines for the implicit heuristics: only a
// paragraph (or a heading that governs text) is a response; list items,
// table rows and quotes acknowledge or cite.
type unitKind int

const (
	unitParagraph unitKind = iota + 1
	unitHeading
	unitList  // one list item with its continuation lines
	unitTable // one table row
	unitQuote // consecutive blockquote lines
)

// unit is a block of lines of a scanned document. Offsets are into Doc.Text.
type unit struct {
	kind       unitKind
	start, end int // byte offsets; end excludes the final newline
	line       int // 1-based first line
	heading    int // index into Doc.Sections() for unitHeading, else -1
}

// issueRef is one occurrence of an issue ID outside code.
type issueRef struct {
	unit int // index into outline.units
	line int
}

// outline is what the heuristics and checks need from one document, built
// in one pass over its lines.
type outline struct {
	doc      *markdown.Doc
	units    []unit
	lineUnit []int // 0-based line → unit index, -1 for blank lines
	refs     map[string][]issueRef
	gaps     map[gap.ID][]markdown.Section // "## Gap Resolution:" sections
}

func newOutline(src string) *outline {
	d := markdown.Parse(src)
	o := &outline{doc: d, refs: map[string][]issueRef{}, gaps: map[gap.ID][]markdown.Section{}}
	headingAt := map[int]int{} // line → section index
	for i, s := range d.Sections() {
		headingAt[s.Line] = i
	}
	n := d.LineCount()
	starts := lineStarts(d.Text)
	o.lineUnit = make([]int, n)
	cur := -1 // unit open for continuation, -1 when none
	for ln := 1; ln <= n; ln++ {
		p := d.ProseLine(ln)
		t := strings.TrimLeft(p, " \t")
		start := starts[ln-1]
		end := start + len(p)
		kind := classify(t)
		if si, ok := headingAt[ln]; ok {
			o.units = append(o.units, unit{kind: unitHeading, start: start, end: end, line: ln, heading: si})
			o.lineUnit[ln-1] = len(o.units) - 1
			cur = -1
			continue
		}
		if kind == 0 { // blank or thematic break
			o.lineUnit[ln-1] = -1
			cur = -1
			continue
		}
		// A paragraph line continues an open paragraph or list item (lazy
		// continuation); a quote line continues a quote. Everything else
		// opens a new unit.
		if cur >= 0 && ((kind == unitParagraph && (o.units[cur].kind == unitParagraph || o.units[cur].kind == unitList)) ||
			(kind == unitQuote && o.units[cur].kind == unitQuote)) {
			o.units[cur].end = end
			o.lineUnit[ln-1] = cur
			continue
		}
		o.units = append(o.units, unit{kind: kind, start: start, end: end, line: ln, heading: -1})
		cur = len(o.units) - 1
		o.lineUnit[ln-1] = cur
		if kind == unitTable {
			cur = -1 // each row is its own unit
		}
	}
	for _, m := range gap.FindIssueMatches(d.Prose) {
		ln := d.LineOf(m.Start)
		if u := o.lineUnit[ln-1]; u >= 0 {
			o.refs[m.ID] = append(o.refs[m.ID], issueRef{unit: u, line: ln})
		}
	}
	for _, s := range d.SectionsAt(2) {
		title := headingProse(d, s.Heading)
		const prefix = "gap resolution:"
		if len(title) < len(prefix) || !strings.EqualFold(title[:len(prefix)], prefix) {
			continue
		}
		id := gap.FirstID(title[len(prefix):])
		if id == "" {
			continue
		}
		o.gaps[id] = append(o.gaps[id], s)
	}
	return o
}

// classify returns the unit kind of a line's prose with leading blanks
// removed, or 0 for a blank line or a thematic break.
func classify(t string) unitKind {
	t = strings.TrimRight(t, " \t")
	switch {
	case t == "":
		return 0
	case isThematicBreak(t):
		return 0
	case t[0] == '|':
		return unitTable
	case t[0] == '>':
		return unitQuote
	case isListMarker(t):
		return unitList
	}
	return unitParagraph
}

// isListMarker recognises "- x", "* x", "+ x", "1. x" and "1) x" (a marker
// alone on its line is an empty item).
func isListMarker(t string) bool {
	switch t[0] {
	case '-', '*', '+':
		return len(t) == 1 || t[1] == ' ' || t[1] == '\t'
	}
	i := 0
	for i < len(t) && i < 9 && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 || i >= len(t) || (t[i] != '.' && t[i] != ')') {
		return false
	}
	return i+1 == len(t) || t[i+1] == ' ' || t[i+1] == '\t'
}

// isThematicBreak recognises "---", "***", "___" (spaces allowed) and the
// box-drawing rules the spec's examples use ("─────", "═════").
func isThematicBreak(t string) bool {
	var c rune
	n := 0
	for _, r := range t {
		switch {
		case r == ' ' || r == '\t':
			continue
		case n == 0 && (r == '-' || r == '*' || r == '_' || r == '─' || r == '═' || r == '━'):
			c = r
		case r != c:
			return false
		}
		n++
	}
	return n >= 3
}

// headingProse returns a heading's title from Prose (inline code blanked),
// without the #s and surrounding blanks.
func headingProse(d *markdown.Doc, h markdown.Heading) string {
	p := strings.TrimLeft(d.ProseLine(h.Line), " \t")
	p = strings.TrimLeft(p, "#")
	return strings.TrimSpace(p)
}

// text and prose of a unit.
func (o *outline) text(u unit) string  { return o.doc.Text[u.start:u.end] }
func (o *outline) prose(u unit) string { return o.doc.Prose[u.start:u.end] }

// section returns the section a heading unit opens.
func (o *outline) section(u unit) markdown.Section { return o.doc.Sections()[u.heading] }

// governs reports whether a heading unit has any text under it (its
// section body, subsections included, is not blank).
func (o *outline) governs(u unit) bool {
	return strings.TrimSpace(o.doc.Body(o.section(u))) != ""
}

// next returns the index of the unit after i that lies before the next
// heading, or -1.
func (o *outline) next(i int) int {
	if i+1 < len(o.units) && o.units[i+1].kind != unitHeading {
		return i + 1
	}
	return -1
}

// unitsIn returns the indexes of the units starting within [start, end).
// Units are in document order, so a binary search finds the first.
func (o *outline) unitsIn(start, end int) []int {
	i := sort.Search(len(o.units), func(i int) bool { return o.units[i].start >= start })
	var out []int
	for ; i < len(o.units) && o.units[i].start < end; i++ {
		out = append(out, i)
	}
	return out
}

// gapBody returns the bodies of the gap's Gap Resolution sections, joined.
func (o *outline) gapBody(id gap.ID) (string, bool) {
	secs, ok := o.gaps[id]
	if !ok {
		return "", false
	}
	var b strings.Builder
	for _, s := range secs {
		b.WriteString(o.doc.Body(s))
	}
	return b.String(), true
}

// lineStarts returns the byte offset of each line of text.
func lineStarts(text string) []int {
	out := []int{0}
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			out = append(out, i+1)
		}
	}
	return out
}
