package validate

import (
	"iter"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/refine-spec/refine/internal/markdown"
)

// line is one line of a scanned document. Text and Prose have the same
// length, so an offset found in one is valid in the other.
type line struct {
	n     int    // 1-based line number
	start int    // byte offset of the line in Doc.Text
	text  string // raw text without the newline
	prose string // the same with code blanked
}

// linesIn yields the lines starting in [start, end); start must be a line start.
func linesIn(d *markdown.Doc, start, end int) iter.Seq[line] {
	return func(yield func(line) bool) {
		if start >= end {
			return
		}
		n := d.LineOf(start)
		for off := start; off < end; n++ {
			t := d.Line(n)
			if !yield(line{n: n, start: off, text: t, prose: d.Prose[off : off+len(t)]}) {
				return
			}
			off += len(t) + 1
		}
	}
}

// headingTitle returns the prose and raw text of heading h after its #
// marks, with the offset of that text within the line. Working on the prose
// keeps an ID written as `code` in a header from counting.
func headingTitle(d *markdown.Doc, h markdown.Heading) (prose, raw string) {
	p := d.ProseLine(h.Line)
	r := d.Line(h.Line)
	i := 0
	for i < len(p) && p[i] == ' ' {
		i++
	}
	for i < len(p) && p[i] == '#' {
		i++
	}
	// Skip spaces in the raw line: in the prose, code is spaces too.
	for i < len(r) && (r[i] == ' ' || r[i] == '\t') {
		i++
	}
	return p[i:], r[i:]
}

// hasPrefixFold is strings.HasPrefix ignoring ASCII and Unicode case.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// listItem recognises a list item ("- x", "* x", "+ x", "1. x", "1) x")
// and returns its indent in columns and the offset just after the marker.
// Callers pass the prose, so a list inside a fence is no list, and find the
// text with skipSpace on the raw line (in the prose, code is spaces too). A
// thematic break ("---", "* * *") is not a list item.
func listItem(s string) (indent, textAt int, ok bool) {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		if s[i] == '\t' {
			indent += 4 - indent%4
		} else {
			indent++
		}
		i++
	}
	if i >= len(s) {
		return 0, 0, false
	}
	j := i
	switch c := s[i]; {
	case c == '-' || c == '*' || c == '+':
		if isThematicBreak(s[i:]) {
			return 0, 0, false
		}
		j++
	case c >= '0' && c <= '9':
		for j < len(s) && j-i < 9 && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j >= len(s) || (s[j] != '.' && s[j] != ')') {
			return 0, 0, false
		}
		j++
	default:
		return 0, 0, false
	}
	if j < len(s) && s[j] != ' ' && s[j] != '\t' {
		return 0, 0, false
	}
	return indent, j, true
}

// skipSpace returns the first offset at or after i that is not a space or tab.
func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

func isThematicBreak(s string) bool {
	c, n := s[0], 0
	if c != '-' && c != '*' && c != '_' {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case c:
			n++
		case ' ', '\t':
		default:
			return false
		}
	}
	return n >= 3
}

// skipDecor returns the first offset at or after i that is not markdown
// decoration a writer puts around an identifier: emphasis, brackets, spaces.
func skipDecor(s string, i int) int {
	for i < len(s) && strings.IndexByte(" \t*_[", s[i]) >= 0 {
		i++
	}
	return i
}

// field splits a "Label: value" line, with any emphasis around the label
// ("**Location:** x", "**Location**: x", "- Location: x"), into the
// lower-cased label and the offset just after the colon. ok is false when the line
// does not start with a short label followed by a colon.
func field(s string) (label string, valueAt int, ok bool) {
	i := 0
	if _, at, isItem := listItem(s); isItem {
		i = at
	}
	i = skipDecor(s, i)
	c := strings.IndexByte(s[i:], ':')
	if c <= 0 || c > 40 {
		return "", 0, false
	}
	label = strings.TrimRight(s[i:i+c], " *_")
	for _, r := range label {
		if !unicode.IsLetter(r) && r != ' ' && r != '-' && r != '(' && r != ')' {
			return "", 0, false
		}
	}
	// The value starts right after the colon; callers trim the raw text,
	// since in the prose an inline-code value is spaces too.
	return strings.ToLower(label), i + c + 1, true
}

// isNone reports whether an entry's text only says there is nothing to list
// ("None", "None found.", "N/A", "None - the design is sound").
func isNone(s string) bool {
	s = strings.TrimLeft(s, " \t*_[\"'")
	low := strings.ToLower(s)
	if strings.HasPrefix(low, "n/a") {
		return true
	}
	if !strings.HasPrefix(low, "none") {
		return false
	}
	r, _ := utf8.DecodeRuneInString(low[4:])
	return len(low) == 4 || !unicode.IsLetter(r)
}

// trimEmphasis removes an unbalanced trailing "**" or "__" left when an
// emphasised span was cut at an identifier.
func trimEmphasis(s string) string {
	s = strings.TrimSpace(s)
	for _, m := range []string{"**", "__"} {
		if strings.Count(s, m)%2 == 1 {
			s = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(s, m), m))
		}
	}
	return s
}

// quote shortens s for a message.
func quote(s string) string {
	s = strings.TrimSpace(s)
	const max = 80
	if utf8.RuneCountInString(s) > max {
		r := []rune(s)
		s = string(r[:max]) + "…"
	}
	return `"` + s + `"`
}

// rawLine returns the 1-based line of byte offset off in unnormalised
// content, counting CRLF, LF and lone CR as one break each, as the scanner does.
func rawLine(content string, off int) int {
	n := 1
	for i := 0; i < off && i < len(content); i++ {
		switch content[i] {
		case '\n':
			n++
		case '\r':
			if i+1 >= len(content) || content[i+1] != '\n' {
				n++
			}
		}
	}
	return n
}
