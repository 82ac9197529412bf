package validate

import (
	"index/suffixarray"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/refine-spec/refine/internal/markdown"
)

// locator finds a gap's Location in the spec (UNLOCATED_GAP): quoted text
// in the spec's text, anything else among its headings, then in its text.
// Text is compared folded (foldText) on both sides.
type locator struct {
	text string // the spec folded
	// index is a suffix array of text, built when many Locations are
	// looked up in a long spec, so each lookup costs the Location's length
	// (times log of the spec's) instead of the spec's.
	index *suffixarray.Index
	// spec resolves heading references as the integration's log rows do.
	spec specDoc
}

// indexAbove is the work (Locations × spec bytes) above which a locator
// builds its suffix array: below it, plain searches cost less than
// building the index.
const indexAbove = 1 << 24

func newLocator(spec string, lookups int) *locator {
	return newLocatorIndexed(spec, lookups*len(spec) > indexAbove)
}

func newLocatorIndexed(spec string, indexed bool) *locator {
	d := markdown.Parse(spec)
	l := &locator{text: foldText(d.Text), spec: parseDoc(d)}
	if indexed {
		l.index = suffixarray.New([]byte(l.text))
	}
	return l
}

// contains reports whether the folded text s is in the spec.
func (l *locator) contains(s string) bool {
	if l.index != nil {
		return len(l.index.Lookup([]byte(s), 1)) > 0
	}
	return strings.Contains(l.text, s)
}

// found reports whether a Location is in the spec. A Location with text
// in double quotes is found when every quotation is: each part between
// "…" (or "...") is in the spec, its closing punctuation left out. One
// without quotes is found when it names a heading by its words ("§2
// Endpoints", "Section 2", "Endpoints", "2. Endpoints > 2.1 Create"), or
// when what comes before a pointer into the section (after ",", ";", "("
// or " — ") does, or when it is text of the spec.
func (l *locator) found(loc string) bool {
	if quotes := quotations(loc); len(quotes) > 0 {
		for _, q := range quotes {
			if !l.quoted(q) {
				return false
			}
		}
		return true
	}
	if l.heading(loc) {
		return true
	}
	if i := strings.IndexAny(loc, ",;("); i > 0 && l.heading(loc[:i]) {
		return true
	}
	if i := strings.Index(loc, " — "); i > 0 && l.heading(loc[:i]) {
		return true
	}
	return l.quoted(loc)
}

// quoted reports whether a quotation is in the spec, read as its parts
// between ellipses.
func (l *locator) quoted(q string) bool {
	any := false
	for _, part := range strings.Split(foldText(q), "...") {
		part = strings.Trim(part, " .,;:!")
		if part == "" {
			continue
		}
		if !l.contains(part) {
			return false
		}
		any = true
	}
	return any
}

// heading reports whether loc names a heading (specDoc.resolves: by its
// title, its title without its number, or its number, "§2" or "Section
// 2"), or a path of headings separated by ">", "›", "→" or "»".
func (l *locator) heading(loc string) bool {
	parts := strings.FieldsFunc(loc, func(r rune) bool { return r == '>' || r == '›' || r == '→' || r == '»' })
	if len(parts) == 0 {
		return false
	}
	for _, p := range parts {
		p = strings.TrimSpace(p)
		for _, word := range [...]string{"section ", "sec. ", "§ "} {
			if hasPrefixFold(p, word) {
				p = "§" + strings.TrimSpace(p[len(word):])
			}
		}
		if !l.spec.resolves(p) {
			return false
		}
	}
	return true
}

// quotations returns the texts a Location quotes in double quotes
// (straight, curly or «»). A Location that starts and ends with a quote
// is one quotation, whatever quotes it holds inside; an opening quote
// without its closing one quotes the rest.
func quotations(loc string) []string {
	s := strings.TrimSpace(loc)
	if r, size := utf8.DecodeRuneInString(s); size > 0 {
		if c, ok := closingOf(r); ok && len(s) > size {
			if last, lsize := utf8.DecodeLastRuneInString(s); last == c && len(s) >= size+lsize {
				return []string{s[size : len(s)-lsize]}
			}
		}
	}
	var out []string
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		c, ok := closingOf(r)
		if !ok {
			i += size
			continue
		}
		rest := s[i+size:]
		j := strings.IndexRune(rest, c)
		if j < 0 {
			out = append(out, rest)
			break
		}
		out = append(out, rest[:j])
		i += size + j + utf8.RuneLen(c)
	}
	return out
}

// closingOf returns the quote that closes the opening quote r.
func closingOf(r rune) (rune, bool) {
	switch r {
	case '"':
		return '"', true
	case '“':
		return '”', true
	case '„':
		return '“', true
	case '«':
		return '»', true
	}
	return 0, false
}

// foldText maps text onto the form Locations are compared in: lower case;
// runs of white space and control characters one space; curly quotes
// straight; Unicode dashes and hyphens "-"; "…" "..."; emphasis marks and
// backticks dropped (a quotation rarely keeps the spec's markup).
func foldText(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		switch {
		case unicode.IsSpace(r) || unicode.IsControl(r) || r == utf8.RuneError || unicode.Is(unicode.Cf, r):
			space = true
			continue
		case r == '*' || r == '`':
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		switch r {
		case '‘', '’', '‚', '‛', '′':
			b.WriteByte('\'')
		case '“', '”', '„', '‟', '″', '«', '»':
			b.WriteByte('"')
		case '‐', '‑', '‒', '–', '—', '―', '−':
			b.WriteByte('-')
		case '…':
			b.WriteString("...")
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}
