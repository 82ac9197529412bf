package validate

import (
	"fmt"
	"sort"
	"strings"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/markdown"
)

// entry is one issue entry of a severity section: its first line, the text
// offset in it (after a list marker or #s), and the lines that follow.
type entry struct {
	first   line
	at      int
	heading int // heading level for a heading entry, 0 otherwise
	rest    []line
	sec     *severitySection
}

// stray is a line of a severity section outside every entry.
type stray struct {
	line
	sec *severitySection
}

// entries splits a severity section into issue entries. An entry is a
// heading below the section (with everything up to the next heading of its
// level or higher), a top-level list item (with its indented continuation
// and nested items), or a paragraph line starting with an issue ID. A
// top-level item that is only a field of the entry before it ("- Location:
// …", written without indentation) stays with that entry.
func entries(d *markdown.Doc, s *severitySection, round int) (out []entry, strays []stray) {
	hi := sort.Search(len(d.Headings), func(i int) bool { return d.Headings[i].Start >= s.BodyStart })
	var cur *entry
	blankBefore := false
	for l := range linesIn(d, s.BodyStart, s.End) {
		if hi < len(d.Headings) && d.Headings[hi].Line == l.n {
			h := d.Headings[hi]
			hi++
			if cur != nil && cur.heading > 0 && h.Level > cur.heading {
				cur.rest = append(cur.rest, l)
				continue
			}
			p, _ := headingTitle(d, h)
			out = append(out, entry{first: l, at: len(l.prose) - len(p), heading: h.Level, sec: s})
			cur = &out[len(out)-1]
			continue
		}
		if cur != nil && cur.heading > 0 {
			cur.rest = append(cur.rest, l)
			continue
		}
		if strings.TrimSpace(l.text) == "" {
			blankBefore = true
			continue
		}
		indent, at, isItem := listItem(l.prose)
		at = skipSpace(l.text, at)
		if !isItem {
			indent = len(l.prose) - len(strings.TrimLeft(l.prose, " \t"))
		}
		switch {
		case isItem && indent <= 1:
			if cur != nil && isField(l.prose) && !startsWithIssue(l.prose, at) {
				cur.rest = append(cur.rest, l)
			} else {
				out = append(out, entry{first: l, at: at, sec: s})
				cur = &out[len(out)-1]
			}
		case cur != nil && (indent >= 2 || !blankBefore):
			cur.rest = append(cur.rest, l)
		case startsWithIssue(l.prose, 0) && (round == 0 || issueRound(l.prose) == round):
			out = append(out, entry{first: l, sec: s})
			cur = &out[len(out)-1]
		default:
			cur = nil // a paragraph of its own ends the entry before it
			strays = append(strays, stray{l, s})
		}
		blankBefore = false
	}
	return out, strays
}

// startsWithIssue reports whether an issue ID starts the text at offset at,
// after emphasis or brackets.
func startsWithIssue(prose string, at int) bool {
	i := skipDecor(prose, at)
	// An issue ID is at most 13 bytes; 16 leaves room for the boundary check.
	ms := findIssueIDs(prose[i:min(len(prose), i+16)])
	return len(ms) > 0 && ms[0].Start == 0
}

// opensWithIssue reports whether a line starts with an issue ID after its
// indentation, any list marker and emphasis.
func opensWithIssue(prose string) bool {
	at := 0
	if _, i, ok := listItem(prose); ok {
		at = i
	}
	return startsWithIssue(prose, at)
}

// issueRound returns the round of the first issue ID in s, 0 if none parses.
func issueRound(s string) int {
	ms := findIssueIDs(s)
	if len(ms) == 0 {
		return 0
	}
	// "ISSUE-R" then 1-3 digits (findIssueIDs read them): no regexp needed.
	// Number 000 is no issue ID (gap.ParseIssueID), nor is round 0.
	if strings.HasSuffix(ms[0].ID, "-000") {
		return 0
	}
	n := 0
	for _, c := range ms[0].ID[len("ISSUE-R"):] {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// isField reports whether a line is one of an issue's detail fields.
func isField(prose string) bool {
	label, _, ok := field(prose)
	return ok && fieldKind(label) != ""
}

// fieldKind maps a detail label to the Issue field it fills.
func fieldKind(label string) string {
	switch {
	case label == "location":
		return "location"
	case label == "impact":
		return "impact"
	case strings.HasPrefix(label, "suggest"):
		return "suggestion"
	case label == "severity":
		return "severity"
	case label == "gap":
		return "gap"
	}
	return ""
}

// parseIssues parses every entry of the severity sections. A malformed
// entry returns the WRONG_FORMAT failure that names it.
func parseIssues(d *markdown.Doc, sevs []severitySection, reviews []titled, opt Options, w *warnings) ([]Issue, *Result) {
	var issues []Issue
	var strays []stray
	rg := newReviewGaps(reviews)
	firstLine := map[string]int{}
	want := "ISSUE-R{N}-NNN"
	if opt.Round > 0 {
		want = fmt.Sprintf("ISSUE-R%d-NNN", opt.Round)
	}
	for i := range sevs {
		s := &sevs[i]
		es, st := entries(d, s, opt.Round)
		strays = append(strays, st...)
		for _, e := range es {
			text := e.first.text[e.at:]
			if e.heading > 0 {
				text = headerSuffix(text)
			}
			ms := findIssueIDs(e.first.prose[e.at:])
			if len(ms) == 0 {
				if isNone(text) {
					continue
				}
				r := failAt(WrongFormat, e.first.n, "issue entry under %q has no issue ID: %s (want %s, e.g. \"- **%s**: summary\")",
					s.Title, quote(text), want, strings.Replace(want, "NNN", "001", 1))
				return nil, &r
			}
			m := ms[0]
			id, err := gap.ParseIssueID(m.ID)
			if err != nil {
				r := failAt(WrongFormat, e.first.n, "%s is not a valid issue ID (rounds 1-999, numbers 001-999; want %s)", m.ID, want)
				return nil, &r
			}
			if opt.Round > 0 && id.Round != opt.Round {
				r := failAt(WrongFormat, e.first.n, "issue ID %s is not of round %d (want %s)", m.ID, opt.Round, want)
				return nil, &r
			}
			if prev, dup := firstLine[m.ID]; dup {
				r := failAt(WrongFormat, e.first.n, "duplicate issue ID %s (first at line %d); each issue needs its own ID", m.ID, prev)
				return nil, &r
			}
			firstLine[m.ID] = e.first.n
			issues = append(issues, buildIssue(e, text, m, rg, w))
		}
	}
	for _, l := range strays {
		for _, m := range findIssueIDs(l.prose) {
			if _, isEntry := firstLine[m.ID]; isEntry {
				continue
			}
			// A stray ID is a reference unless the line declares an issue:
			// a table row, an ID of this round, or (round unknown) a line
			// opening with the ID, such as an over-indented list item.
			id, err := gap.ParseIssueID(m.ID)
			table := strings.HasPrefix(strings.TrimSpace(l.prose), "|")
			thisRound := err == nil && opt.Round > 0 && id.Round == opt.Round
			if table || thisRound || (opt.Round == 0 && opensWithIssue(l.prose)) {
				r := failAt(WrongFormat, l.n, "%s under %q is not written as an issue entry; write each issue as a list item \"- **%s**: summary\" or a heading \"#### %s: summary\"",
					m.ID, l.sec.Title, m.ID, m.ID)
				return nil, &r
			}
		}
	}
	return issues, nil
}

// buildIssue fills an Issue from a well-formed entry whose ID match is m
// (offsets relative to text, which starts at e.at).
func buildIssue(e entry, text string, m gap.Match, reviews reviewGaps, w *warnings) Issue {
	is := Issue{ID: m.ID, Severity: e.sec.sev, Line: e.first.n}

	rest := strings.TrimLeft(text[min(m.End, len(text)):], " \t*_])")
	for {
		sev, after, ok := leadingTag(rest)
		if !ok {
			break
		}
		rest = strings.TrimLeft(after, " \t*_")
		if sev != 0 && sev != is.Severity {
			w.add(is.Line, "%s is tagged %s but sits under %q; the section decides (%s)", is.ID, sev, e.sec.Title, is.Severity)
		}
	}
	is.Summary = trimEmphasis(strings.TrimLeft(rest, " \t*_:-—–|"))
	if is.Summary == "" {
		is.Summary = trimEmphasis(strings.TrimRight(strings.TrimLeft(text[:m.Start], " \t*_["), " \t*_([—–:-"))
	}

	if g := findGapIDs(e.first.prose[e.at:]); len(g) > 0 {
		is.Gap = gap.ID(g[0].ID)
	}
	for _, l := range e.rest {
		if is.Gap == "" {
			if g := findGapIDs(l.prose); len(g) > 0 {
				is.Gap = gap.ID(g[0].ID)
			}
		}
		label, at, ok := field(l.prose)
		if !ok {
			continue
		}
		v := trimEmphasis(l.text[at:])
		switch fieldKind(label) {
		case "location":
			is.Location = firstNonEmpty(is.Location, v)
		case "impact":
			is.Impact = firstNonEmpty(is.Impact, v)
		case "suggestion":
			is.Suggestion = firstNonEmpty(is.Suggestion, v)
		case "severity":
			if sev, ok := severityWord(v); ok && sev != is.Severity {
				w.add(l.n, "%s is tagged %s but sits under %q; the section decides (%s)", is.ID, sev, e.sec.Title, is.Severity)
			}
		}
	}
	if is.Gap == "" {
		is.Gap = reviews.at(e.first.start)
	}
	if is.Gap == "" {
		w.add(is.Line, "%s names no gap and its review header names none; it cannot be attributed to a gap", is.ID)
	}
	return is
}

// leadingTag reads a bracketed tag right after an issue ID that holds only
// a severity and/or gap IDs ("(HIGH)", "[GAP-FLOW-002]", "(Severity: LOW,
// GAP-UX-001)"), so the summary starts after it. sev is 0 when the tag
// names no severity.
func leadingTag(s string) (sev gap.Severity, rest string, ok bool) {
	if s == "" || (s[0] != '(' && s[0] != '[') {
		return 0, s, false
	}
	closer := byte(')')
	if s[0] == '[' {
		closer = ']'
	}
	j := strings.IndexByte(s, closer)
	if j < 0 || j > 80 {
		return 0, s, false
	}
	tokens := strings.FieldsFunc(s[1:j], func(r rune) bool {
		return r == ' ' || r == ',' || r == '/' || r == ';' || r == ':' || r == '|' || r == '*'
	})
	if len(tokens) == 0 {
		return 0, s, false
	}
	for _, t := range tokens {
		if v, err := gap.ParseSeverity(t); err == nil {
			sev = v
		} else if !gap.ValidID(t) && !strings.EqualFold(t, "severity") && !strings.EqualFold(t, "gap") {
			return 0, s, false
		}
	}
	return sev, s[j+1:], true
}

// reviewGaps maps each "## Review:" section to the first gap ID of its
// header, the fallback gap of the issues inside it.
type reviewGaps struct {
	reviews []titled
	gaps    []gap.ID
}

func newReviewGaps(reviews []titled) reviewGaps {
	rg := reviewGaps{reviews: reviews, gaps: make([]gap.ID, len(reviews))}
	for i, r := range reviews {
		if g := findGapIDs(r.prose); len(g) > 0 {
			rg.gaps[i] = gap.ID(g[0].ID)
		}
	}
	return rg
}

// at returns the fallback gap for byte offset off, "" outside any review.
func (rg reviewGaps) at(off int) gap.ID {
	i := sort.Search(len(rg.reviews), func(i int) bool { return rg.reviews[i].Start > off })
	if i == 0 || off >= rg.reviews[i-1].End {
		return ""
	}
	return rg.gaps[i-1]
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
