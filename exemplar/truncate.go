package exemplar

import (
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/refine-spec/refine/internal/markdown"
)

// Token budgets for an attached example (GAP-FLOW-008 §6). The engine's
// Config carries them as fields with these defaults; its Validate rejects
// budgets <= 0, for which every function here returns an empty example.
const (
	RetryBudget   = 2000 // retry prompts: leave room for the prompt and gap context
	InitialBudget = 1000 // initial prompts: examples matter less on a first try
)

// The notices that end a truncated example, from the spec: structural
// truncation uses the wording of §6's "Example of Truncated Output", hard
// truncation the wording of truncate_example.
const (
	StructuralNotice = "[Example truncated for length - see canonical format for full structure]"
	HardNotice       = "[Example truncated for length]"
)

// TruncationKind says how an example was fitted into its budget.
type TruncationKind int

// How Truncate fitted an example.
const (
	// Untruncated: the example fitted as it was.
	Untruncated TruncationKind = iota
	// TruncatedStructurally: sections were kept in priority order and the
	// first that did not fit was abbreviated, then StructuralNotice added.
	TruncatedStructurally
	// TruncatedHard: the text was cut at the budget and HardNotice added
	// (or, when not even the notice fits, cut bare).
	TruncatedHard
)

// String returns "untruncated", "structural" or "hard".
func (k TruncationKind) String() string {
	switch k {
	case Untruncated:
		return "untruncated"
	case TruncatedStructurally:
		return "structural"
	case TruncatedHard:
		return "hard"
	}
	return "TruncationKind(" + strconv.Itoa(int(k)) + ")"
}

// Truncation is an example fitted into a token budget.
type Truncation struct {
	Text           string // the fitted example, notice included
	Kind           TruncationKind
	Tokens         int // tokens of Text
	OriginalTokens int // tokens of the example before fitting
}

// Truncate fits example into budget tokens as counted by tok (nil means
// CharTokenizer), following truncate_example of GAP-FLOW-008 §6:
//
//  1. An example within budget is returned unchanged.
//  2. Structural truncation, when the example has a "Gap Resolution:" or
//     "Review:" heading: its heading block, then its direct subsections in
//     priority order (Engineer: Proposed Solution, Trade-offs, Examples, New
//     Gaps; Reviewer: Critical Issues, High Priority, Medium Priority, Low
//     Priority, Consistency Checks). Each is kept whole while it fits; the
//     first that does not is abbreviated to its heading and the leading
//     paragraphs (or, failing that, lines) that fit, and nothing after it is
//     kept. Other sections are dropped. Cuts never fall inside a fenced code
//     block. StructuralNotice ends the result.
//  3. Otherwise the text is cut hard at the budget and HardNotice appended.
//
// The result, notice included, never counts more than budget tokens; with
// budget <= 0 it is empty.
func Truncate(example string, budget int, tok Tokenizer) Truncation {
	return fit(framed{body: example}, budget, orDefault(tok))
}

// framed is an example together with text that must survive truncation
// whole: head goes before it (a provenance header, a gap list), tail after
// it (a gap list). Parts are separated by one blank line.
type framed struct{ head, body, tail string }

// with assembles the frame around body, with notice after body when set.
func (f framed) with(body, notice string) string { return joinBlocks(f.head, body, notice, f.tail) }

// joinBlocks joins the non-empty parts with a blank line between them.
func joinBlocks(parts ...string) string {
	nonEmpty, only := 0, ""
	for _, p := range parts {
		if p != "" {
			nonEmpty, only = nonEmpty+1, p
		}
	}
	if nonEmpty <= 1 {
		return only // no copy of a lone example
	}
	var b strings.Builder
	for _, p := range parts {
		if p == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(p)
	}
	return b.String()
}

// fit is Truncate for an example with a frame; Select uses it so that a
// provenance header or gap list is never what gets cut.
func fit(f framed, budget int, tok Tokenizer) Truncation {
	whole := f.with(f.body, "")
	t := Truncation{OriginalTokens: tok.Count(whole)}
	switch {
	case whole == "":
		return t
	case budget <= 0:
		t.Kind = TruncatedHard
		return t
	case t.OriginalTokens <= budget:
		t.Text, t.Tokens = whole, t.OriginalTokens
		return t
	}
	fits := func(s string) bool { return tok.Count(s) <= budget }
	if s, ok := truncateStructurally(f, fits); ok {
		t.Text, t.Kind = s, TruncatedStructurally
	} else {
		t.Text, t.Kind = truncateHard(f, whole, budget, tok), TruncatedHard
	}
	t.Tokens = tok.Count(t.Text)
	return t
}

// documentKind is what kind of role output a text is, by its first
// resolution heading.
type documentKind int

const (
	unknownDocument documentKind = iota
	engineerDocument
	reviewerDocument
)

// priorityOf lists the subsections structural truncation keeps, highest
// priority first, as normalised title prefixes (see normalizeTitle). The
// Engineer list is the spec's; the Reviewer list follows the severity order,
// consistency checks last (the spec's "remove first: long consistency check
// lists").
func priorityOf(k documentKind) []string {
	switch k {
	case engineerDocument:
		return []string{"proposedsolution", "tradeoffs", "examples", "newgaps"}
	case reviewerDocument:
		return []string{"criticalissues", "highpriority", "mediumpriority", "lowpriority", "consistencychecks"}
	}
	return nil
}

// resolutionRoot finds the first "Gap Resolution:" or "Review:" heading
// outside code: the block whose header structural truncation must keep.
func resolutionRoot(doc *markdown.Doc) (markdown.Section, documentKind, bool) {
	for _, s := range doc.Sections() {
		switch {
		case hasPrefixFold(s.Title, "Gap Resolution:"):
			return s, engineerDocument, true
		case hasPrefixFold(s.Title, "Review:"):
			return s, reviewerDocument, true
		}
	}
	return markdown.Section{}, unknownDocument, false
}

// directChildren returns the shallowest sections nested in root.
func directChildren(doc *markdown.Doc, root markdown.Section) []markdown.Section {
	within := doc.Within(root)
	level := 7
	for _, s := range within {
		level = min(level, s.Level)
	}
	var out []markdown.Section
	for _, s := range within {
		if s.Level == level {
			out = append(out, s)
		}
	}
	return out
}

// normalizeTitle reduces a heading title to lower-case letters and digits
// without leading numbering, so "3. Trade-offs", "Tradeoffs" and "Trade
// offs" all read "tradeoffs".
func normalizeTitle(title string) string {
	var b strings.Builder
	for _, r := range title {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return strings.TrimLeft(b.String(), "0123456789")
}

// truncateStructurally is truncate_structurally of §6. Every candidate is
// measured as the whole framed text, notice included, so the result fits
// for any Tokenizer, not only one whose counts add up. ok is false when the
// body has no resolution heading or not even that heading fits.
func truncateStructurally(f framed, fits func(string) bool) (string, bool) {
	doc := markdown.Parse(f.body)
	root, kind, ok := resolutionRoot(doc)
	if !ok {
		return "", false
	}
	lines := mapLines(doc)
	children := directChildren(doc, root)
	headerEnd := root.End
	if len(children) > 0 {
		headerEnd = children[0].Start
	}

	var pieces []string
	candidate := func(last string) string {
		all := append(pieces[:len(pieces):len(pieces)], last)
		return f.with(strings.Join(all, "\n\n"), StructuralNotice)
	}
	// keep adds the section [start, end) whole when it fits and reports
	// true, or adds its abbreviation (if any) and reports false: the spec
	// keeps nothing after the first section that does not fit.
	keep := func(start, bodyStart, end int) bool {
		whole := trimEnd(doc.Text[start:lines.safeEnd(bodyStart, end)])
		if fits(candidate(whole)) {
			pieces = append(pieces, whole)
			return true
		}
		short := lines.abbreviate(doc.Text, start, bodyStart, end, func(s string) bool { return fits(candidate(s)) })
		if short != "" {
			pieces = append(pieces, short)
		}
		return false
	}
	if keep(root.Start, root.BodyStart, headerEnd) {
		for _, name := range priorityOf(kind) {
			i := slices.IndexFunc(children, func(s markdown.Section) bool {
				return strings.HasPrefix(normalizeTitle(s.Title), name)
			})
			if i < 0 {
				continue
			}
			if c := children[i]; !keep(c.Start, c.BodyStart, c.End) {
				break
			}
		}
	}
	if len(pieces) == 0 {
		return "", false
	}
	return f.with(strings.Join(pieces, "\n\n"), StructuralNotice), true
}

// truncateHard cuts the example body at the budget, keeping the frame and
// HardNotice. When the frame and notice alone do not fit, it cuts the whole
// text bare: the budget is a hard limit, the notice a courtesy.
func truncateHard(f framed, whole string, budget int, tok Tokenizer) string {
	fits := func(s string) bool { return tok.Count(s) <= budget }
	cut := func(p int) string {
		return f.with(strings.TrimRightFunc(f.body[:p], unicode.IsSpace), HardNotice)
	}
	if !fits(cut(0)) {
		return Prefix(whole, budget, tok)
	}
	if c, ok := tok.(PrefixCutter); ok {
		// Guess the room left by the frame; the guess is at most a token or
		// so off, so a few corrections settle it in linear time.
		room := budget - tok.Count(cut(0))
		for range 8 {
			if room < 0 {
				break
			}
			s := cut(len(c.Prefix(f.body, room)))
			over := tok.Count(s) - budget
			if over <= 0 {
				return s
			}
			room -= over
		}
	}
	p := lastFit(len(f.body)+1, func(p int) bool { return fits(cut(runeBoundary(f.body, p))) })
	return cut(runeBoundary(f.body, p))
}

// trimEnd drops trailing white space and trailing thematic breaks ("---"
// after a blank line, as the spec documents separate sections), which would
// only dangle at the end of a kept piece.
func trimEnd(s string) string {
	for {
		s = strings.TrimRightFunc(s, unicode.IsSpace)
		i := strings.LastIndexByte(s, '\n')
		if i < 0 {
			return s
		}
		switch strings.TrimSpace(s[i+1:]) {
		case "---", "***", "___":
			if strings.HasSuffix(s[:i], "\n") {
				s = s[:i]
				continue
			}
		}
		return s
	}
}

// lineMap classifies the lines of a scanned document so that cut points can
// be chosen outside fenced code. The scanner blanks every byte of a fenced
// block in Prose, but not the newlines, and a blank line looks the same in
// and out of a fence; so a cut at the start of line k is known to be
// outside code when the nearest non-blank line before it is prose (a fence
// cannot open across blank lines) or the nearest one at or after it is
// prose (a fence cannot have ended before it otherwise). A line holding only
// inline code also reads as code, which only makes the rule conservative.
type lineMap struct {
	starts []int  // byte offset of each line
	blank  []bool // white space only
	code   []bool // non-blank, and every non-space byte is code
	// prev[k]: the last non-blank line before line k; next[k]: the first
	// non-blank line at or after k; -1 when none. k ranges over 0..len(starts).
	prev, next []int
}

func mapLines(doc *markdown.Doc) *lineMap {
	m := &lineMap{}
	for start := 0; ; {
		end := strings.IndexByte(doc.Text[start:], '\n')
		if end < 0 {
			end = len(doc.Text)
		} else {
			end += start
		}
		blank := strings.TrimSpace(doc.Text[start:end]) == ""
		m.starts = append(m.starts, start)
		m.blank = append(m.blank, blank)
		m.code = append(m.code, !blank && strings.TrimSpace(doc.Prose[start:end]) == "")
		if end == len(doc.Text) {
			break
		}
		start = end + 1
	}
	n := len(m.starts)
	m.prev, m.next = make([]int, n+1), make([]int, n+1)
	last := -1
	for k := 0; k <= n; k++ {
		m.prev[k] = last
		if k < n && !m.blank[k] {
			last = k
		}
	}
	last = -1
	for k := n; k >= 0; k-- {
		if k < n && !m.blank[k] {
			last = k
		}
		m.next[k] = last
	}
	return m
}

// line returns the index of the line starting at off, or len(starts) for
// the end of the text.
func (m *lineMap) line(off int) int { return sort.SearchInts(m.starts, off) }

// safe reports whether a cut at the start of line k keeps fences balanced.
func (m *lineMap) safe(k int) bool {
	p, n := m.prev[k], m.next[k]
	return p < 0 || !m.code[p] || (n >= 0 && !m.code[n])
}

// safeEnd returns end when a cut there is safe, else the last safe line
// start after bodyStart (a section that runs into an unterminated fence at
// the end of the text loses that fence).
func (m *lineMap) safeEnd(bodyStart, end int) int {
	k := m.line(end)
	if m.safe(k) {
		return end
	}
	for k--; k > m.line(bodyStart); k-- {
		if m.safe(k) {
			return m.starts[k]
		}
	}
	return bodyStart
}

// abbreviate returns the longest abbreviation of the section text[start:end]
// (heading line, then body from bodyStart) that fits: the heading with the
// leading whole paragraphs that fit; when not even the first paragraph
// fits, the leading lines of it that do; else the heading alone; "" when
// not even the heading fits. Every cut is safe (see lineMap).
func (m *lineMap) abbreviate(text string, start, bodyStart, end int, fits func(string) bool) string {
	first, last := m.line(bodyStart), m.line(end)
	piece := func(off int) string { return trimEnd(text[start:off]) }
	// Paragraph cuts: where a run of blank lines starts.
	paragraphs := []int{bodyStart}
	for k := first + 1; k < last; k++ {
		if m.blank[k] && !m.blank[k-1] && m.safe(k) {
			paragraphs = append(paragraphs, m.starts[k])
		}
	}
	i := lastFit(len(paragraphs), func(i int) bool { return fits(piece(paragraphs[i])) })
	if i < 0 {
		return ""
	}
	if i == 0 {
		bound := end
		if len(paragraphs) > 1 {
			bound = paragraphs[1]
		}
		var lines []int
		for k := first + 1; k < last && m.starts[k] < bound; k++ {
			if !m.blank[k-1] && m.safe(k) {
				lines = append(lines, m.starts[k])
			}
		}
		if j := lastFit(len(lines), func(j int) bool { return fits(piece(lines[j])) }); j >= 0 {
			return piece(lines[j])
		}
	}
	return piece(paragraphs[i])
}
