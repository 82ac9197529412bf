package validate

import (
	"slices"
	"strings"

	"github.com/refine-spec/refine/internal/markdown"
)

// form is how a header-like line is written.
type form uint8

const (
	formATX    form = iota // "## Title"
	formBold               // "**Title**" alone on its line
	formSetext             // "Title" underlined with === or ---
)

// cand is a header-like line the reading recognised.
type cand struct {
	line     int // 1-based
	form     form
	sec      int // index into Doc.Sections for an ATX heading
	h        header
	accepted bool // read as written (its level aside)
}

// newHead is a heading of the normalized document: where sections end.
type newHead struct {
	line, level int
}

// lineLevel finds the line-level mappings of role: required headers,
// severity headings, new-gaps and trade-offs titles in the forms of DESIGN
// §18, the sections they hold when their level changes, confidence
// statements and DISAGREE labels. It returns one replacement per changed
// line.
func lineLevel(d *markdown.Doc, role readRole, nb *notebook) []repl {
	if role == roleNone {
		return nil
	}
	secs := d.Sections()
	var cands []cand
	for si, s := range secs {
		if s.Level > 4 {
			continue
		}
		p, r := headingTitle(d, s.Heading)
		if h, ok := recognize(p, r); ok && h.kind.allowedFor(role) && h.kind != hConfidence {
			cands = append(cands, cand{line: s.Line, form: formATX, sec: si, h: h, accepted: accepted(h, s.Level, p)})
		}
	}
	cands = append(cands, looseHeaders(d, role)...)
	if role == roleGuess {
		role = guessRole(cands)
		cands = slices.DeleteFunc(cands, func(c cand) bool { return !c.h.kind.allowedFor(role) })
	}
	if role == roleNone || len(cands) == 0 {
		return nil
	}
	slices.SortStableFunc(cands, func(a, b cand) int { return a.line - b.line })
	cands = dropContainers(d, cands)
	for i := range cands {
		if c := &cands[i]; c.h.kind == hNewGaps && role == roleReviewer && slices.Contains(c.h.notes, KindSectionTitle) {
			c.h.canon = strings.Replace(c.h.canon, "New Gaps Introduced", "New Gaps Identified", 1)
		}
	}

	lines := map[int]string{}
	newLevel := headingLevels(d, cands)
	var heads []newHead
	byLine := map[int]int{}
	for i, c := range cands {
		if c.form == formATX {
			byLine[c.line] = i
		}
	}
	for si, s := range secs {
		raw := d.Line(s.Line)
		lvl := newLevel[si]
		heads = append(heads, newHead{s.Line, lvl})
		ci, isCand := byLine[s.Line]
		var text string
		switch {
		case isCand && !cands[ci].accepted:
			c := cands[ci]
			text = strings.Repeat("#", lvl) + " " + c.h.canon
			if text == strings.TrimRight(raw, " \t") {
				continue
			}
			if lvl != s.Level {
				nb.add(KindHeadingLevel, s.Line, raw)
			}
			for _, k := range c.h.notes {
				nb.add(k, s.Line, raw)
			}
		case lvl != s.Level:
			i := len(raw) - len(strings.TrimLeft(strings.TrimLeft(raw, " "), "#"))
			text = strings.Repeat("#", lvl) + raw[i:]
			if isCand {
				nb.add(KindHeadingLevel, s.Line, raw)
			}
		default:
			continue
		}
		lines[s.Line] = text
	}
	for _, c := range cands {
		if c.form == formATX {
			continue
		}
		lvl := c.h.kind.target()
		if lvl == 0 {
			lvl = 3
		}
		heads = append(heads, newHead{c.line, lvl})
		raw := d.Line(c.line)
		lines[c.line] = strings.Repeat("#", lvl) + " " + c.h.canon
		kind := KindBoldHeader
		if c.form == formSetext {
			kind = KindSetext
			lines[c.line+1] = ""
		}
		nb.add(kind, c.line, raw)
		for _, k := range c.h.notes {
			if k != KindEmphasis || c.form != formBold {
				nb.add(k, c.line, raw)
			}
		}
	}
	slices.SortFunc(heads, func(a, b newHead) int { return a.line - b.line })
	if role == roleEngineer {
		for _, c := range cands {
			switch c.h.kind {
			case hGapResolution:
				confidenceIn(d, c.line, sectionEnd(heads, c.line, 2, d.LineCount()), lines, nb)
			case hDisagree:
				labelsIn(d, c.line, sectionEnd(heads, c.line, 2, d.LineCount()), lines, nb)
			}
		}
	}
	rs := make([]repl, 0, len(lines))
	for n, t := range lines {
		start := d.LineStart(n)
		rs = append(rs, repl{start, lineEnd(d.Text, start), t})
	}
	return rs
}

// dropContainers leaves alone a heading above its level that holds
// headers of its own kind: "# Review - Round 3" over "## Review: …"
// sections is the answer's title, not a misplaced header.
func dropContainers(d *markdown.Doc, cands []cand) []cand {
	secs := d.Sections()
	return slices.DeleteFunc(cands, func(c cand) bool {
		if c.form != formATX || c.accepted || c.h.kind == hSeverity || secs[c.sec].Level >= c.h.kind.target() {
			return false
		}
		s := secs[c.sec]
		last := d.LineOf(max(s.End-1, s.Start))
		i, _ := slices.BinarySearchFunc(cands, c.line+1, func(o cand, l int) int { return o.line - l })
		for ; i < len(cands) && cands[i].line <= last; i++ {
			if cands[i].h.kind == c.h.kind {
				return true
			}
		}
		return false
	})
}

// accepted reports whether the reading takes a recognised heading at
// level as written, so it is left alone (unless a section around it moves).
func accepted(h header, level int, p string) bool {
	switch h.kind {
	case hGapResolution:
		return level == 2 && strings.HasPrefix(p, gapResolutionTitle)
	case hReview:
		return level == 2 && strings.HasPrefix(p, reviewTitle)
	case hDisagree:
		return level == 2 && strings.HasPrefix(p, "DISAGREE:")
	case hSeverity:
		_, ok := severityOf(p)
		return level == 3 && ok
	case hNewGaps:
		return isNewGapsTitle(p)
	case hTradeOffs:
		return isTradeOffs(p)
	case hLog:
		return level == 2 && titleIs(p, resolutionLogTitle)
	case hLimits:
		return level == 2 && titleIs(p, knownLimitationsTitle)
	}
	return false
}

// guessRole is the role whose headers an answer has: Engineer for a Gap
// Resolution header, Reviewer for a Review header, an integrated spec for a
// Resolution Log.
func guessRole(cands []cand) readRole {
	has := map[hkind]bool{}
	for _, c := range cands {
		has[c.h.kind] = true
	}
	switch {
	case has[hGapResolution]:
		return roleEngineer
	case has[hReview]:
		return roleReviewer
	case has[hLog]:
		return roleIntegration
	}
	return roleNone
}

// headingLevels returns the level of each section's heading after
// normalization: a recognised header moves to its level, and when it moves
// deeper, the headings it holds move with it if one of them would
// otherwise end its section.
func headingLevels(d *markdown.Doc, cands []cand) []int {
	secs := d.Sections()
	out := make([]int, len(secs))
	bySec := map[int]cand{}
	for _, c := range cands {
		if c.form == formATX {
			bySec[c.sec] = c
		}
	}
	// A moved header's region ends where its section ends, or at the next
	// header at its level or above: "## High Priority" over "### Medium
	// Priority" holds what lies between them, not its sibling.
	regionEnd := func(s markdown.Section, line, target int) int {
		end := s.End
		i, _ := slices.BinarySearchFunc(cands, line+1, func(c cand, l int) int { return c.line - l })
		for ; i < len(cands) && d.LineStart(cands[i].line) < end; i++ {
			if t := cands[i].h.kind.target(); t > 0 && t <= target {
				return d.LineStart(cands[i].line)
			}
		}
		return end
	}
	type frame struct{ end, shift int }
	var stack []frame
	shift := 0
	for si, s := range secs {
		for len(stack) > 0 && stack[len(stack)-1].end <= s.Start {
			shift -= stack[len(stack)-1].shift
			stack = stack[:len(stack)-1]
		}
		eff := min(max(s.Level+shift, 1), 6)
		out[si] = eff
		c, ok := bySec[si]
		target := c.h.kind.target()
		if !ok || target == 0 || c.accepted && eff == s.Level {
			continue
		}
		out[si] = target
		if target > eff {
			end := regionEnd(s, c.line, target)
			deepest := 7
			for _, ch := range d.Within(s) {
				if ch.Start < end {
					deepest = min(deepest, ch.Level+shift)
				}
			}
			if deepest <= target {
				stack = append(stack, frame{end, target - eff})
				shift += target - eff
			}
		}
	}
	return out
}

// sectionEnd returns the line of the first heading after line whose level
// is at most level, or last+1.
func sectionEnd(heads []newHead, line, level, last int) int {
	i, _ := slices.BinarySearchFunc(heads, line+1, func(h newHead, l int) int { return h.line - l })
	for ; i < len(heads); i++ {
		if heads[i].level <= level {
			return heads[i].line
		}
	}
	return last + 1
}

// confidenceIn maps the first confidence statement of a Gap Resolution
// section (lines from+1 to to-1) that is written in another form, when the
// section has none in the format's form.
func confidenceIn(d *markdown.Doc, from, to int, lines map[int]string, nb *notebook) {
	bs, be := d.LineStart(from+1), d.LineStart(to)
	if bs >= be {
		return
	}
	prose := d.Prose[bs:be]
	if strings.Contains(prose, confidenceMarker) {
		return
	}
	for off := 0; ; {
		i := strings.Index(prose[off:], "onfidence")
		if i < 0 {
			return
		}
		off += i + len("onfidence")
		n := d.LineOf(bs + off - 1)
		if _, done := lines[n]; done {
			continue
		}
		if t, ok := confidenceLine(d.ProseLine(n), d.Line(n)); ok {
			lines[n] = t
			nb.add(KindConfidence, n, d.Line(n))
			return
		}
	}
}

// labelsIn maps the DISAGREE labels of a block (lines from+1 to to-1)
// written in another form.
func labelsIn(d *markdown.Doc, from, to int, lines map[int]string, nb *notebook) {
	for n := from + 1; n < to; n++ {
		p := d.ProseLine(n)
		t := strings.TrimLeft(p, " \t")
		if t == "" {
			continue
		}
		heading := false
		if lvl, _, ok := markdown.ATXHeading(p); ok {
			if lvl < 3 {
				continue
			}
			heading = true
		}
		if out, ok := labelLine(p, d.Line(n), heading); ok {
			lines[n] = out
			nb.add(KindDisagreeLabel, n, d.Line(n))
		}
	}
}

// looseHeaders finds the header-like lines that are not ATX headings: a
// bold line standing alone, and a setext heading (a one-line paragraph
// underlined with === or ---), each recognised as a header of role.
func looseHeaders(d *markdown.Doc, role readRole) []cand {
	var out []cand
	n := 0
	prevStart, prevEnd := -1, -1
	prevBlank, prev2Blank := true, true
	for off := 0; off <= len(d.Prose); {
		e := lineEnd(d.Prose, off)
		n++
		p := d.Prose[off:e]
		j := 0
		for j < len(p) && j < 4 && p[j] == ' ' {
			j++
		}
		blank := j == len(p) || strings.TrimSpace(p[j:]) == ""
		if !blank && j < 4 {
			switch p[j] {
			case '*', '_':
				if c, ok := boldHeader(p, d.Text[off:e], n, role); ok {
					out = append(out, c)
				}
			case '=', '-':
				if !prevBlank && prev2Blank && isUnderline(p[j:]) {
					if c, ok := setextHeader(d.Prose[prevStart:prevEnd], d.Text[prevStart:prevEnd], n-1, role); ok {
						if k := len(out) - 1; k >= 0 && out[k].line == n-1 {
							out = out[:k] // a bold title underlined: one header
						}
						out = append(out, c)
					}
				}
			}
		}
		prev2Blank, prevBlank = prevBlank, blank
		prevStart, prevEnd = off, e
		if e >= len(d.Prose) {
			break
		}
		off = e + 1
	}
	return out
}

// isUnderline reports whether s is a setext underline: two or more '=' or
// '-' and nothing else but trailing spaces.
func isUnderline(s string) bool {
	s = strings.TrimRight(s, " \t")
	return len(s) >= 2 && strings.Trim(s, s[:1]) == ""
}

// looseKind reports whether a header of kind k may be written as a bold
// line or setext title; tail says text follows the bold span.
func looseKind(h header, tail bool) bool {
	switch h.kind {
	case hGapResolution, hDisagree:
		return true
	case hReview:
		return !tail || strings.Contains(h.canon, "GAP-")
	case hSeverity, hLog, hLimits:
		return !tail
	case hNewGaps, hTradeOffs:
		return !tail && !h.tail
	}
	return false
}

func boldHeader(p, r string, n int, role readRole) (cand, bool) {
	tp, tr, tail, ok := boldAlone(p, r)
	if !ok {
		return cand{}, false
	}
	h, ok := recognize(tp, tr)
	if !ok || !h.kind.allowedFor(role) || !looseKind(h, tail) {
		return cand{}, false
	}
	return cand{line: n, form: formBold, sec: -1, h: h}, true
}

func setextHeader(p, r string, n int, role readRole) (cand, bool) {
	t := strings.TrimLeft(p, " ")
	if t == "" || t[0] == '#' || t[0] == '>' || t[0] == '|' {
		return cand{}, false
	}
	if _, _, ok := listItem(p); ok {
		return cand{}, false
	}
	i := len(p) - len(t)
	if tp, tr, _, ok := boldAlone(p, r); ok {
		p, r, i = tp, tr, 0
	}
	h, ok := recognize(p[i:], r[i:])
	if !ok || !h.kind.allowedFor(role) || !looseKind(h, false) {
		return cand{}, false
	}
	return cand{line: n, form: formSetext, sec: -1, h: h}, true
}
