package validate

import (
	"strings"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/markdown"
)

// newGapHeadings are the section titles under which an output lists the
// gaps it introduces: "New Gaps Introduced" (Engineer) and "New Gaps
// Identified" (Reviewer). Either is accepted from either role.
var newGapHeadings = [...]string{"New Gaps Introduced", "New Gaps Identified"}

// isNewGapsTitle reports whether a heading's prose title opens a new-gaps list.
func isNewGapsTitle(title string) bool {
	for _, h := range newGapHeadings {
		if hasPrefixFold(title, h) {
			return true
		}
	}
	return false
}

// parseNewGaps reads the top-level list items of every new-gaps section.
// An item declares a new gap when it starts with a gap ID (optionally in
// emphasis), followed by an optional severity in parentheses or brackets and
// a title: "- GAP-FLOW-009: text", "- GAP-FLOW-009 (HIGH): text",
// "- **GAP-X-001** [CRITICAL] — text". Items saying "None" declare nothing.
// IDs further into an item are references, not new gaps. from maps an
// offset to the Gap Resolution section holding it.
func parseNewGaps(d *markdown.Doc, from func(off int) gap.ID, known map[gap.ID]bool, w *warnings) []NewGap {
	var out []NewGap
	first := map[gap.ID]int{}
	done := 0 // end of the last new-gaps section read, so nested ones are not read twice
	for _, s := range d.Sections() {
		if p, _ := headingTitle(d, s.Heading); s.Start < done || !isNewGapsTitle(p) {
			continue
		}
		done = s.End
		for l := range linesIn(d, s.BodyStart, s.End) {
			indent, at, ok := listItem(l.prose)
			if !ok || indent > 1 {
				continue // nested items elaborate on their parent
			}
			at = skipSpace(l.text, at)
			ng, ok := parseNewGapItem(l, at)
			if !ok {
				if !isNone(l.text[at:]) {
					w.add(l.n, "entry under %q does not start with a gap ID, so it is not recorded as a new gap (write \"- GAP-AREA-NNN: title\")", s.Title)
				}
				continue
			}
			if prev, dup := first[ng.ID]; dup {
				w.add(l.n, "new gap %s is listed again (first at line %d); the first entry counts", ng.ID, prev)
				continue
			}
			first[ng.ID] = l.n
			if known[ng.ID] {
				w.add(l.n, "new gap %s already exists in the gap list", ng.ID)
			}
			if ng.Title == "" {
				w.add(l.n, "new gap %s has no title", ng.ID)
			}
			ng.FromGap = from(l.start)
			out = append(out, ng)
		}
	}
	return out
}

// parseNewGapItem parses the item text starting at offset at of l.
func parseNewGapItem(l line, at int) (NewGap, bool) {
	i := skipDecor(l.prose, at)
	ms := findGapIDs(l.prose[i:])
	if len(ms) == 0 || ms[0].Start != 0 {
		return NewGap{}, false
	}
	ng := NewGap{ID: gap.ID(ms[0].ID), Severity: gap.Medium, Line: l.n}
	rest := l.text[i+ms[0].End:]
	rest = strings.TrimLeft(rest, " \t*_]")
	sev, rest, found := leadingSeverity(rest)
	rest = strings.TrimLeft(rest, " \t*_:-—–|")
	rest = trimEmphasis(rest)
	if !found {
		sev, rest, found = trailingSeverity(rest)
	}
	if found {
		ng.Severity = sev
	}
	ng.Title = rest
	return ng, true
}

// leadingSeverity reads "(HIGH)", "[CRITICAL]" or "(Severity: LOW)" at the
// start of s and returns the text after it.
func leadingSeverity(s string) (gap.Severity, string, bool) {
	if s == "" || (s[0] != '(' && s[0] != '[') {
		return 0, s, false
	}
	closer := byte(')')
	if s[0] == '[' {
		closer = ']'
	}
	j := strings.IndexByte(s, closer)
	if j < 0 {
		return 0, s, false
	}
	sev, ok := severityWord(s[1:j])
	if !ok {
		return 0, s, false
	}
	return sev, s[j+1:], true
}

// trailingSeverity reads a severity tag at the end of s ("title (HIGH)").
func trailingSeverity(s string) (gap.Severity, string, bool) {
	if s == "" {
		return 0, s, false
	}
	var opener byte
	switch s[len(s)-1] {
	case ')':
		opener = '('
	case ']':
		opener = '['
	default:
		return 0, s, false
	}
	j := strings.LastIndexByte(s, opener)
	if j < 0 {
		return 0, s, false
	}
	sev, ok := severityWord(s[j+1 : len(s)-1])
	if !ok {
		return 0, s, false
	}
	return sev, strings.TrimSpace(s[:j]), true
}

// severityWord parses "HIGH", "**high**" or "Severity: HIGH".
func severityWord(s string) (gap.Severity, bool) {
	s = strings.Trim(s, " \t*_")
	if hasPrefixFold(s, "severity:") {
		s = strings.Trim(s[len("severity:"):], " \t*_")
	}
	sev, err := gap.ParseSeverity(s)
	return sev, err == nil
}
