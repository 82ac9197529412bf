package validate

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/markdown"
)

const (
	gapResolutionHeader = "## Gap Resolution:"
	gapResolutionTitle  = "Gap Resolution:"
	confidenceMarker    = "**Confidence:**"
)

// Engineer validates an Engineer output (the rules of GAP-FLOW-001 §2
// as DESIGN §18 amends them) and parses its Gap Resolution sections, new
// gaps, DISAGREE blocks and responses to issues.
//
// The answer is first checked for size, for a finish reason that says it
// was cut (TRUNCATED) or refused (REFUSAL), and read: Normalize's mapping
// for the Engineer, whose text is Result.Text and whose lines every field
// refers to. Tier 1 needs a level-2 "## Gap Resolution:" heading and a
// "**Confidence:**" statement outside code, once normalized, and no fence
// left open; an answer without the header that declines the task is
// REFUSAL, one that asks a question back CLARIFICATION. Tier 2 needs every
// header-like line about a gap, issue or disagreement read
// (AMBIGUOUS_STRUCTURE), every Gap Resolution header to name a valid gap
// (NO_GAPS_ADDRESSED), every gap referenced outside code to be in
// opt.KnownGaps unless the output introduces it as new (INCONSISTENT_REFS),
// and every DISAGREE block to be well formed and to reference a known,
// undecided issue. Thin sections, missing Trade-offs and similar findings
// are warnings.
func Engineer(content string, opt Options) Result {
	sc, base, ok := begin(content, opt.maxBytes(), opt.FinishReason, roleEngineer)
	if !ok {
		return base
	}
	d := sc.d

	heads := sectionsTitled(d, 2, gapResolutionTitle)
	if len(heads) == 0 {
		return base.fail(noHeader(d, gapResolutionHeader))
	}
	if !strings.Contains(d.Prose, confidenceMarker) {
		hint, n := codeOnly(d, confidenceMarker)
		r := Fail(WrongFormat, "Missing required: '"+confidenceMarker+"' statement"+hint)
		r.Line = n
		return base.fail(r)
	}

	w := warningsOf(base.Normalized)
	known := idSet(opt.KnownGaps)
	res := base
	noID, spans := parseGapSections(d, heads, opt, &res, &w)
	res.NewGaps = parseNewGaps(d, spans.at, known, &w)
	blocks := parseDisagreements(d)
	for _, b := range blocks {
		res.Disagreements = append(res.Disagreements, b.Disagreement)
		if b.IssueID != "" && !b.labels[labelPosition] {
			w.add(b.Line, "DISAGREE for %s has no '**Engineer Position:**'", b.IssueID)
		}
	}
	res.Responses = responses(d)
	res.Warnings = w.list()

	// Tier 2: nothing unread, then, in the spec's order, gaps addressed,
	// cross-references and the DISAGREE blocks (GAP-FLOW-006 §2, §5).
	taken := make([]int, 0, len(heads))
	for _, h := range heads {
		taken = append(taken, h.Line)
	}
	if u := unreadIn(sc, &res, false, 0, false, taken); len(u) > 0 {
		return res.fail(failAt(AmbiguousStructure, u[0].line, "%s", u[0].msg))
	}
	if len(noID) > 0 {
		h := noID[0]
		msg := fmt.Sprintf("%s carries no valid gap ID (want GAP-{2-10 uppercase letters}-{3 digits}, e.g. GAP-FLOW-001; IDs in `code` do not count)", quote(d.Line(h.Line)))
		if len(res.GapsAddressed) == 0 {
			msg += ". No gap IDs found in output. Expected references like GAP-FLOW-001."
		}
		return res.fail(failAt(NoGapsAddressed, h.Line, "%s", msg))
	}
	if known != nil {
		if r, ok := checkRefs(d, known, newIDs(res.NewGaps)); !ok {
			return res.fail(r)
		}
	}
	if r, ok := checkDisagreements(blocks, opt); !ok {
		return res.fail(r)
	}
	res.Success = true
	res.Message = successMessage(res.Warnings, plural(len(res.GapsAddressed), "gap")+" addressed")
	return res
}

// warningsOf starts a result's warnings with one NORMALIZED warning per
// kind of normalization.
func warningsOf(norm []Normalization) warnings {
	var w warnings
	for _, n := range norm {
		w.add(0, "%s", n.Warning())
	}
	return w
}

// noHeader is the failure of an answer without its required header: a
// refusal or a question back when it reads as one, else WRONG_FORMAT
// pointing at the nearest miss.
func noHeader(d *markdown.Doc, want string) Result {
	if t, msg := headerless(d); t != "" {
		return Fail(t, msg)
	}
	hint, n := missingHeader(d, want)
	r := Fail(WrongFormat, "Missing required header: '"+want+"'"+hint)
	r.Line = n
	return r
}

// parseGapSections fills res.Sections and res.GapsAddressed from the Gap
// Resolution headings and returns the headings that name no valid gap and
// where each section lies.
func parseGapSections(d *markdown.Doc, heads []titled, opt Options, res *Result, w *warnings) (noID []titled, where spans) {
	first := map[gap.ID]int{}
	for _, h := range heads {
		after := h.prose[len(gapResolutionTitle):]
		ms := findGapIDs(after)
		if len(ms) == 0 {
			noID = append(noID, h)
			continue
		}
		id := gap.ID(ms[0].ID)
		if len(ms) > 1 {
			var all []string
			for _, m := range ms {
				all = append(all, m.ID)
			}
			w.add(h.Line, "header names several gaps (%s); only %s counts as addressed: give each gap its own section", strings.Join(all, ", "), id)
		}
		if prev, dup := first[id]; dup {
			w.add(h.Line, "second Gap Resolution section for %s (first at line %d)", id, prev)
		} else {
			first[id] = h.Line
			res.GapsAddressed = append(res.GapsAddressed, id)
		}

		// The spec's extract_gap_section measures from just after the ID
		// to the next "## " heading, trimmed.
		titleAt := h.Start + len(d.Line(h.Line)) - len(h.prose)
		idEnd := titleAt + len(gapResolutionTitle) + ms[0].End
		sec := GapSection{
			ID:      id,
			Suffix:  headerSuffix(h.raw[len(gapResolutionTitle)+ms[0].End:]),
			Body:    d.Body(h.Section),
			Line:    h.Line,
			EndLine: d.LineOf(max(h.End-1, h.Start)),
			Chars:   utf8.RuneCountInString(strings.TrimSpace(d.Text[idEnd:h.End])),
		}
		sec.Confidence = confidence(d.ProseBody(h.Section), sec.Body)
		tradeOffs := false
		for _, sub := range d.Within(h.Section) {
			if sub.Level == 3 {
				sec.Subsections = append(sec.Subsections, sub.Title)
			}
			p, _ := headingTitle(d, sub.Heading)
			if isTradeOffs(p) {
				tradeOffs = true
			}
		}
		if sec.Chars < opt.minChars() {
			w.add(h.Line, "Gap %s section is thin (%d chars)", id, sec.Chars)
		}
		if !tradeOffs {
			w.add(h.Line, "Missing ### Trade-offs section (recommended) for %s", id)
		}
		if sec.Confidence == "" {
			w.add(h.Line, "Gap Resolution for %s has no '%s' statement", id, confidenceMarker)
		}
		res.Sections = append(res.Sections, sec)
		where = append(where, span{h.Start, h.End, id})
	}
	sortIDs(res.GapsAddressed)
	return noID, where
}

// headerSuffix is the header text after the ID ("(Revised)"), without an
// ATX closing sequence.
func headerSuffix(s string) string {
	s = strings.TrimSpace(s)
	if t := strings.TrimRight(s, "#"); t != s && (t == "" || strings.HasSuffix(t, " ") || strings.HasSuffix(t, "\t")) {
		s = strings.TrimSpace(t)
	}
	return s
}

// confidence returns the value of the first "**Confidence:**" outside code
// in a section: the level when the value starts with one, else the text.
func confidence(prose, text string) gap.Confidence {
	i := strings.Index(prose, confidenceMarker)
	if i < 0 {
		return ""
	}
	v := text[i+len(confidenceMarker):]
	if nl := strings.IndexByte(v, '\n'); nl >= 0 {
		v = v[:nl]
	}
	v = strings.Trim(v, " \t*_")
	word := strings.ToUpper(strings.TrimRight(strings.SplitN(v+" ", " ", 2)[0], ".,;*_"))
	if c := gap.Confidence(word); c.Known() {
		return c
	}
	return gap.Confidence(v)
}

// isTradeOffs accepts "Trade-offs", "Tradeoffs", "Trade offs" in any case.
func isTradeOffs(title string) bool {
	const want = "tradeoffs"
	n := 0
	for i := 0; i < len(title) && n < len(want); i++ {
		c := title[i] | 0x20 // ASCII lower case; other bytes never match
		switch {
		case title[i] == '-' || title[i] == ' ' || title[i] == '_':
		case c == want[n]:
			n++
		default:
			return false
		}
	}
	return n == len(want)
}

// span is where a Gap Resolution section lies in the scanned text.
type span struct {
	start, end int
	id         gap.ID
}

// spans are Gap Resolution sections in document order.
type spans []span

// at returns the ID of the section holding byte offset off, "" when none does.
func (ss spans) at(off int) gap.ID {
	i := sort.Search(len(ss), func(i int) bool { return ss[i].start > off })
	if i == 0 || off >= ss[i-1].end {
		return ""
	}
	return ss[i-1].id
}

// responses returns the issue IDs an Engineer answer responds to, in
// order of first appearance: those of "Response to ISSUE-…" headings, and
// the issue ID that opens a header-like line or a list item ("###
// ISSUE-R2-001: …", "- ISSUE-R2-001: fixed by …"). A DISAGREE heading is
// a disagreement, not a response.
func responses(d *markdown.Doc) []string {
	var out []string
	seen := map[string]bool{}
	add := func(id string) {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	type at struct {
		line int
		id   string
	}
	var found []at
	for _, h := range d.Headings {
		if !hasPrefixFold(h.Title, "Response to") && !strings.Contains(h.Title, "`") {
			continue // most headings: no "Response to" (code aside, the title as written tells)
		}
		if p, _ := headingTitle(d, h); hasPrefixFold(p, "Response to") {
			for _, m := range findIssueIDs(p) {
				found = append(found, at{h.Line, m.ID})
			}
		}
	}
	eachLeadingIssue(d, nil, func(n int, id string) {
		if disagreeLike(d.ProseLine(n)) == "" {
			found = append(found, at{n, id})
		}
	})
	slices.SortStableFunc(found, func(a, b at) int { return a.line - b.line })
	for _, f := range found {
		add(f.id)
	}
	return out
}

// fail turns res into the failure r, keeping what was parsed.
func (res Result) fail(r Result) Result {
	res.Success = false
	res.FailureType, res.Retriable, res.Message, res.Tier, res.Line = r.FailureType, r.Retriable, r.Message, r.Tier, r.Line
	return res
}

func successMessage(warn []string, found string) string {
	if len(warn) > 0 {
		return "Content valid with warnings: " + found
	}
	return "Content valid: " + found
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func idSet(ids []gap.ID) map[gap.ID]bool {
	if ids == nil {
		return nil
	}
	m := make(map[gap.ID]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

func newIDs(ngs []NewGap) map[gap.ID]bool {
	m := make(map[gap.ID]bool, len(ngs))
	for _, ng := range ngs {
		m[ng.ID] = true
	}
	return m
}
