package conflict

import (
	"fmt"
	"slices"
	"strings"

	"github.com/refine-spec/refine/gap"
)

// Heuristic is one implicit-disagreement heuristic of GAP-FLOW-013: a sign
// that the Engineer passed over a HIGH/CRITICAL issue without disagreeing
// openly (docs/workflow.md#implicit-disagreement).
type Heuristic string

// The five heuristics.
const (
	unaddressedID       Heuristic = "UNADDRESSED_ID"        // H1
	gapNotRevisited     Heuristic = "GAP_NOT_REVISITED"     // H2
	ackWithoutResponse  Heuristic = "ACK_WITHOUT_RESPONSE"  // H3
	semanticNonResponse Heuristic = "SEMANTIC_NON_RESPONSE" // H4
	deflection          Heuristic = "DEFLECTION"            // H5
)

// Thresholds of H4.
const (
	// similarityThreshold: a gap section at least this similar (token
	// Jaccard) to last round's was not revised.
	similarityThreshold = 0.9
	// keywordShareThreshold: a response sharing less than this share of
	// the suggestion's keywords did not take it up.
	keywordShareThreshold = 0.2
)

// deflectionPhrases are H5's phrases, matched ignoring case and
// punctuation, on word boundaries.
func deflectionPhrases() [7]string {
	return [...]string{"out of scope", "future work", "will be addressed later", "not necessary", "tbd", "beyond the scope", "deferred"}
}

// ImplicitInput is what DetectImplicit reads.
type ImplicitInput struct {
	// Round is the Engineer round checked (N+1).
	Round int
	// EngineerOutput is the Engineer output of that round.
	EngineerOutput string
	// PreviousOutput is the Engineer output of round N, whose gap sections
	// H4 compares against; "" skips that comparison.
	PreviousOutput string
	// Issues are the Reviewer issues of round N (and any older ones the
	// engine carried forward), overrides applied. All severities are
	// checked; only HIGH/CRITICAL findings escalate.
	Issues []Issue
	// Assigned are the gaps assigned to round N+1. An issue against a gap
	// not assigned is not expected to be answered and is skipped. Nil
	// checks every issue.
	Assigned []gap.ID
	// Ignore holds the issues the user marked as false positives.
	Ignore IgnoreSet
}

// Finding is an issue the Engineer output may have implicitly disagreed with.
type Finding struct {
	IssueID string `json:"issue_id"`
	Issue   Issue  `json:"issue"`
	// Round is the Engineer round checked.
	Round      int         `json:"round"`
	Heuristics []Heuristic `json:"heuristics"` // those that fired, H1 to H5
	// Evidence is one human-readable line per fact, as presented.
	Evidence   []string       `json:"evidence"`
	Confidence gap.Confidence `json:"confidence"`
	// Escalate: ask the user (ImplicitQuestion). False for MEDIUM and LOW
	// issues, which are only logged.
	Escalate bool `json:"escalate"`
}

// DetectImplicit applies the heuristics of GAP-FLOW-013 (H1-H5 below) to each
// issue against the Engineer output, skipping issues the Engineer disagreed
// with (a DISAGREE block or its soft match: those are explicit conflicts),
// issues in the ignore set, and issues whose gap was not assigned:
//
//   - H1 UNADDRESSED_ID: the issue ID occurs nowhere outside code.
//   - H2 GAP_NOT_REVISITED: the issue's gap heads no "## Gap Resolution:"
//     section (issues naming no gap cannot fire it).
//   - H3 ACK_WITHOUT_RESPONSE: the ID occurs, but only in list items, table
//     rows or quotes; a response is a paragraph naming the ID, or a heading
//     naming it with text under it.
//   - H4 SEMANTIC_NON_RESPONSE: the gap's section has a token Jaccard
//     similarity of at least similarityThreshold with its section in
//     PreviousOutput; or the response (the gap's section plus every block
//     naming the ID) shares less than keywordShareThreshold of the
//     keywords of the suggestion (the summary when there is none), quotes
//     neither the suggestion nor the location.
//   - H5 DEFLECTION: a deflection phrase ("out of scope", "future work",
//     "will be addressed later", "not necessary", "TBD", "beyond the
//     scope", "deferred") occurs near a reference to the issue. Near means
//     in the same block as the reference (paragraph, list item, table row,
//     quote; for a heading, the heading and the block after it). A
//     reference is the ID, or a block of the gap's section sharing at least
//     half of the summary's keywords (§2's soft-match threshold), so that
//     "schema strictness is out of scope" deflects without naming the ID.
//
// Everything is searched outside code, so an ID or a phrase in a code
// example does not count. Confidence is HIGH when two or more fire or H1
// fires on a CRITICAL issue, MEDIUM when one fires; nothing firing is no
// finding. Findings come in prioritize order.
func DetectImplicit(in ImplicitInput) []Finding {
	cur := newOutline(in.EngineerOutput)
	var prev *outline
	if in.PreviousOutput != "" {
		prev = newOutline(in.PreviousOutput)
	}
	disagreed := map[string]bool{}
	ex := DetectExplicit(ExplicitInput{Round: in.Round, EngineerOutput: in.EngineerOutput, Issues: in.Issues})
	for _, c := range ex.Conflicts {
		disagreed[c.IssueID] = true
	}
	for _, d := range ex.Logged {
		disagreed[d.IssueID] = true
	}
	var assigned map[gap.ID]bool
	if in.Assigned != nil {
		assigned = map[gap.ID]bool{}
		for _, g := range in.Assigned {
			assigned[g] = true
		}
	}
	ck := checker{cur: cur, prev: prev, round: in.Round, similarity: map[gap.ID]float64{}, unitKW: map[int]map[string]struct{}{}}

	var out []Finding
	seen := map[string]bool{}
	for _, is := range in.Issues {
		switch {
		case seen[is.ID] || disagreed[is.ID] || in.Ignore.has(is.ID):
			continue
		case assigned != nil && is.Gap != "" && !assigned[is.Gap]:
			continue
		}
		seen[is.ID] = true
		f, ok := ck.check(is)
		if !ok {
			continue
		}
		if slices.Contains(f.Heuristics, unaddressedID) {
			f.Evidence = slices.Insert(f.Evidence, 1, ck.othersAddressed(is, in.Issues, disagreed))
		}
		out = append(out, f)
	}
	slices.SortStableFunc(out, func(a, b Finding) int { return compareIssues(a.Issue, b.Issue) })
	return out
}

// checker holds the scanned outputs and caches shared by the issues.
type checker struct {
	cur, prev *outline
	round     int
	// similarity caches H4's section similarity per gap (-1: no pair).
	similarity map[gap.ID]float64
	unitKW     map[int]map[string]struct{}
}

func (ck *checker) check(is Issue) (Finding, bool) {
	f := Finding{IssueID: is.ID, Issue: is, Round: ck.round}
	refs := ck.cur.refs[is.ID]
	fire := func(h Heuristic, evidence string) {
		if !slices.Contains(f.Heuristics, h) {
			f.Heuristics = append(f.Heuristics, h)
		}
		f.Evidence = append(f.Evidence, evidence)
	}

	// H1.
	if len(refs) == 0 {
		fire(unaddressedID, fmt.Sprintf("Round %d Engineer output contains no reference to %s", ck.round, is.ID))
	}
	// H2.
	curBody, hasSection := ck.cur.gapBody(is.Gap)
	if is.Gap != "" && !hasSection {
		fire(gapNotRevisited, fmt.Sprintf("Round %d Engineer output has no Gap Resolution section for %s", ck.round, is.Gap))
	}
	// H3.
	if len(refs) > 0 && !ck.responded(refs) {
		fire(ackWithoutResponse, fmt.Sprintf("%s appears only in list, table or quote lines (%s), with no response paragraph", is.ID, lineList(refs)))
	}
	// H4 (a): the gap's section barely changed since last round.
	if sim := ck.sectionSimilarity(is.Gap, curBody, hasSection); sim >= similarityThreshold {
		what := "unchanged"
		if sim < 1 {
			what = "barely changed"
		}
		fire(semanticNonResponse, fmt.Sprintf("%s section %s from Round %d (%s token similarity)", is.Gap, what, ck.round-1, percent(sim)))
	}
	// H4 (b): the response does not take up the suggestion.
	want := keywordSet(reviewerText(is))
	if len(want) > 0 {
		resp := ck.responseText(is, refs)
		t := newMatchText(resp)
		shared, share := overlap(want, t.keywords)
		if share < keywordShareThreshold && !t.quotes(reviewerText(is)) && !t.locates(is.Location) {
			fire(semanticNonResponse, fmt.Sprintf("Response shares %d of %d keywords (%s) of the Reviewer's suggestion and quotes neither its text nor its location", shared, len(want), percent(share)))
		}
	}
	// H5.
	if phrase, line, ok := ck.deflects(is, refs); ok {
		fire(deflection, fmt.Sprintf("Deflection %q near the reference on line %d, without a DISAGREE block", phrase, line))
	}

	if len(f.Heuristics) == 0 {
		return Finding{}, false
	}
	f.Evidence = append(f.Evidence, "Issue severity is "+rank(is.Severity).String())
	f.Confidence = gap.ConfidenceMedium
	if len(f.Heuristics) >= 2 || (f.Heuristics[0] == unaddressedID && is.Severity == gap.Critical) {
		f.Confidence = gap.ConfidenceHigh
	}
	// A flag does not discard a fix. Only HIGH confidence (two or
	// more heuristics, or H1 on a CRITICAL issue) asks the user; a single
	// heuristic is logged, and the engine has the Reviewer check the issue.
	f.Escalate = rank(is.Severity).AtLeastHigh() && f.Confidence == gap.ConfidenceHigh
	return f, true
}

// sectionSimilarity is the token Jaccard similarity of the gap's section in
// this round's and last round's output, or -1 when either has none.
func (ck *checker) sectionSimilarity(id gap.ID, curBody string, hasSection bool) float64 {
	if sim, ok := ck.similarity[id]; ok {
		return sim
	}
	sim := -1.0
	if hasSection && ck.prev != nil {
		if prevBody, ok := ck.prev.gapBody(id); ok {
			sim = jaccard(tokenSet(curBody), tokenSet(prevBody))
		}
	}
	ck.similarity[id] = sim
	return sim
}

// responded reports whether any reference is a response: a paragraph, or a
// heading with text under it.
func (ck *checker) responded(refs []issueRef) bool {
	for _, r := range refs {
		u := ck.cur.units[r.unit]
		if u.kind == unitParagraph || (u.kind == unitHeading && ck.cur.governs(u)) {
			return true
		}
	}
	return false
}

// responseText is the gap's section plus every block naming the issue (a
// heading's whole section).
func (ck *checker) responseText(is Issue, refs []issueRef) string {
	var b strings.Builder
	if body, ok := ck.cur.gapBody(is.Gap); ok {
		b.WriteString(body)
	}
	done := map[int]bool{}
	for _, r := range refs {
		if done[r.unit] {
			continue
		}
		done[r.unit] = true
		u := ck.cur.units[r.unit]
		b.WriteByte('\n')
		if u.kind == unitHeading {
			b.WriteString(ck.cur.doc.Full(ck.cur.section(u)))
		} else {
			b.WriteString(ck.cur.text(u))
		}
	}
	return b.String()
}

// deflects looks for a deflection phrase near a reference to the issue and
// returns the phrase and its line.
func (ck *checker) deflects(is Issue, refs []issueRef) (string, int, bool) {
	var near []int
	for _, r := range refs {
		near = append(near, r.unit)
		if ck.cur.units[r.unit].kind == unitHeading {
			if n := ck.cur.next(r.unit); n >= 0 {
				near = append(near, n)
			}
		}
	}
	// Soft references: blocks of the gap's section about the issue.
	if summary := keywordSet(is.Summary); len(summary) >= 2 {
		for _, s := range ck.cur.gaps[is.Gap] {
			for _, i := range ck.cur.unitsIn(s.BodyStart, s.End) {
				if ck.cur.units[i].kind == unitHeading {
					continue
				}
				if _, share := overlap(summary, ck.unitKeywords(i)); share >= softMatchThreshold {
					near = append(near, i)
				}
			}
		}
	}
	slices.Sort(near)
	near = slices.Compact(near)
	for _, i := range near {
		u := ck.cur.units[i]
		n := normWords(ck.cur.prose(u))
		for _, p := range deflectionPhrases() {
			if at := strings.Index(n, " "+p+" "); at >= 0 {
				return p, u.line + strings.Count(ck.cur.prose(u)[:proseOffset(ck.cur.prose(u), n, at)], "\n"), true
			}
		}
	}
	return "", 0, false
}

// unitKeywords caches the keywords of a unit's prose.
func (ck *checker) unitKeywords(i int) map[string]struct{} {
	if k, ok := ck.unitKW[i]; ok {
		return k
	}
	k := keywordSet(ck.cur.prose(ck.cur.units[i]))
	ck.unitKW[i] = k
	return k
}

// othersAddressed is Example 2's "Engineer addressed 3 other issues from
// Round 4 Reviewer": the other issues of the same round the output names
// or disagrees with.
func (ck *checker) othersAddressed(is Issue, all []Issue, disagreed map[string]bool) string {
	n := 0
	seen := map[string]bool{is.ID: true}
	for _, o := range all {
		if seen[o.ID] || issueRound(o) != issueRound(is) {
			continue
		}
		seen[o.ID] = true
		if len(ck.cur.refs[o.ID]) > 0 || disagreed[o.ID] {
			n++
		}
	}
	return fmt.Sprintf("Engineer addressed %d other %s from Round %d Reviewer", n, plural(n, "issue", "issues"), issueRound(is))
}

// proseOffset maps a byte offset in normWords(p) back to an approximate
// offset in p, for the line number of a phrase: the i-th word of n is the
// i-th word of p.
func proseOffset(p, n string, at int) int {
	words := strings.Count(n[:at+1], " ") - 1 // words before the match
	k := 0
	in := false
	for i, r := range p {
		isW := isWordRune(r)
		if isW && !in {
			if k == words {
				return i
			}
			k++
		}
		in = isW
	}
	return len(p)
}

// lineList formats the distinct lines of refs: "lines 3, 9".
func lineList(refs []issueRef) string {
	var ls []string
	last := -1
	for _, r := range refs {
		if r.line != last {
			ls = append(ls, fmt.Sprint(r.line))
			last = r.line
		}
	}
	return plural(len(ls), "line ", "lines ") + strings.Join(ls, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// percent formats a share as the spec does ({:.0%}): 0.8 → "80%".
func percent(share float64) string { return fmt.Sprintf("%.0f%%", share*100) }
