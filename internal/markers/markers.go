// Package markers finds the places a draft spec marks as open itself,
// without a model (DESIGN §19, "markers first"): TBD and TODO, "to be
// determined", "unspecified", "not (yet) specified", "is/are (still)
// open", "remain(s) open", "open question", (GAP-…) annotations, and
// question lines the draft leaves unanswered. Each marker is the sentence
// it sits in, with its heading path and line, in document order.
//
// Discovery sends the scan to the model with the spec; `refine gaps
// --offline` turns it into a gap list for a person to edit (Candidates).
//
// What is not a marker, and why:
//   - anything in code: fenced blocks and inline code are examples (a
//     template's "- [ ] Consistent with related specs?" or "GAP-XXX");
//   - a range of IDs, "(GAP-API-001 … GAP-API-005)": it names gaps tracked
//     elsewhere in the draft, each of which is a marker where it stands;
//   - a mark in a conditional clause ("if the header is not specified, …",
//     "while the stream is open"): it states a rule, not an open point;
//   - "is open" followed by for/to/until/… ("open for 30 seconds") and
//     "open-ended";
//   - task-list items ("- [ ] …"): they are checks, not questions;
//   - a question answered by the line after it (any text that is not
//     another question, a sibling list item or a heading that ends it);
//   - "open question" in a heading: the questions under it are the markers.
//
// One sentence gives one marker, whatever marks it carries, except that a
// sentence annotated with several gap IDs gives one marker per ID; an ID
// annotated again later in the draft gives no second marker.
//
// The package is pure (no I/O, no goroutines) and runs in time linear in
// the spec.
package markers

import (
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/markdown"
	"github.com/refine-spec/refine/internal/termtext"
)

// Kind is what marks a sentence as open.
type Kind string

// The kinds of mark.
const (
	// TBD: "TBD", or "to be determined", "to be decided", "to be defined".
	TBD Kind = "TBD"
	// TODO: "TODO" in capitals ("todo" is a word of many specs).
	TODO Kind = "TODO"
	// Unspecified: "unspecified", "not specified", "not yet specified".
	Unspecified Kind = "unspecified"
	// Open: "is open", "are open", "is still open", "remain(s) open".
	Open Kind = "open"
	// OpenQuestion: "open question(s)".
	OpenQuestion Kind = "open question"
	// Annotation: a gap ID in parentheses, "(GAP-API-004)".
	Annotation Kind = "annotation"
	// Question: a line ending in "?" that no answer follows.
	Question Kind = "question"
)

// Mark is one mark in a sentence: its kind and its text as written.
type Mark struct {
	Kind Kind
	Text string
}

// Marker is one sentence the draft marks as open.
type Marker struct {
	// ID is the gap ID a (GAP-…) annotation gives the sentence; "" when
	// it has none.
	ID gap.ID
	// Marks are the sentence's marks in order.
	Marks []Mark
	// Headings is the heading path, outermost first, titles as written.
	Headings []string
	// Sentence is the sentence as written, whitespace collapsed to single
	// spaces and characters a terminal acts on replaced by spaces.
	Sentence string
	// Line is the 1-based line the sentence starts on.
	Line int
	// Severity is what a word of the sentence says (SeverityOf), else MEDIUM.
	Severity gap.Severity
}

// Scan returns the markers of spec in document order.
func Scan(spec string) []Marker {
	d := markdown.Parse(spec)
	s := scanner{d: d, seenID: map[gap.ID]bool{}}
	s.classify()
	s.blocks()
	return s.out
}

// lineInfo is what the scan knows of one line.
type lineInfo struct {
	blank     bool // nothing outside code (a fence line, an empty line)
	rawBlank  bool // nothing at all
	heading   int  // heading level, 0 for none
	hidx      int  // the heading's index in Doc.Headings
	item      bool // starts a list item
	task      bool // a task-list item, "- [ ] …"
	table     bool // a table row
	indent    int  // the list item's indent (the item it continues, for a continuation line)
	inItem    bool // part of a list item (its first line or a continuation)
	contentAt int  // offset of the text after list, quote or heading markers
	question  bool // ends in "?" outside code
}

type scanner struct {
	d      *markdown.Doc
	lines  []lineInfo // index n-1 for line n
	path   []markdown.Heading
	seenID map[gap.ID]bool
	out    []Marker
}

// classify reads every line's shape.
func (s *scanner) classify() {
	n := s.d.LineCount()
	s.lines = make([]lineInfo, n)
	item, itemIndent, next := false, 0, 0 // next: the first heading not passed
	for i := range n {
		raw, prose := s.d.Line(i+1), s.d.ProseLine(i+1)
		li := &s.lines[i]
		li.rawBlank = strings.TrimSpace(raw) == ""
		li.blank = strings.TrimSpace(prose) == ""
		isHeading := next < len(s.d.Headings) && s.d.Headings[next].Line == i+1
		if isHeading {
			li.hidx = next
			next++
		}
		switch {
		case li.blank:
			// A blank line ends a paragraph, not a list item: a continuation
			// after it is still the item's.
		case isHeading:
			li.heading = s.d.Headings[li.hidx].Level
			li.contentAt = len(raw) - len(strings.TrimLeft(raw, " #"))
			item = false
		default:
			at := len(prose) - len(strings.TrimLeft(prose, " \t"))
			if strings.HasPrefix(prose[at:], ">") {
				at = skipQuote(prose, at)
			}
			if ind, textAt, ok := listItem(prose, at); ok {
				li.item, li.indent, at = true, ind, textAt
				item, itemIndent = true, ind
				if t := prose[at:]; strings.HasPrefix(t, "[ ]") || strings.HasPrefix(t, "[x]") || strings.HasPrefix(t, "[X]") {
					li.task = true
				}
			} else if strings.HasPrefix(prose[at:], "|") {
				li.table, item = true, false
			} else if item && at > itemIndent {
				li.indent = itemIndent
			} else {
				item = false
			}
			li.inItem = item
			if item {
				li.indent = itemIndent
			}
			li.contentAt = at
		}
		t := strings.TrimRight(prose, " \t*_\"')”’")
		li.question = !li.blank && !li.task && !li.table && strings.HasSuffix(t, "?")
	}
}

// skipQuote returns the offset after the blockquote markers at at.
func skipQuote(s string, at int) int {
	for at < len(s) && (s[at] == '>' || s[at] == ' ' || s[at] == '\t') {
		at++
	}
	return at
}

// listItem recognises a list marker at offset at ("- ", "* ", "+ ", "1. ",
// "1) ") and returns the item's indent and where its text starts.
func listItem(s string, at int) (indent, textAt int, ok bool) {
	i := at
	switch {
	case i < len(s) && strings.IndexByte("-*+", s[i]) >= 0:
		i++
	case i < len(s) && s[i] >= '0' && s[i] <= '9':
		for i < len(s) && i-at < 9 && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i >= len(s) || (s[i] != '.' && s[i] != ')') {
			return 0, 0, false
		}
		i++
	default:
		return 0, 0, false
	}
	if i < len(s) && s[i] != ' ' && s[i] != '\t' {
		return 0, 0, false
	}
	if strings.Trim(s[at:], "-*_ \t") == "" {
		return 0, 0, false // a thematic break, "---" or "* * *"
	}
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return at, i, true
}

// lineEnd reports whether only closing marks and spaces stand between
// offset i and the end of its line.
func lineEnd(p []byte, i int) bool {
	for i < len(p) && p[i] != '\n' {
		if strings.IndexByte(" \t*_\"')", p[i]) >= 0 {
			i++
			continue
		}
		r, size := utf8.DecodeRune(p[i:])
		if r != '”' && r != '’' {
			return false
		}
		i += size
	}
	return true
}

// answered reports whether question line n (1-based) has an answer: the
// next line with any text is neither missing, nor a heading that ends the
// question's section, nor another question, nor a sibling list item.
func (s *scanner) answered(n int) bool {
	q := s.lines[n-1]
	for m := n + 1; m <= len(s.lines); m++ {
		next := s.lines[m-1]
		if next.rawBlank {
			continue
		}
		switch {
		case next.heading > 0:
			return q.heading > 0 && next.heading > q.heading
		case next.question:
			return false
		case q.inItem && next.item && next.indent <= q.indent:
			return false
		}
		return true
	}
	return false
}

// block is a run of lines read as one text: a paragraph, a list item with
// its continuation lines, a heading or a table row. text and prose are the
// lines' contents joined by "\n"; starts maps each joined line to its
// line number.
type block struct {
	text, prose []byte
	starts      []struct{ at, line int }
}

func (b *block) add(text, prose string, line int) {
	if len(b.text) > 0 {
		b.text, b.prose = append(b.text, '\n'), append(b.prose, '\n')
	}
	b.starts = append(b.starts, struct{ at, line int }{len(b.text), line})
	b.text, b.prose = append(b.text, text...), append(b.prose, prose...)
}

// lineOf returns the line number of joined offset at.
func (b *block) lineOf(at int) int {
	i := sort.Search(len(b.starts), func(i int) bool { return b.starts[i].at > at })
	return b.starts[max(i-1, 0)].line
}

// blocks walks the lines, cutting them into blocks and each block into
// sentences.
func (s *scanner) blocks() {
	var cur block
	flush := func() {
		if len(cur.text) > 0 {
			s.sentences(&cur)
		}
		cur = block{}
	}
	for i, li := range s.lines {
		n := i + 1
		raw, prose := s.d.Line(n), s.d.ProseLine(n)
		switch {
		case li.blank:
			flush()
			continue
		case li.heading > 0:
			flush()
			h := s.d.Headings[li.hidx]
			for len(s.path) > 0 && s.path[len(s.path)-1].Level >= h.Level {
				s.path = s.path[:len(s.path)-1]
			}
			s.path = append(s.path, h)
			cur.add(raw[li.contentAt:], prose[li.contentAt:], n)
			flush()
			continue
		case li.item, li.table:
			flush()
		}
		at := li.contentAt
		if len(cur.text) > 0 {
			at = len(raw) - len(strings.TrimLeft(raw, " \t")) // a continuation keeps its quote marks
		}
		cur.add(raw[at:], prose[at:], n)
		if li.table {
			flush()
		}
	}
	flush()
}

// sentences cuts a block into sentences and records the marked ones.
func (s *scanner) sentences(b *block) {
	start := 0
	for i := 0; i < len(b.prose); i++ {
		c := b.prose[i]
		if c != '.' && c != '!' && c != '?' {
			continue
		}
		end := i + 1
		for end < len(b.prose) && strings.IndexByte(`)"'*_`, b.prose[end]) >= 0 {
			end++
		}
		if end < len(b.prose) && b.prose[end] != ' ' && b.prose[end] != '\n' && b.prose[end] != '\t' && !closingQuoteAt(b.prose, end) {
			continue
		}
		if c == '.' && abbreviation(b.prose[start:i]) {
			continue
		}
		s.sentence(b, start, end)
		start = end
		i = end - 1
	}
	if start < len(b.prose) {
		s.sentence(b, start, len(b.prose))
	}
}

// closingQuoteAt reports whether a typographic closing quote starts at i.
func closingQuoteAt(p []byte, i int) bool {
	r, _ := utf8.DecodeRune(p[i:])
	return r == '”' || r == '’'
}

// abbreviation reports whether the text before a full stop ends in an
// abbreviation that does not end a sentence ("e.g", "i.e", "vs").
func abbreviation(before []byte) bool {
	w := before[max(0, len(before)-6):]
	if k := lastSpace(w); k >= 0 {
		w = w[k+1:]
	}
	switch strings.ToLower(string(w)) {
	case "e.g", "i.e", "vs", "cf", "approx", "incl", "etc", "no", "fig", "sec":
		return true
	}
	return false
}

func lastSpace(b []byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == ' ' || b[i] == '\n' || b[i] == '\t' || b[i] == '(' {
			return i
		}
	}
	return -1
}

// wordMarks are the marks written as words. Case matters for TBD and
// TODO only; every other mark is read in any case, across line breaks.
var wordMarks = regexp.MustCompile(`\b(?:TBD|TODO)\b|(?i:\b(?:unspecified|not\s+(?:yet\s+)?specified|to\s+be\s+(?:determined|decided|defined)|(?:is|are)\s+(?:still\s+)?open|remains?\s+open|open\s+questions?)\b)`)

// conditionals open a clause that states a rule rather than an open point;
// states are conditionals wherever they stand in the clause before a mark
// ("writes succeed while the file is open"), where "when" may describe the
// open point itself ("the behaviour when a limit is hit is open").
var (
	conditionals = [...]string{"if ", "when ", "whenever ", "unless ", "where ", "while ", "until ", "once ", "as long as "}
	states       = [...]string{" while ", " until ", " whenever ", " as long as "}
)

// notOpen are the words after "is open" that make it a state, not a gap.
var notOpen = map[string]bool{"for": true, "to": true, "until": true, "while": true, "during": true, "when": true,
	"as": true, "on": true, "in": true, "at": true, "by": true, "after": true, "before": true, "from": true, "with": true}

// sentence records the sentence [a, b) of block bl when it is marked.
func (s *scanner) sentence(bl *block, a, b int) {
	prose := string(bl.prose[a:b])
	var marks []Mark
	var kinds []Kind
	for _, m := range wordMarks.FindAllStringIndex(prose, -1) {
		k := wordKind(prose[m[0]:m[1]])
		if k != TBD && k != TODO && (conditional(prose[:m[0]]) || (k == Open && stateOfBeingOpen(prose[m[1]:]))) {
			continue
		}
		marks = append(marks, Mark{k, collapse(string(bl.text[a+m[0] : a+m[1]]))})
	}
	var ids []gap.ID
	if strings.Contains(prose, "GAP-") {
		for _, an := range annotations(prose) {
			marks = append(marks, Mark{Annotation, collapse(string(bl.text[a+an.start : a+an.end]))})
			ids = append(ids, an.ids...)
		}
	}
	if t := strings.TrimRight(prose, " \t\n*_\"')”’"); strings.HasSuffix(t, "?") && lineEnd(bl.prose, a+len(t)) {
		if line := bl.lineOf(a + len(t) - 1); s.lines[line-1].question && !s.answered(line) {
			marks = append(marks, Mark{Question, collapse(string(bl.text[a:b]))})
		}
	}
	if len(marks) == 0 {
		return
	}
	if s.lines[bl.lineOf(a)-1].heading > 0 && onlyOpenQuestion(marks) {
		return
	}
	for _, m := range marks {
		kinds = append(kinds, m.Kind)
	}
	sentence := collapse(string(bl.text[a:b]))
	if sentence == "" {
		return
	}
	mk := Marker{Marks: marks, Headings: s.headings(), Sentence: sentence, Line: bl.lineOf(a + leadingSpace(prose)), Severity: SeverityOf(sentence)}
	if len(ids) == 0 {
		s.out = append(s.out, mk)
		return
	}
	for _, id := range ids {
		if s.seenID[id] {
			continue
		}
		s.seenID[id] = true
		m := mk
		m.ID = id
		s.out = append(s.out, m)
	}
}

func leadingSpace(s string) int { return len(s) - len(strings.TrimLeft(s, " \t\n")) }

func onlyOpenQuestion(marks []Mark) bool {
	for _, m := range marks {
		if m.Kind != OpenQuestion {
			return false
		}
	}
	return true
}

func (s *scanner) headings() []string {
	if len(s.path) == 0 {
		return nil
	}
	out := make([]string, len(s.path))
	for i, h := range s.path {
		out[i] = collapse(h.Title)
	}
	return out
}

// wordKind names the kind of a word mark.
func wordKind(w string) Kind {
	switch low := strings.ToLower(w); {
	case w == "TODO":
		return TODO
	case w == "TBD", strings.HasPrefix(low, "to"):
		return TBD
	case strings.HasPrefix(low, "open"):
		return OpenQuestion
	case strings.HasSuffix(low, "open"):
		return Open
	}
	return Unspecified
}

// conditional reports whether the clause before a mark opens with a
// conditional ("if the header is …"). It looks back at most a short
// clause's length, so a long sentence costs no more than a short one.
func conditional(before string) bool {
	w := before[max(0, len(before)-200):]
	if i := strings.LastIndexAny(w, ",;:(\n—–"); i >= 0 {
		w = w[i+1:]
	}
	w = strings.ToLower(strings.TrimLeft(w, " \t*_"))
	for _, c := range conditionals {
		if strings.HasPrefix(w, c) {
			return true
		}
	}
	for _, c := range states {
		if strings.Contains(w, c) {
			return true
		}
	}
	return false
}

// stateOfBeingOpen reports whether the text after "is open" makes it a
// state ("open for 30 s", "open-ended").
func stateOfBeingOpen(after string) bool {
	if strings.HasPrefix(after, "-") {
		return true
	}
	f := strings.Fields(after[:min(len(after), 40)])
	return len(f) > 0 && notOpen[strings.ToLower(f[0])]
}

// annotation is one "(GAP-…)" group: its offsets in the sentence and IDs.
type annotation struct {
	start, end int
	ids        []gap.ID
}

// annotations finds the parenthesised groups that hold only gap IDs,
// separated by commas, semicolons or "and", optionally after "see". A
// group that is a range ("GAP-API-001 … GAP-API-005", "– ", "to",
// "through") or holds other words is not an annotation.
func annotations(prose string) []annotation {
	var out []annotation
	for i := 0; i < len(prose); i++ {
		if prose[i] != '(' {
			continue
		}
		j := strings.IndexByte(prose[i+1:min(len(prose), i+1+maxGroup)], ')')
		if j < 0 {
			continue
		}
		group := prose[i+1 : i+1+j]
		if ids := annotationIDs(group); len(ids) > 0 {
			out = append(out, annotation{i, i + j + 2, ids})
		}
		i += j
	}
	return out
}

// maxGroup bounds the text searched for a group's closing parenthesis.
const maxGroup = 200

func annotationIDs(group string) []gap.ID {
	ms := gap.FindIDMatches(group)
	if len(ms) == 0 {
		return nil
	}
	var rest strings.Builder
	var ids []gap.ID
	last := 0
	for _, m := range ms {
		rest.WriteString(group[last:m.Start])
		rest.WriteByte(' ')
		last = m.End
		ids = append(ids, gap.ID(m.ID))
	}
	rest.WriteString(group[last:])
	for _, w := range strings.FieldsFunc(strings.ToLower(rest.String()), func(r rune) bool { return r == ' ' || r == ',' || r == ';' || r == '\t' || r == '\n' }) {
		switch w {
		case "and", "see", "also":
		default:
			return nil // a range ("…", "to", "-") or other words
		}
	}
	return ids
}

// collapse writes s on one line: runs of white space become one space,
// and characters a terminal would act on become spaces too, so a marker's
// sentence can be a gap's title or quoted Location as it is.
func collapse(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	pending := false
	for s != "" {
		cut, size := len(s), 0
		if i, _ := termtext.IndexLine(s); i >= 0 {
			_, size = utf8.DecodeRuneInString(s[i:])
			cut = i
		}
		for _, r := range s[:cut] {
			if unicode.IsSpace(r) {
				pending = true
				continue
			}
			if pending && b.Len() > 0 {
				b.WriteByte(' ')
			}
			pending = false
			b.WriteRune(r)
		}
		if cut == len(s) {
			break
		}
		pending = true
		s = s[cut+size:]
	}
	return b.String()
}
