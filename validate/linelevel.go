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
func lineLevel(sc scanned, role readRole, nb *notebook) []repl {
	if role == roleNone {
		return nil
	}
	d := sc.d
	loose := looseHeaders(sc, role)
	if len(loose) == 0 && role != roleGuess {
		if rs, ok := asWritten(d, role, nb); ok {
			return rs
		}
	}
	secs := d.Sections()
	var cands []cand
	for si, s := range secs {
		if s.Level > 4 || !maybeKeyword(s.Title) {
			continue
		}
		p, r := headingTitle(d, s.Heading)
		if h, ok := recognize(p, r); ok && h.kind.allowedFor(role) && h.kind != hConfidence {
			cands = append(cands, cand{line: s.Line, form: formATX, sec: si, h: h, accepted: accepted(h, s.Level, p)})
		}
	}
	cands = append(cands, loose...)
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
		if c := &cands[i]; c.h.kind == hNewGaps && role == roleReviewer && c.h.notes&noteSectionTitle != 0 {
			c.h.prefix = "New Gaps Identified"
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
			text = strings.Repeat("#", lvl) + " " + c.h.canon()
			if text == strings.TrimRight(raw, " \t") {
				continue
			}
			if lvl != s.Level {
				nb.add(KindHeadingLevel, s.Line, raw)
			}
			for _, k := range c.h.notes.kinds() {
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
		lines[c.line] = strings.Repeat("#", lvl) + " " + c.h.canon()
		kind := KindBoldHeader
		if c.form == formSetext {
			kind = KindSetext
			lines[c.line+1] = ""
		}
		nb.add(kind, c.line, raw)
		for _, k := range c.h.notes.kinds() {
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
	return replsOf(d, lines)
}

// replsOf turns line rewrites into replacements.
func replsOf(d *markdown.Doc, lines map[int]string) []repl {
	if len(lines) == 0 {
		return nil
	}
	rs := make([]repl, 0, len(lines))
	for n, t := range lines {
		start := d.LineStart(n)
		rs = append(rs, repl{start, lineEnd(d.Text, start), t})
	}
	return rs
}

// maybeKeyword reports whether a title may start with a header keyword
// (after emoji, numbering and emphasis): most titles are passed over on
// their first word, without being read. Confidence statements are found
// by confidenceIn, not here.
func maybeKeyword(title string) bool {
	if title == "" {
		return false
	}
	switch title[0] | 0x20 { // the letters keywords start with, and decoration
	case 'g', 'r', 'n', 'k', 'd', 't', 'b', 'c', 'h', 'm', 'l', 'a', 'i', 'v', 'x':
	default:
		if isLetter(title[0]) && (len(title) < 2 || title[1] != '.' && title[1] != ')') {
			return false // "Proposed Solution", "Examples": most titles stop here
		}
	}
	switch c := title[0]; {
	case !isLetter(c), len(title) > 1 && (title[1] == '.' || title[1] == ')'),
		c == 'I', c == 'V', c == 'X', c == 'i', c == 'v', c == 'x':
		i, _, _ := stripDecoration(title) // decorated, or maybe numbered
		title = title[i:]
	}
	var buf, buf2 [12]byte
	w, next := lowerWord(&buf, title)
	second := func(want string) bool {
		w2, _ := lowerWord(&buf2, strings.TrimLeft(next, " "))
		return string(w2) == want
	}
	switch string(w) {
	case "gap":
		return second("resolution")
	case "resolution":
		return second("log")
	case "new":
		return second("gaps")
	case "known":
		return second("limitations")
	case "review", "disagree", "trade", "tradeoffs":
		return true
	}
	_, ok := severityWordOf(string(w))
	return ok
}

// lowerWord writes the first word of s (ASCII letters, lower case, at most
// 12; none when longer) into buf and returns it and what follows.
func lowerWord(buf *[12]byte, s string) ([]byte, string) {
	n := 0
	for n < len(s) && isLetter(s[n]) {
		if n == len(buf) {
			return nil, s
		}
		buf[n] = s[n] | 0x20
		n++
	}
	return buf[:n], s[n:]
}

// asWritten is lineLevel for an answer whose headers all read as the
// format writes them, titles over headers of their kind aside (the usual
// case, kept cheap: nothing is collected); ok is false when one needs
// mapping. The sections are then as written, and only an Engineer's
// confidence statements and DISAGREE labels may need mapping.
func asWritten(d *markdown.Doc, role readRole, nb *notebook) ([]repl, bool) {
	secs := d.Sections()
	type title struct {
		kind     hkind
		end      int
		resolved bool
	}
	type block struct {
		sec  int
		kind hkind
	}
	var titles []title // headings that may be titles over headers of their kind
	var blocks []block // an Engineer's Gap Resolution and DISAGREE sections
	for si, s := range secs {
		// A title's section is over: it held a header of its kind, or it
		// is one to map. Only open titles are kept, so this stays linear.
		for len(titles) > 0 && titles[len(titles)-1].end <= s.Start {
			if !titles[len(titles)-1].resolved {
				return nil, false
			}
			titles = titles[:len(titles)-1]
		}
		if s.Level > 4 || !maybeKeyword(s.Title) {
			continue
		}
		kind, ok := canonical(s.Level, s.Title, role)
		if !ok || strings.IndexByte(s.Title, '`') >= 0 {
			p, r := headingTitle(d, s.Heading)
			if kind, ok = canonical(s.Level, p, role); !ok {
				h, isHeader := recognize(p, r)
				switch {
				case !isHeader || !h.kind.allowedFor(role) || h.kind == hConfidence:
					continue
				case !accepted(h, s.Level, p):
					if h.kind == hSeverity || s.Level >= h.kind.target() || strings.Contains(h.rest, "GAP-") || strings.Contains(h.rest, "ISSUE-R") {
						return nil, false // a header to map
					}
					titles = append(titles, title{kind: h.kind, end: s.End})
					continue
				}
				kind = h.kind
			}
		}
		for i := range titles {
			if titles[i].kind == kind && s.Start < titles[i].end {
				titles[i].resolved = true
			}
		}
		if role == roleEngineer && (kind == hGapResolution || kind == hDisagree) {
			blocks = append(blocks, block{si, kind})
		}
	}
	for _, t := range titles {
		if !t.resolved {
			return nil, false
		}
	}
	lines := map[int]string{}
	for _, b := range blocks {
		s := secs[b.sec]
		end := d.LineCount() + 1
		if s.End < len(d.Text) {
			end = d.LineOf(s.End)
		}
		if b.kind == hDisagree {
			labelsIn(d, s.Line, end, lines, nb)
		} else {
			confidenceIn(d, s.Line, end, lines, nb)
		}
	}
	return replsOf(d, lines), true
}

// canonical returns the kind of a heading of role written exactly as the
// format has it (the common case), without reading it further.
func canonical(level int, p string, role readRole) (hkind, bool) {
	switch {
	case role == roleEngineer && level == 2 && strings.HasPrefix(p, gapResolutionTitle):
		return hGapResolution, true
	case role == roleEngineer && level == 2 && strings.HasPrefix(p, "DISAGREE:"):
		return hDisagree, true
	case role == roleReviewer && level == 2 && strings.HasPrefix(p, reviewTitle):
		return hReview, true
	case role == roleEngineer && isTradeOffs(p):
		return hTradeOffs, true
	case (role == roleEngineer || role == roleReviewer) && isNewGapsTitle(p):
		return hNewGaps, true
	}
	if role == roleReviewer && level == 3 {
		if _, ok := severityOf(p); ok {
			return hSeverity, true
		}
	}
	return hNone, false
}

// dropContainers leaves alone a heading above its level that names no ID
// and holds headers of its own kind: "# Review - Round 3" over "## Review:
// …" sections is the answer's title, not a misplaced header (where "# Gap
// Resolution: GAP-…" over a demoted "### Gap Resolution: GAP-…" is one).
func dropContainers(d *markdown.Doc, cands []cand) []cand {
	secs := d.Sections()
	return slices.DeleteFunc(cands, func(c cand) bool {
		if c.form != formATX || c.accepted || c.h.kind == hSeverity || secs[c.sec].Level >= c.h.kind.target() ||
			strings.Contains(c.h.rest, "GAP-") || strings.Contains(c.h.rest, "ISSUE-R") {
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
	// A severity section holds its issue headings: the first other
	// heading ("### Consistency Checks" under "## Low Priority") is the
	// review's next section, written at the severities' level.
	regionEnd := func(si int, c cand, target int) int {
		s := secs[si]
		end := s.End
		i, _ := slices.BinarySearchFunc(cands, c.line+1, func(o cand, l int) int { return o.line - l })
		for ; i < len(cands) && d.LineStart(cands[i].line) < end; i++ {
			if t := cands[i].h.kind.target(); t > 0 && t <= target {
				end = d.LineStart(cands[i].line)
				break
			}
		}
		if c.h.kind == hSeverity {
			for _, sub := range secs[si+1:] {
				if sub.Start >= end {
					break
				}
				if p, _ := headingTitle(d, sub.Heading); leadingIssueID(p[skipDecorations(p):]) == "" {
					return sub.Start
				}
			}
		}
		return end
	}
	issueHeading := func(si int) bool {
		p, _ := headingTitle(d, secs[si].Heading)
		return leadingIssueID(p[skipDecorations(p):]) != ""
	}
	type frame struct{ end, shift int }
	var stack []frame
	shift := 0
	underSeverity := false // the last heading at level 3 or above is a severity section's
	for si, s := range secs {
		for len(stack) > 0 && stack[len(stack)-1].end <= s.Start {
			shift -= stack[len(stack)-1].shift
			stack = stack[:len(stack)-1]
		}
		eff := min(max(s.Level+shift, 1), 6)
		out[si] = eff
		c, ok := bySec[si]
		target := c.h.kind.target()
		switch {
		case !ok || target == 0:
			// A heading a parent's move pushed under a severity section is
			// the review's next section unless it is an issue.
			if eff == 4 && s.Level != 4 && underSeverity && !issueHeading(si) {
				out[si] = 3
			}
		case c.accepted && eff == s.Level:
		default:
			out[si] = target
			if target > eff {
				end := regionEnd(si, c, target)
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
		if out[si] <= 3 {
			underSeverity = ok && c.h.kind == hSeverity && out[si] == 3
		}
	}
	return out
}

// skipDecorations returns where a title's text starts after emoji, a
// numbering prefix and emphasis.
func skipDecorations(p string) int {
	i, _, _ := stripDecoration(p)
	return i
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
// section has none in the format's form. Its rewrite replaces any other of
// the line (a heading moved with its section is no heading once it is a
// statement).
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
func looseHeaders(sc scanned, role readRole) []cand {
	d := sc.d
	var out []cand
	for _, n := range sc.bold {
		if c, ok := boldHeader(d.ProseLine(n), d.Line(n), n, role); ok {
			out = append(out, c)
		}
	}
	for _, n := range sc.setext {
		if c, ok := setextHeader(d.ProseLine(n), d.Line(n), n, role); ok {
			if k, found := slices.BinarySearchFunc(out, n, func(c cand, l int) int { return c.line - l }); found {
				out[k] = c // a bold title underlined: one header
				continue
			}
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, func(a, b cand) int { return a.line - b.line })
	return out
}

// looseLines scans d's lines by their lead bytes (see scanned): bold
// lines (the prose starts with "**" or "__" after at most three spaces),
// setext titles (a non-blank line after a blank one, over a line of two or
// more '=' or '-'), and the lines that may be DISAGREE-like.
func looseLines(d *markdown.Doc) scanned {
	sc := scanned{d: d}
	text := d.Text
	for i, c := range d.Lead {
		if c == 0 {
			continue
		}
		n, k := i+1, d.Content[i]
		switch {
		case (c == '*' || c == '_') && k == c:
			// "**" or "__" (a list marker would be followed by a space).
			if at := skipSpace(text, d.LineStart(n)); strings.HasPrefix(text[at:], "**") || strings.HasPrefix(text[at:], "__") {
				sc.bold = append(sc.bold, n)
				if leadsWithD(text, at) {
					sc.disagree = append(sc.disagree, n)
				}
			}
			continue
		case (c == '=' || c == '-') && k == c:
			if n >= 2 && d.Lead[i-1] != 0 && (n == 2 || d.Lead[i-2] == 0) && isUnderline(strings.TrimLeft(d.ProseLine(n), " ")) &&
				strings.TrimSpace(d.ProseLine(n-1)) != "" {
				sc.setext = append(sc.setext, n-1) // a setext title is one line after a blank one
			}
			continue
		}
		// The first letter after markers, numbering and emphasis.
		switch {
		case k == 'D' || k == 'd' || k >= 0x80:
		case k == '*' || k == '_' || k >= '0' && k <= '9' || k == '[':
			if !leadsWithD(text, d.LineStart(n)) {
				continue
			}
		default:
			continue
		}
		sc.disagree = append(sc.disagree, n)
	}
	return sc
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
		return !tail || strings.Contains(h.rest, "GAP-")
	case hSeverity, hLog, hLimits:
		return !tail
	case hNewGaps, hTradeOffs:
		return !tail && !h.tail
	}
	return false
}

func boldHeader(p, r string, n int, role readRole) (cand, bool) {
	if !maybeKeyword(strings.TrimLeft(p, " ")) {
		return cand{}, false
	}
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
	if len(p)-len(t) > 3 {
		return cand{}, false
	}
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
	if !maybeKeyword(p[i:]) {
		return cand{}, false
	}
	h, ok := recognize(p[i:], r[i:])
	if !ok || !h.kind.allowedFor(role) || !looseKind(h, false) {
		return cand{}, false
	}
	return cand{line: n, form: formSetext, sec: -1, h: h}, true
}
