package validate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/markdown"
)

// A header-like line is an ATX heading at any level, a bold line standing
// alone, or a setext title. The reading must take every ID such a line is
// about, every issue ID that opens such a line or a list item, and every
// DISAGREE-like line (DESIGN §18, no silent loss); what it did not take is
// an unread line, and the answer fails AMBIGUOUS_STRUCTURE naming the first.

// unread is a line the reading did not take, with why.
type unread struct {
	line int
	msg  string
}

// eachHeaderLine calls f for each header-like line of sc that names a gap
// ("GAP-" in it), in order, with its title's prose: the ATX headings, the
// bold lines standing alone (not a label with text after it, not a
// sentence) and the setext titles. Lines skip reports are passed over
// before their title is read.
func eachHeaderLine(sc scanned, skip func(n int) bool, f func(n int, title string)) {
	d := sc.d
	loose := append(slices.Clip(sc.bold), sc.setext...)
	slices.Sort(loose)
	hs := d.Headings
	for len(hs) > 0 || len(loose) > 0 {
		if len(loose) == 0 || len(hs) > 0 && hs[0].Line <= loose[0] {
			h := hs[0]
			hs = hs[1:]
			if len(loose) > 0 && loose[0] == h.Line {
				loose = loose[1:]
			}
			if strings.Contains(h.Title, "GAP-") && !skip(h.Line) {
				p, _ := headingTitle(d, h)
				f(h.Line, p)
			}
			continue
		}
		n := loose[0]
		loose = loose[1:]
		if len(loose) > 0 && loose[0] == n {
			continue // bold and a setext title: once
		}
		if !strings.Contains(d.ProseLine(n), "GAP-") || skip(n) {
			continue
		}
		if p, _, ok := titleOf(d, n); ok {
			f(n, p)
		}
	}
}

// titleOf returns the title of a header-like line of d (prose and raw,
// the same length) and whether line n is one.
func titleOf(d *markdown.Doc, n int) (p, r string, ok bool) {
	p, r = d.ProseLine(n), d.Line(n)
	if _, _, isHeading := markdown.ATXHeading(p); isHeading {
		i := len(p) - len(strings.TrimLeft(strings.TrimLeft(p, " "), "#"))
		return p[i:], r[i:], true
	}
	if tp, tr, tail, isBold := boldAlone(p, r); isBold && !tail {
		// A bold label with text after it is a field, and a bold sentence
		// ("**GAP-FLOW-001 is now unblocked.**") is emphasis.
		if t := strings.TrimRight(tp, "*_: \t"); !strings.HasSuffix(t, ".") && !strings.HasSuffix(t, "!") && !strings.HasSuffix(t, "?") {
			return tp, tr, true
		}
	}
	if n < d.LineCount() && strings.TrimSpace(p) != "" && isUnderline(strings.TrimLeft(d.ProseLine(n+1), " ")) &&
		(n == 1 || strings.TrimSpace(d.ProseLine(n-1)) == "") {
		if _, _, isItem := listItem(p); !isItem {
			return p, r, true
		}
	}
	return "", "", false
}

// subjectGap returns the gap ID a header-like title is about: one that
// opens it ("GAP-FLOW-002: Retries"), or follows a short label and a
// separator ("Gap Resolution: GAP-…", "Resolution — GAP-…"). A title that
// mentions a gap in passing ("Integration with GAP-FLOW-001") is about
// no gap.
func subjectGap(p string) gap.ID {
	i, _, _ := stripDecoration(p)
	t := p[i:]
	if id := leadingGapID(t); id != "" {
		return gap.ID(id)
	}
	j := strings.IndexAny(t, ":—–-")
	if j <= 0 || j > 48 {
		return ""
	}
	label := strings.TrimSpace(strings.Trim(t[:j], "*_ "))
	if strings.HasSuffix(label, "GAP") || strings.Count(label, " ") > 3 {
		return "" // an ID's own dash, or more than a short label
	}
	for _, c := range label {
		if !(c == ' ' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '*' || c == '_') {
			return ""
		}
	}
	_, at := afterKeyword(t, j)
	return gap.ID(leadingGapID(t[at:]))
}

// leadingGapID returns the gap ID at the start of s, after brackets and
// emphasis, as findGapIDs reads it, or "".
func leadingGapID(s string) string {
	s = strings.TrimLeft(s, "*_[(` \t")
	if !strings.HasPrefix(s, "GAP-") {
		return ""
	}
	n := gapIDLen(s[4:])
	if n == 0 || strings.HasSuffix(strings.TrimRight(s[:4+n], "abcdefghijklmnopqrstuvwxyz"), "-000") {
		return ""
	}
	return s[:4+n]
}

// leadingIssueID returns the issue ID at the start of s, after brackets
// and emphasis, as findIssueIDs reads it, or "".
func leadingIssueID(s string) string {
	s = strings.TrimLeft(s, "*_[(` \t")
	if !strings.HasPrefix(s, "ISSUE-R") {
		return ""
	}
	if n := issueIDLen(s[7:]); n > 0 {
		return s[:7+n]
	}
	return ""
}

// leadingIssue returns the issue ID that opens a header-like line or a
// list item of d at line n (after its marker, numbering, emoji and
// emphasis), or "".
func leadingIssue(d *markdown.Doc, n int) string {
	p, _, ok := titleOf(d, n)
	if !ok {
		pl := d.ProseLine(n)
		_, at, isItem := listItem(pl)
		if !isItem {
			return ""
		}
		p = pl[at:]
	}
	i, _, _ := stripDecoration(p)
	return leadingIssueID(p[i:])
}

// disagreeLike returns the issue ID of a line that opens with the word
// DISAGREE (any case, after heading marks, a list marker, numbering,
// emoji or emphasis) followed by an issue ID ("DISAGREE: ISSUE-…",
// "Disagree with ISSUE-…"), or "".
func disagreeLike(p string) string {
	t := strings.TrimLeft(p, " \t>")
	if _, _, ok := markdown.ATXHeading(t); ok {
		t = strings.TrimLeft(strings.TrimLeft(t, "#"), " \t")
	} else if _, at, ok := listItem(t); ok {
		t = t[at:]
	}
	i, _, _ := stripDecoration(t)
	n, _, ok := keywordAt(t[i:], "disagree", "")
	if !ok {
		return ""
	}
	_, at := afterKeyword(t, i+n)
	rest := t[at:]
	for _, w := range [...]string{"with ", "on ", "about ", "regarding ", "re ", "re: "} {
		if hasPrefixFold(rest, w) {
			rest = strings.TrimLeft(rest[len(w):], " \t")
			break
		}
	}
	return leadingIssueID(rest)
}

// indexRare is strings.Index for a needle whose first byte is rare in the
// text: it looks for that byte alone (the fastest search there is) and
// checks the rest, where strings.Index, after a few false starts, falls
// back to a slower general search.
func indexRare(s, needle string) int {
	for off := 0; ; {
		i := strings.IndexByte(s[off:], needle[0])
		if i < 0 {
			return -1
		}
		if strings.HasPrefix(s[off+i:], needle) {
			return off + i
		}
		off += i + 1
	}
}

// hitLines returns the lines whose prose holds needle, in order, each
// once: a fast search of the text, not a walk over its lines.
func hitLines(d *markdown.Doc, needle string) []int {
	var offs []int
	for off := 0; ; {
		i := indexRare(d.Prose[off:], needle)
		if i < 0 {
			break
		}
		offs = append(offs, off+i)
		off = lineEnd(d.Prose, off+i) + 1
		if off > len(d.Prose) {
			break
		}
	}
	var lines []int
	n, at := 1, 0
	for _, o := range offs {
		n += strings.Count(d.Prose[at:o], "\n")
		at = o
		if len(lines) == 0 || lines[len(lines)-1] != n {
			lines = append(lines, n)
		}
	}
	return lines
}

// leadsWithD reports whether the line of text starting at offset at has,
// as its first letter after markers, digits and emphasis, a D, or starts
// with an emoji after them.
func leadsWithD(text string, at int) bool {
	for i := at; i < len(text); i++ {
		switch c := text[i]; {
		case c == ' ' || c == '\t' || c == '#' || c == '>' || c == '-' || c == '*' || c == '+' || c == '_' ||
			c == '.' || c == ')' || c == '[' || c >= '0' && c <= '9':
		case c == 'D' || c == 'd' || c >= 0x80:
			return true
		default:
			return false
		}
	}
	return false
}

// eachLeadingIssue calls f for each line of d that opens with an issue ID
// (a header-like line or a list item, after its marker, numbering, emoji
// and emphasis), in order, with the ID.
//
// skip, when not nil, passes over lines before they are read (lines the
// caller knows are taken), in increasing order of n.
func eachLeadingIssue(d *markdown.Doc, skip func(n int) bool, f func(n int, id string)) {
	// "UE-R": a capital U is rare in prose, so the search is fast.
	for _, n := range hitLines(d, "UE-R") {
		switch c := d.Lead[n-1]; {
		case c == '#' || c == '-' || c == '*' || c == '+' || c == '_' || c >= '0' && c <= '9':
		case c != 0 && n < len(d.Lead) && (d.Lead[n] == '-' || d.Lead[n] == '='): // a setext title?
		default:
			continue // prose: no issue opens it
		}
		if skip != nil && skip(n) {
			continue
		}
		if id := leadingIssue(d, n); id != "" {
			f(n, id)
		}
	}
}

// unreadIn finds the lines of d the reading in res did not take. round is
// the round of the Reviewer's issues (0 when unknown: then the round of
// the issues read, and when none was read, no issue line is judged).
//
// responses is set when the Engineer's responses are to be checked too:
// Unread does, the validator need not (it reads every such line as one).
// taken, sorted, are lines the validator read as headers or entries (its
// Gap Resolution and Review headers, its issue entries): they are passed
// over without a look. Unread gives none and judges every line by the IDs
// the result holds.
func unreadIn(sc scanned, res *Result, reviewer bool, round int, responses bool, taken []int) []unread {
	d := sc.d
	var out []unread
	// The gaps the reading took, built when a header-like line about a gap
	// is met that is not a Gap Resolution header the reading took.
	var read map[gap.ID]bool
	took := func(id gap.ID) bool {
		if read == nil {
			read = map[gap.ID]bool{}
			for _, id := range res.GapsAddressed {
				read[id] = true
			}
			for _, ng := range res.NewGaps {
				read[ng.ID] = true
			}
			for _, is := range res.Issues {
				read[is.Gap] = true
			}
			for _, title := range res.ReviewHeaders {
				for i := strings.Index(title, "GAP-"); i >= 0; {
					if id := leadingGapID(title[i:]); id != "" && (i == 0 || !isWordByte(title[i-1])) {
						read[gap.ID(id)] = true
					}
					j := strings.Index(title[i+4:], "GAP-")
					if j < 0 {
						break
					}
					i += 4 + j
				}
			}
		}
		return read[id]
	}
	// isTaken walks taken forward: lines come in increasing order.
	isTaken := func(t []int) func(int) bool {
		return func(n int) bool {
			for len(t) > 0 && t[0] < n {
				t = t[1:]
			}
			return len(t) > 0 && t[0] == n
		}
	}
	eachHeaderLine(sc, isTaken(taken), func(n int, p string) {
		if !strings.Contains(p, "GAP-") {
			return // the ID was in code
		}
		if id := subjectGap(p); id != "" && !took(id) {
			what := "addressed (a '## Gap Resolution: " + string(id) + "' section) or listed under '### New Gaps Introduced'"
			if reviewer {
				what = "named in a '## Review:' header, an issue's gap, or listed under '### New Gaps Identified'"
			}
			out = append(out, unread{n, fmt.Sprintf("%s is about %s, but the reading did not take it: a gap in a header is %s; a header that only mentions a gap belongs in running text",
				quote(d.Line(n)), id, what)})
		}
	})
	var issues map[string]bool // built when a line not taken opens with an issue
	issueRead := func(id string) bool {
		if issues == nil {
			issues = make(map[string]bool, len(res.Issues))
			for _, is := range res.Issues {
				issues[is.ID] = true
			}
		}
		return issues[id]
	}
	if reviewer && round == 0 {
		for _, is := range res.Issues {
			round = max(round, issueRound(is.ID))
		}
	}
	if reviewer {
		if round > 0 {
			eachLeadingIssue(d, isTaken(taken), func(n int, id string) {
				if issueRound(id) != round || issueRead(id) {
					return // read, or an earlier round's issue referred to
				}
				out = append(out, unread{n, fmt.Sprintf("%s opens %s, which is not an entry of a severity section: write each issue of this round under '### Critical Issues', '### High Priority', '### Medium Priority' or '### Low Priority', as \"- **%s**: summary\"",
					id, quote(d.Line(n)), id)})
			})
		}
		return out
	}
	responded := map[string]bool{}
	for _, id := range res.Responses {
		responded[id] = true
	}
	blocks := map[int]bool{}
	for _, dg := range res.Disagreements {
		blocks[dg.Line] = true
		responded[dg.IssueID] = true
	}
	if responses {
		eachLeadingIssue(d, nil, func(n int, id string) {
			if !responded[id] && disagreeLike(d.ProseLine(n)) == "" {
				out = append(out, unread{n, fmt.Sprintf("%s opens %s but the reading did not take it as a response", id, quote(d.Line(n)))})
			}
		})
	}
	for _, n := range sc.disagree {
		if id := disagreeLike(d.ProseLine(n)); id != "" && !blocks[n] {
			out = append(out, unread{n, fmt.Sprintf("%s reads like a DISAGREE for %s but is not a DISAGREE block: write it as a level-2 heading '## DISAGREE: %s' followed by **Reviewer Concern:**, **Engineer Position:** and **Rationale:**",
				quote(d.Line(n)), id, id)})
		}
	}
	return out
}

// Unread returns the lines of a validated answer that name a gap, an
// issue or a disagreement its reading did not take (DESIGN §18, no silent
// loss), each as "line N: what and why"; nil when the reading took
// everything. It reads res.Text and res's parsed fields only, so a caller
// can check any Result it holds (the simulator checks every validated
// answer): an Engineer result (one with Sections) for Gap Resolution and
// new-gap IDs, issue responses and DISAGREE-like lines; a Reviewer result
// (one with a Verdict) for gap IDs and the issues of its round (the round
// of the issues it read). A successful Engineer or Reviewer result always
// returns nil: the validators fail AMBIGUOUS_STRUCTURE on the first such
// line. Other results (failures before the reading, integration results)
// return nil.
func Unread(res Result) []string {
	reviewer := res.Verdict != ""
	if !reviewer && len(res.Sections) == 0 {
		return nil
	}
	var out []string
	for _, u := range unreadIn(scan(markdown.Parse(res.Text)), &res, reviewer, 0, true, nil) {
		out = append(out, fmt.Sprintf("line %d: %s", u.line, u.msg))
	}
	return out
}
