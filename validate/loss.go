package validate

import (
	"fmt"
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
	if id := leadingID(t, findGapIDs); id != "" {
		return gap.ID(id)
	}
	j := strings.IndexAny(t, ":—–-")
	if j <= 0 || j > 48 {
		return ""
	}
	label := strings.TrimSpace(strings.Trim(t[:j], "*_ "))
	if strings.HasSuffix(label, "GAP") || len(strings.Fields(label)) > 4 {
		return ""
	}
	for _, c := range label {
		if !(c == ' ' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '*' || c == '_') {
			return ""
		}
	}
	_, at := afterKeyword(t, j)
	return gap.ID(leadingID(t[at:], findGapIDs))
}

// leadingID returns the ID find reads at the start of s, after brackets
// and emphasis, or "".
func leadingID(s string, find func(string) []gap.Match) string {
	k := len(s) - len(strings.TrimLeft(s, "*_[(` \t"))
	ms := find(s[k:min(len(s), k+24)])
	if len(ms) == 0 || ms[0].Start != 0 {
		return ""
	}
	return ms[0].ID
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
	return leadingID(p[i:], findIssueIDs)
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
	return leadingID(rest, findIssueIDs)
}

// eachLine calls f once for each line holding a match of find in the
// prose, in order, with the first match on it.
func eachLine(d *markdown.Doc, ms []gap.Match, f func(n int)) {
	last := 0
	for _, m := range ms {
		n := d.LineOf(m.Start)
		if n == last {
			continue
		}
		last = n
		f(n)
	}
}

// disagreeHits returns the offsets of the word "disagree" in the prose, in
// any of its usual cases, in order.
func disagreeLines(d *markdown.Doc) []int {
	var lines []int
	seen := map[int]bool{}
	for _, lit := range [...]string{"isagree", "ISAGREE"} {
		for off := 0; ; {
			i := strings.Index(d.Prose[off:], lit)
			if i < 0 {
				break
			}
			off += i + len(lit)
			if n := d.LineOf(off - 1); !seen[n] {
				seen[n] = true
				lines = append(lines, n)
			}
		}
	}
	return lines
}

// unreadIn finds the lines of d the reading in res did not take. round is
// the round of the Reviewer's issues (0 when unknown: then the round of
// the issues read, and when none was read, no issue line is judged).
func unreadIn(d *markdown.Doc, res *Result, reviewer bool, round int) []unread {
	var out []unread
	read := map[gap.ID]bool{}
	for _, id := range res.GapsAddressed {
		read[id] = true
	}
	for _, ng := range res.NewGaps {
		read[ng.ID] = true
	}
	issues := map[string]bool{}
	latest := 0
	for _, is := range res.Issues {
		issues[is.ID] = true
		read[is.Gap] = true
		latest = max(latest, issueRound(is.ID))
	}
	if round == 0 {
		round = latest
	}
	if reviewer {
		for _, h := range res.ReviewHeaders {
			for _, m := range findGapIDs(h) {
				read[gap.ID(m.ID)] = true
			}
		}
	}
	eachLine(d, findGapIDs(d.Prose), func(n int) {
		p, _, ok := titleOf(d, n)
		if !ok {
			return
		}
		if id := subjectGap(p); id != "" && !read[id] {
			what := "addressed (a '## Gap Resolution: " + string(id) + "' section) or listed under '### New Gaps Introduced'"
			if reviewer {
				what = "named in a '## Review:' header, an issue's gap, or listed under '### New Gaps Identified'"
			}
			out = append(out, unread{n, fmt.Sprintf("%s is about %s, but the reading did not take it: a gap in a header is %s; a header that only mentions a gap belongs in running text",
				quote(d.Line(n)), id, what)})
		}
	})
	if reviewer {
		if round > 0 {
			eachLine(d, findIssueIDs(d.Prose), func(n int) {
				id := leadingIssue(d, n)
				if id == "" || issues[id] || issueRound(id) != round {
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
	taken := map[int]bool{}
	for _, dg := range res.Disagreements {
		taken[dg.Line] = true
		responded[dg.IssueID] = true
	}
	eachLine(d, findIssueIDs(d.Prose), func(n int) {
		if id := leadingIssue(d, n); id != "" && !responded[id] && disagreeLike(d.ProseLine(n)) == "" {
			out = append(out, unread{n, fmt.Sprintf("%s opens %s but the reading did not take it as a response", id, quote(d.Line(n)))})
		}
	})
	for _, n := range disagreeLines(d) {
		if id := disagreeLike(d.ProseLine(n)); id != "" && !taken[n] {
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
	d := markdown.Parse(res.Text)
	var out []string
	for _, u := range unreadIn(d, &res, reviewer, 0) {
		out = append(out, fmt.Sprintf("line %d: %s", u.line, u.msg))
	}
	return out
}
