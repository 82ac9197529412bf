// Package markdown is the one markdown scanner refine uses everywhere: it
// splits a document into ATX-headed sections and knows which bytes are code
// (fenced blocks and inline code spans), so that a header or an identifier
// shown as an example is never read as structure or as a reference.
//
// The scanner is deliberately small. It recognises what role outputs use:
// ATX headings (# to ######), fenced code blocks (``` and ~~~, longer
// fences, info strings, an unterminated fence running to the end), and
// inline code spans within one line. It tolerates a UTF-8 BOM, CRLF and lone
// CR line endings, and trailing spaces. It runs in one pass, in time linear
// in the input, and never fails: any byte sequence is a document.
package markdown

import (
	"sort"
	"strings"
)

// Heading is an ATX heading outside code.
type Heading struct {
	Level int    // 1 to 6
	Title string // text after the #s, trimmed, closing #s removed
	Line  int    // 1-based line number
	Start int    // byte offset of the heading line in Doc.Text
	// BodyStart is the byte offset just after the heading line (its newline included).
	BodyStart int
}

// Section is a heading with the text it governs: everything up to the next
// heading of the same or a higher level (a smaller Level number), or the end.
type Section struct {
	Heading
	End int // byte offset just past the section
}

// Doc is a scanned document. All offsets refer to Text.
type Doc struct {
	// Text is the input with a leading BOM removed and line endings
	// normalised to "\n".
	Text string
	// Prose is Text with every byte of code (fenced blocks including their
	// fence lines, inline code spans including their backticks) replaced by
	// a space; newlines are kept. It has the same length as Text, so an
	// offset found by searching Prose is valid in Text.
	Prose string
	// Headings are the headings outside code, in order.
	Headings []Heading
	// Lead holds, for each line (index n-1 for line n), the first byte of
	// the line after at most three spaces of indentation: 0 for a blank
	// line, a line of a fenced block (fence lines included) or one
	// indented four spaces or more. A reader looking for lines that start
	// a certain way scans it instead of the text.
	Lead []byte
	// Content holds, for each line, the first byte of its content after
	// the block markers Lead may be: quote markers, heading marks, a list
	// marker ("- ", "* ", "+ ", "1. ", "1) ") and the spaces after them; 0
	// where Lead is 0 or nothing follows them. "- DISAGREE" has Lead '-'
	// and Content 'D', "**Bold**" Lead and Content '*', "---" both '-'.
	Content []byte
	// Unclosed is the 1-based line of a fence that opens a code block and
	// is never closed (the block runs to the end of the document), 0 when
	// every fenced block is closed. A writer who left a fence open hides
	// everything after it as code, so readers may want to say so.
	Unclosed int

	lineStarts []int // byte offset of each line's first byte
	sections   []Section
}

// Normalize strips a leading UTF-8 BOM and turns CRLF and lone CR into LF.
func Normalize(src string) string {
	src = strings.TrimPrefix(src, "\uFEFF")
	if strings.IndexByte(src, '\r') < 0 {
		return src
	}
	var b strings.Builder
	b.Grow(len(src))
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c == '\r' {
			b.WriteByte('\n')
			if i+1 < len(src) && src[i+1] == '\n' {
				i++
			}
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// Parse scans src. It never fails.
func Parse(src string) *Doc {
	text := Normalize(src)
	lines := strings.Count(text, "\n") + 1
	d := &Doc{Text: text, lineStarts: make([]int, 0, lines), Lead: make([]byte, 0, lines), Content: make([]byte, 0, lines)}
	// Prose is written line by line; strings.Builder hands its buffer over
	// without a copy.
	var prose strings.Builder
	prose.Grow(len(text))

	var fence struct {
		open  bool
		char  byte
		count int
	}
	fenceLine := 0
	for start := 0; start <= len(text); {
		end := strings.IndexByte(text[start:], '\n')
		next := 0
		if end < 0 {
			end = len(text)
			next = len(text) + 1
		} else {
			end += start
			next = end + 1
		}
		d.lineStarts = append(d.lineStarts, start)
		line := text[start:end]
		lead, content := byte(0), byte(0)

		if fence.open {
			writeSpaces(&prose, len(line))
			if isClosingFence(line, fence.char, fence.count) {
				fence.open = false
			}
		} else if ch, n, ok := openingFence(line); ok {
			writeSpaces(&prose, len(line))
			fence.open, fence.char, fence.count = true, ch, n
			fenceLine = len(d.lineStarts)
		} else {
			if n, rest := indent(line); n < 4 && rest != "" {
				lead, content = rest[0], contentLead(rest)
			}
			writeMaskedLine(&prose, line)
			if lvl, title, ok := atxHeading(line); ok {
				d.Headings = append(d.Headings, Heading{
					Level: lvl, Title: title, Line: len(d.lineStarts),
					Start: start, BodyStart: min(next, len(text)),
				})
			}
		}
		d.Lead = append(d.Lead, lead)
		d.Content = append(d.Content, content)
		if next <= len(text) {
			prose.WriteByte('\n')
		}
		start = next
	}
	if fence.open {
		d.Unclosed = fenceLine
	}
	d.Prose = prose.String()
	d.sections = sectionsOf(d.Headings, len(text))
	return d
}

// Sections returns every heading with the text it governs, in order. The
// slice is shared: callers must not modify it.
func (d *Doc) Sections() []Section { return d.sections }

func sectionsOf(headings []Heading, textLen int) []Section {
	out := make([]Section, len(headings))
	// A stack of open sections gives each its end in one pass.
	var stack []int
	for i, h := range headings {
		for len(stack) > 0 && headings[stack[len(stack)-1]].Level >= h.Level {
			j := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			out[j].End = h.Start
		}
		out[i] = Section{Heading: h}
		stack = append(stack, i)
	}
	for _, j := range stack {
		out[j].End = textLen
	}
	return out
}

// SectionsAt returns the sections of the given heading level, in order.
func (d *Doc) SectionsAt(level int) []Section {
	var out []Section
	for _, s := range d.Sections() {
		if s.Level == level {
			out = append(out, s)
		}
	}
	return out
}

// Within returns the sections nested inside s (deeper headings between its
// body start and its end), in order.
func (d *Doc) Within(s Section) []Section {
	i := sort.Search(len(d.sections), func(i int) bool { return d.sections[i].Start >= s.BodyStart })
	var out []Section
	for ; i < len(d.sections) && d.sections[i].Start < s.End; i++ {
		if d.sections[i].Level > s.Level {
			out = append(out, d.sections[i])
		}
	}
	return out
}

// Body returns the text of s after its heading line.
func (d *Doc) Body(s Section) string { return d.Text[s.BodyStart:s.End] }

// ProseBody returns the prose (code blanked) of s after its heading line.
func (d *Doc) ProseBody(s Section) string { return d.Prose[s.BodyStart:s.End] }

// Full returns the text of s including its heading line.
func (d *Doc) Full(s Section) string { return d.Text[s.Start:s.End] }

// LineOf returns the 1-based line number holding byte offset off.
func (d *Doc) LineOf(off int) int {
	return sort.Search(len(d.lineStarts), func(i int) bool { return d.lineStarts[i] > off })
}

// LineCount returns the number of lines (a trailing newline starts an empty last line).
func (d *Doc) LineCount() int { return len(d.lineStarts) }

// Line returns the text of 1-based line n without its newline, or "" when
// n is out of range.
func (d *Doc) Line(n int) string {
	if n < 1 || n > len(d.lineStarts) {
		return ""
	}
	start := d.lineStarts[n-1]
	end := len(d.Text)
	if n < len(d.lineStarts) {
		end = d.lineStarts[n] - 1
	}
	return d.Text[start:end]
}

// ProseLine returns line n of Prose (code blanked).
func (d *Doc) ProseLine(n int) string {
	if n < 1 || n > len(d.lineStarts) {
		return ""
	}
	start := d.lineStarts[n-1]
	end := len(d.Prose)
	if n < len(d.lineStarts) {
		end = d.lineStarts[n] - 1
	}
	return d.Prose[start:end]
}

// InCode reports whether byte offset off lies in code.
func (d *Doc) InCode(off int) bool {
	return off >= 0 && off < len(d.Text) && d.Prose[off] != d.Text[off]
}

// HasCode reports whether any of the bytes in [start, end) lie in code.
func (d *Doc) HasCode(start, end int) bool {
	return d.Prose[start:end] != d.Text[start:end]
}

const spaces = "                                                                "

func writeSpaces(w *strings.Builder, n int) {
	for n > len(spaces) {
		w.WriteString(spaces)
		n -= len(spaces)
	}
	w.WriteString(spaces[:n])
}

// indent returns the number of leading spaces (up to 4) and the rest.
func indent(line string) (int, string) {
	n := 0
	for n < len(line) && n < 4 && line[n] == ' ' {
		n++
	}
	return n, line[n:]
}

func openingFence(line string) (char byte, count int, ok bool) {
	n, rest := indent(line)
	if n > 3 || len(rest) < 3 || (rest[0] != '`' && rest[0] != '~') {
		return 0, 0, false
	}
	char = rest[0]
	for count < len(rest) && rest[count] == char {
		count++
	}
	if count < 3 {
		return 0, 0, false
	}
	// A backtick fence's info string may not contain a backtick; otherwise
	// the line is inline code, not a fence (CommonMark).
	if char == '`' && strings.IndexByte(rest[count:], '`') >= 0 {
		return 0, 0, false
	}
	return char, count, true
}

func isClosingFence(line string, char byte, count int) bool {
	n, rest := indent(line)
	if n > 3 {
		return false
	}
	k := 0
	for k < len(rest) && rest[k] == char {
		k++
	}
	return k >= count && strings.TrimSpace(rest[k:]) == ""
}

func atxHeading(line string) (level int, title string, ok bool) {
	n, rest := indent(line)
	if n > 3 {
		return 0, "", false
	}
	for level < len(rest) && rest[level] == '#' {
		level++
	}
	if level < 1 || level > 6 {
		return 0, "", false
	}
	rest = rest[level:]
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return 0, "", false // "#hashtag" is not a heading
	}
	title = strings.TrimSpace(rest)
	// Drop an optional closing sequence of #s preceded by a space.
	if t := strings.TrimRight(title, "#"); t != title && (t == "" || strings.HasSuffix(t, " ") || strings.HasSuffix(t, "\t")) {
		title = strings.TrimSpace(t)
	}
	return level, title, true
}

// writeMaskedLine writes line with its inline code spans blanked. A span
// opens with a run of n backticks and closes at the next run of exactly n
// backticks; an unmatched run is literal text. Matching uses, per run
// length, a cursor that only moves forward, so a line with many runs costs
// time linear in its length.
func writeMaskedLine(w *strings.Builder, line string) {
	if strings.IndexByte(line, '`') < 0 {
		w.WriteString(line)
		return
	}
	type run struct{ pos, n int }
	var small [16]run
	runs := small[:0]
	for i := 0; i < len(line); {
		if line[i] != '`' {
			i++
			continue
		}
		j := i
		for j < len(line) && line[j] == '`' {
			j++
		}
		runs = append(runs, run{i, j - i})
		i = j
	}
	written := 0
	mask := func(from, to int) {
		w.WriteString(line[written:from])
		writeSpaces(w, to-from)
		written = to
	}
	if len(runs) <= len(small) {
		// Few runs (the usual case): a direct search costs at most 16² steps
		// and allocates nothing.
		for k := 0; k < len(runs); {
			closer := -1
			for m := k + 1; m < len(runs); m++ {
				if runs[m].n == runs[k].n {
					closer = m
					break
				}
			}
			if closer < 0 {
				k++ // no closer: literal backticks
				continue
			}
			mask(runs[k].pos, runs[closer].pos+runs[closer].n)
			k = closer + 1
		}
	} else {
		byLen := map[int][]int{} // run length → indexes into runs, ascending
		for k, r := range runs {
			byLen[r.n] = append(byLen[r.n], k)
		}
		cursor := map[int]int{} // run length → next candidate in byLen[n]
		for k := 0; k < len(runs); {
			r := runs[k]
			list := byLen[r.n]
			c := cursor[r.n]
			for c < len(list) && list[c] <= k {
				c++
			}
			cursor[r.n] = c
			if c == len(list) {
				k++
				continue
			}
			closer := runs[list[c]]
			mask(r.pos, closer.pos+closer.n)
			k = list[c] + 1
		}
	}
	w.WriteString(line[written:])
}

// OpeningFence reports whether line opens a fenced code block: its fence
// character ('`' or '~'), the fence's length, and the info string after
// it, trimmed ("markdown" for "```markdown").
func OpeningFence(line string) (char byte, count int, info string, ok bool) {
	char, count, ok = openingFence(line)
	if !ok {
		return 0, 0, "", false
	}
	_, rest := indent(line)
	return char, count, strings.TrimSpace(rest[count:]), true
}

// ClosingFence reports whether line closes a block opened by a fence of
// count chars.
func ClosingFence(line string, char byte, count int) bool { return isClosingFence(line, char, count) }

// ATXHeading reports whether line is an ATX heading, with its level and
// title (trimmed, closing #s removed).
func ATXHeading(line string) (level int, title string, ok bool) { return atxHeading(line) }

// LineStart returns the byte offset in Text of the first byte of 1-based
// line n, or len(Text) when n is out of range.
func (d *Doc) LineStart(n int) int {
	if n < 1 || n > len(d.lineStarts) {
		return len(d.Text)
	}
	return d.lineStarts[n-1]
}

// contentLead returns the first byte of s (a line without its indentation)
// after quote markers, heading marks or a list marker and the spaces after
// them; 0 when nothing follows them.
func contentLead(s string) byte {
	i := 0
	skip := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	for i < len(s) && s[i] == '>' {
		i++
		skip()
	}
	if i >= len(s) {
		return 0
	}
	switch c := s[i]; {
	case c == '#':
		j := i
		for j < len(s) && s[j] == '#' {
			j++
		}
		if j == len(s) || s[j] == ' ' || s[j] == '\t' {
			i = j
			skip()
		}
	case c == '-' || c == '*' || c == '+':
		if i+1 < len(s) && (s[i+1] == ' ' || s[i+1] == '\t') {
			i++
			skip()
		}
	case c >= '0' && c <= '9':
		j := i
		for j < len(s) && j-i < 9 && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j+1 < len(s) && (s[j] == '.' || s[j] == ')') && (s[j+1] == ' ' || s[j+1] == '\t') {
			i = j + 1
			skip()
		}
	}
	if i >= len(s) {
		return 0
	}
	return s[i]
}
