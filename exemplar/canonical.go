package exemplar

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/markdown"
)

// Canonical holds the Tier 1 examples: the authoritative Engineer and
// Reviewer outputs of the workflow spec's Section 7 (ExtractCanonical), or
// examples the host supplies itself. Either may be empty, which makes that
// role fall through to the next tier.
type Canonical struct {
	Engineer string // a "## Gap Resolution:" block
	Reviewer string // a "## Review:" block
}

// For returns the example of role ("engineer" or "reviewer", any case), or
// "" when there is none.
func (c Canonical) For(role gap.Role) string {
	switch normalizeRole(role) {
	case gap.Engineer:
		return c.Engineer
	case gap.Reviewer:
		return c.Reviewer
	}
	return ""
}

// extractFailure is the type of the sentinel errors of ExtractCanonical; a
// constant type, so the sentinels cannot be reassigned.
type extractFailure string

func (f extractFailure) Error() string { return string(f) }

// Why ExtractCanonical found no example (GAP-FLOW-018: the engine logs the
// reason and falls through to the next tier). Match with errors.Is.
const (
	// ErrNoExamplesSection: no heading of level 1 to 3 numbered 7 ("7.",
	// "7 ", "Section 7", "§7") or with "example" in its title.
	ErrNoExamplesSection = extractFailure("no examples section")
	// ErrNoExamples: a candidate section exists but holds no block of the
	// role ("## Gap Resolution:" or "## Review:"), fenced or not.
	ErrNoExamples = extractFailure("no example block")
	// ErrMalformedExample: the role's block has a heading and nothing else.
	ErrMalformedExample = extractFailure("malformed example")
)

// ExtractError describes why ExtractCanonical could not extract an example.
// It wraps one of ErrNoExamplesSection, ErrNoExamples or ErrMalformedExample.
type ExtractError struct {
	Role   gap.Role // gap.Engineer or gap.Reviewer; "" when it concerns both
	Line   int      // 1-based source line of the section or block concerned; 0 when none
	Err    error    // the sentinel
	Detail string   // what was looked for and where
}

// Error reads like "exemplar: canonical reviewer example: no example block:
// section "7. Examples" holds no "## Review:" block (line 12)".
func (e *ExtractError) Error() string {
	var b strings.Builder
	b.WriteString("exemplar: ")
	if e.Role != "" {
		b.WriteString("canonical " + string(e.Role) + " example: ")
	}
	b.WriteString(e.Err.Error())
	if e.Detail != "" {
		b.WriteString(": " + e.Detail)
	}
	if e.Line > 0 {
		b.WriteString(" (line " + strconv.Itoa(e.Line) + ")")
	}
	return b.String()
}

// Unwrap returns the sentinel.
func (e *ExtractError) Unwrap() error { return e.Err }

// ExtractCanonical reads the Tier 1 examples from the session's source
// document (extract_canonical_examples, GAP-FLOW-008 §2).
//
// It looks for the examples section among headings of level 1 to 3: first
// one numbered 7 ("7. Examples", "7.1 Example session", "Section 7: …",
// "§7"), then one whose title contains "example" (any case). The section
// runs to the next heading of its level or higher, except that
// unfenced example blocks inside it do not end it. In the first candidate
// that holds any example, the Engineer example is the first block headed
// "Gap Resolution:" and the Reviewer example the first headed "Review:" (any
// heading level), whether written out or inside a fenced code block (an
// example session artifact, Section 7.1). A block runs to the next heading
// of its level or higher, within the section or the fence; it starts at
// its heading, so YAML frontmatter before it is left out, and the source's
// own frontmatter is ignored. A block with nothing under its heading is
// malformed and skipped.
//
// The returned Canonical holds every example found. The error is nil when
// both were found; otherwise it describes each missing role (an
// *ExtractError per role, joined), and callers should still use what was
// found, as with io.Reader. Scanning is linear in the size of source.
func ExtractCanonical(source string) (Canonical, error) {
	doc := markdown.Parse(blankFrontmatter(markdown.Normalize(source)))
	regions := examplesRegions(doc)
	if len(regions) == 0 {
		return Canonical{}, &ExtractError{Err: ErrNoExamplesSection,
			Detail: `no heading of level 1-3 numbered 7 ("7.", "Section 7") or titled "Examples"`}
	}
	var chosen *regionExamples
	var tried []regionExamples
	for _, r := range regions {
		found := scanRegion(doc, r)
		tried = append(tried, found)
		if found.engineer.text != "" || found.reviewer.text != "" {
			chosen = &tried[len(tried)-1]
			break
		}
	}
	if chosen == nil {
		// A malformed block is the more useful reason, so report it for its
		// role; a role with none gets the plain "no block" reason.
		var errs []error
		anyMalformed := false
		for _, role := range []gap.Role{gap.Engineer, gap.Reviewer} {
			reason := tried[0].missing(role)
			for _, f := range tried {
				if f.of(role).malformedLine > 0 {
					reason, anyMalformed = f.missing(role), true
					break
				}
			}
			errs = append(errs, reason)
		}
		if anyMalformed {
			return Canonical{}, errors.Join(errs...)
		}
		detail := fmt.Sprintf("section %q holds no %q or %q block", regions[0].section.Title, "## Gap Resolution:", "## Review:")
		if n := len(regions) - 1; n > 0 {
			detail += fmt.Sprintf("; %d other candidate section(s) hold none either", n)
		}
		return Canonical{}, &ExtractError{Err: ErrNoExamples, Line: regions[0].section.Line, Detail: detail}
	}
	c := Canonical{Engineer: chosen.engineer.text, Reviewer: chosen.reviewer.text}
	var errs []error
	for _, role := range []gap.Role{gap.Engineer, gap.Reviewer} {
		if chosen.of(role).text == "" {
			errs = append(errs, chosen.missing(role))
		}
	}
	return c, errors.Join(errs...)
}

// region is a candidate examples section: its heading and where it ends.
type region struct {
	section markdown.Section
	end     int
}

// examplesRegions lists the candidate sections in preference order: those
// numbered 7, then those titled "example…", each group in document order. A
// candidate inside an earlier one is skipped (it holds nothing the outer
// one did not), which also keeps every scan linear: the candidates of one
// group do not overlap.
func examplesRegions(doc *markdown.Doc) []region {
	numbered := candidates(doc, numberedSeven, nil)
	return append(numbered, candidates(doc, titledExamples, numbered)...)
}

// candidates returns the non-overlapping sections of level 1 to 3 whose title
// matches, in document order, skipping any that starts inside one of skip
// (which is in document order and non-overlapping).
func candidates(doc *markdown.Doc, match func(string) bool, skip []region) []region {
	var out []region
	lastEnd, j := 0, 0
	for i, s := range doc.Sections() {
		for j < len(skip) && skip[j].end <= s.Start {
			j++
		}
		inSkipped := j < len(skip) && skip[j].section.Start <= s.Start
		if s.Level > 3 || s.Start < lastEnd || inSkipped || !match(s.Title) {
			continue
		}
		r := region{section: s, end: regionEnd(doc, i)}
		out = append(out, r)
		lastEnd = r.end
	}
	return out
}

// regionEnd is where candidate section i ends: at the next heading of its
// level or higher that is neither an example block's heading nor inside
// one (an unfenced "## Gap Resolution:" in a "## 7." section would
// otherwise end it).
func regionEnd(doc *markdown.Doc, i int) int {
	sections := doc.Sections()
	s := sections[i]
	blockEnd := -1
	for _, h := range sections[i+1:] {
		switch {
		case h.Start < blockEnd:
		case isExampleHeading(h.Title):
			blockEnd = h.End
		case h.Level <= s.Level:
			return h.Start
		}
	}
	return len(doc.Text)
}

// numberedSeven matches "7", "7. Examples", "7.1 …", "Section 7: …", "§ 7".
func numberedSeven(title string) bool {
	t := strings.TrimSpace(title)
	if hasPrefixFold(t, "section") {
		t = t[len("section"):]
	} else if strings.HasPrefix(t, "§") {
		t = t[len("§"):]
	}
	t = strings.TrimSpace(t)
	return strings.HasPrefix(t, "7") && (len(t) == 1 || t[1] < '0' || t[1] > '9')
}

func titledExamples(title string) bool { return strings.Contains(strings.ToLower(title), "example") }

func isExampleHeading(title string) bool {
	return hasPrefixFold(title, "Gap Resolution:") || hasPrefixFold(title, "Review:")
}

// block is the first well-formed example of one role in a region, or the
// line of the first malformed one.
type block struct {
	text          string
	pos           int // byte offset in the source, for document order
	line          int
	malformedLine int
}

// regionExamples is what one candidate section holds.
type regionExamples struct {
	region             region
	engineer, reviewer block
}

func (r *regionExamples) of(role gap.Role) *block {
	if role == gap.Engineer {
		return &r.engineer
	}
	return &r.reviewer
}

// missing explains why role has no example in r.
func (r *regionExamples) missing(role gap.Role) error {
	heading := "## Gap Resolution:"
	if role == gap.Reviewer {
		heading = "## Review:"
	}
	if b := r.of(role); b.malformedLine > 0 {
		return &ExtractError{Role: role, Err: ErrMalformedExample, Line: b.malformedLine,
			Detail: fmt.Sprintf("the %q block has nothing under its heading", heading)}
	}
	return &ExtractError{Role: role, Err: ErrNoExamples, Line: r.region.section.Line,
		Detail: fmt.Sprintf("section %q holds no %q block", r.region.section.Title, heading)}
}

// offer records a candidate block for role, keeping the first well-formed
// one in document order.
func (r *regionExamples) offer(role gap.Role, text string, pos, line int) {
	b := r.of(role)
	// Judge the block as it would be returned: a trailing separator is
	// trimmed, so it must not count as a body.
	text = trimEnd(text)
	if !wellFormed(text) {
		if b.malformedLine == 0 {
			b.malformedLine = line
		}
		return
	}
	if b.text == "" || pos < b.pos {
		*b = block{text: text, pos: pos, line: line, malformedLine: b.malformedLine}
	}
}

// wellFormed reports whether a block has anything under its heading line.
func wellFormed(text string) bool {
	i := strings.IndexByte(text, '\n')
	return i >= 0 && strings.TrimSpace(text[i+1:]) != ""
}

func roleOfHeading(title string) gap.Role {
	switch {
	case hasPrefixFold(title, "Gap Resolution:"):
		return gap.Engineer
	case hasPrefixFold(title, "Review:"):
		return gap.Reviewer
	}
	return ""
}

// scanRegion finds the example blocks of region r: headings outside code,
// and headings inside each fenced block (parsed as a document of its own).
func scanRegion(doc *markdown.Doc, r region) regionExamples {
	found := regionExamples{region: r}
	sections := doc.Sections()
	first := sort.Search(len(sections), func(i int) bool { return sections[i].Start >= r.section.BodyStart })
	for _, s := range sections[first:] {
		if s.Start >= r.end {
			break
		}
		if role := roleOfHeading(s.Title); role != "" {
			found.offer(role, doc.Text[s.Start:min(s.End, r.end)], s.Start, s.Line)
		}
	}
	for _, f := range fencedBlocks(doc, r.section.BodyStart, r.end) {
		sub := markdown.Parse(blankFrontmatter(f.content))
		seen := map[gap.Role]bool{}
		for _, s := range sub.Sections() {
			role := roleOfHeading(s.Title)
			if role == "" || seen[role] {
				continue
			}
			seen[role] = true
			found.offer(role, sub.Full(s), f.start+s.Start, f.line+s.Line-1)
		}
	}
	return found
}

// fence is the content of one fenced code block.
type fence struct {
	content string // the lines between the fences, de-indented like the opening fence
	start   int    // byte offset of the first content line
	line    int    // its 1-based line number
}

// fencedBlocks returns the fenced code blocks in doc.Text[start:end], which
// must begin outside code. The scanner marks which bytes are code but does
// not export fence boundaries, so the opening and closing rules are
// repeated here (openingFence, closesFence); they are only applied to lines
// the scanner already blanked, so the two cannot disagree about what is
// code.
func fencedBlocks(doc *markdown.Doc, start, end int) []fence {
	var out []fence
	var open struct {
		on           bool
		char         byte
		count, inset int
		start, line  int
		lines        []string
	}
	emit := func() {
		out = append(out, fence{content: strings.Join(open.lines, "\n"), start: open.start, line: open.line})
		open.on, open.lines = false, nil
	}
	for ls := start; ls < end; {
		le := strings.IndexByte(doc.Text[ls:end], '\n')
		next := 0
		if le < 0 {
			le, next = end, end
		} else {
			le += ls
			next = le + 1
		}
		line := doc.Text[ls:le]
		switch {
		case open.on && closesFence(line, open.char, open.count):
			emit()
		case open.on:
			open.lines = append(open.lines, dedent(line, open.inset))
		case strings.TrimSpace(line) != "" && strings.TrimSpace(doc.Prose[ls:le]) == "":
			if inset, char, count, ok := openingFence(line); ok {
				open.on, open.char, open.count, open.inset = true, char, count, inset
				open.start, open.line = next, doc.LineOf(ls)+1
			}
		}
		ls = next
	}
	if open.on {
		emit() // an unterminated fence runs to the end, as the scanner reads it
	}
	return out
}

// openingFence mirrors internal/markdown: up to three spaces, then three or
// more backticks or tildes; a backtick fence's info string has no backtick.
func openingFence(line string) (inset int, char byte, count int, ok bool) {
	for inset < len(line) && inset < 4 && line[inset] == ' ' {
		inset++
	}
	rest := line[inset:]
	if inset > 3 || len(rest) < 3 || (rest[0] != '`' && rest[0] != '~') {
		return 0, 0, 0, false
	}
	char = rest[0]
	for count < len(rest) && rest[count] == char {
		count++
	}
	if count < 3 || (char == '`' && strings.IndexByte(rest[count:], '`') >= 0) {
		return 0, 0, 0, false
	}
	return inset, char, count, true
}

// closesFence mirrors internal/markdown: up to three spaces, at least count
// fence characters, then only white space.
func closesFence(line string, char byte, count int) bool {
	n := 0
	for n < len(line) && n < 4 && line[n] == ' ' {
		n++
	}
	if n > 3 {
		return false
	}
	rest := line[n:]
	k := 0
	for k < len(rest) && rest[k] == char {
		k++
	}
	return k >= count && strings.TrimSpace(rest[k:]) == ""
}

// dedent removes up to n leading spaces, as a fence's indentation is
// removed from its content.
func dedent(line string, n int) string {
	i := 0
	for i < n && i < len(line) && line[i] == ' ' {
		i++
	}
	return line[i:]
}

// frontmatterEnd returns the byte offset just past a leading YAML
// frontmatter block ("---" line, then lines up to a closing "---" or "..."
// line), or 0 when text does not start with one.
func frontmatterEnd(text string) int {
	first := strings.IndexByte(text, '\n')
	if first < 0 || strings.TrimRight(text[:first], " \t") != "---" {
		return 0
	}
	for ls := first + 1; ls < len(text); {
		le := strings.IndexByte(text[ls:], '\n')
		next := len(text)
		if le < 0 {
			le = len(text)
		} else {
			le += ls
			next = le + 1
		}
		if t := strings.TrimRight(text[ls:le], " \t"); t == "---" || t == "..." {
			return next
		}
		ls = next
	}
	return 0 // unterminated: not frontmatter
}

// blankFrontmatter empties the lines of a leading frontmatter block but keeps
// its newlines, so YAML comments ("# …") are not read as headings and line
// numbers still match the source.
func blankFrontmatter(text string) string {
	end := frontmatterEnd(text)
	if end == 0 {
		return text
	}
	return strings.Repeat("\n", strings.Count(text[:end], "\n")) + text[end:]
}

// stripFrontmatter removes a leading frontmatter block.
func stripFrontmatter(text string) string { return text[frontmatterEnd(text):] }
