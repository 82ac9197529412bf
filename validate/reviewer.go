package validate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/markdown"
)

const (
	reviewHeader = "## Review:"
	reviewTitle  = "Review:"
	noIssuesMark = "NO_ISSUES_FOUND"
)

// severitySections are the Reviewer's severity headings (GAP-FLOW-001 §2,
// GAP-FLOW-008 canonical example), matched as title prefixes in any case so
// "Low Priority / Nits" counts. An array, so it is a constant table.
var severitySections = [...]struct {
	title string
	sev   gap.Severity
}{
	{"Critical Issues", gap.Critical},
	{"High Priority", gap.High},
	{"Medium Priority", gap.Medium},
	{"Low Priority", gap.Low},
}

// severityOf returns the severity a level-3 title stands for.
func severityOf(title string) (gap.Severity, bool) {
	for _, s := range severitySections {
		if hasPrefixFold(title, s.title) {
			return s.sev, true
		}
	}
	return 0, false
}

// severitySection is a "### Critical Issues"-style section.
type severitySection struct {
	markdown.Section
	sev gap.Severity
}

// Reviewer validates a Reviewer output (the rules of GAP-FLOW-001 §2)
// and parses its issues.
//
// Tier 1 needs a level-2 "## Review:" heading and either "###" severity
// sections (Critical Issues, High Priority, Medium Priority, Low Priority…)
// or the NO_ISSUES_FOUND / "No Issues Found" form, all outside code; every
// entry of a severity section (a top-level list item, a "####" heading, or
// a paragraph starting with an issue ID) must carry an issue ID, of round
// opt.Round when that is positive, unique in the output; entries reading
// only "None" or "N/A" are not issues. Tier 2 needs every gap referenced
// outside code to be known, except gaps listed under "New Gaps Identified".
// The verdict is computed: Approve unless an issue is HIGH or CRITICAL.
func Reviewer(content string, opt Options) Result {
	sc, base, ok := begin(content, opt.maxBytes(), opt.FinishReason, roleReviewer)
	if !ok {
		return base
	}
	d := sc.d

	reviews := sectionsTitled(d, 2, reviewTitle)
	if len(reviews) == 0 {
		return base.fail(noHeader(d, reviewHeader))
	}
	var sevs []severitySection
	for _, s := range d.SectionsAt(3) {
		p, _ := headingTitle(d, s.Heading)
		if sev, ok := severityOf(p); ok {
			sevs = append(sevs, severitySection{s, sev})
		}
	}
	statesNone := strings.Contains(d.Prose, noIssuesMark) || strings.Contains(strings.ToLower(d.Prose), "no issues found")
	if len(sevs) == 0 && !statesNone {
		hint, n := severityHint(d)
		r := Fail(WrongFormat, "Reviewer must include severity sections or NO_ISSUES_FOUND"+hint)
		r.Line = n
		return base.fail(r)
	}

	w := warningsOf(base.Normalized)
	res := base
	for _, r := range reviews {
		res.ReviewHeaders = append(res.ReviewHeaders, headerSuffix(r.raw[len(reviewTitle):]))
	}
	issues, fail := parseIssues(d, sevs, reviews, opt, &w)
	if fail != nil {
		return base.fail(*fail)
	}
	res.Issues = issues
	res.NoIssuesFound = statesNone && len(issues) == 0
	if res.NoIssuesFound && !hasChecklist(d) {
		w.add(0, "NO_ISSUES_FOUND without a completeness checklist (\"- [x] …\" items showing what was verified)")
	}
	if statesNone && len(issues) > 0 {
		w.add(0, "the review states no issues were found but lists %s; the issues count", plural(len(issues), "issue"))
	}
	known := idSet(opt.KnownGaps)
	res.NewGaps = parseNewGaps(d, func(int) gap.ID { return "" }, known, &w)
	res.Verdict = Approve
	counts := map[gap.Severity]int{}
	for _, is := range issues {
		counts[is.Severity]++
		if is.Severity.AtLeastHigh() {
			res.Verdict = Revise
		}
	}
	res.Warnings = w.list()

	taken := make([]int, 0, len(reviews)+len(issues))
	for _, r := range reviews {
		taken = append(taken, r.Line)
	}
	for _, is := range issues {
		taken = append(taken, is.Line)
	}
	slices.Sort(taken)
	if u := unreadIn(sc, &res, true, opt.Round, false, taken); len(u) > 0 {
		return res.fail(failAt(AmbiguousStructure, u[0].line, "%s", u[0].msg))
	}
	if known != nil {
		if r, ok := checkRefs(d, known, newIDs(res.NewGaps)); !ok {
			return res.fail(r)
		}
	}
	res.Success = true
	found := "no issues"
	if len(issues) > 0 {
		var parts []string
		for _, s := range gap.All() {
			if counts[s] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
			}
		}
		found = plural(len(issues), "issue") + " (" + strings.Join(parts, ", ") + ")"
	}
	res.Message = successMessage(res.Warnings, found+", verdict "+string(res.Verdict))
	return res
}

// severityHint points at a severity heading written at the wrong level, or
// at a severity header or NO_ISSUES_FOUND that appears only inside code.
func severityHint(d *markdown.Doc) (string, int) {
	for _, h := range d.Headings {
		p, _ := headingTitle(d, h)
		if _, ok := severityOf(p); ok {
			return fmt.Sprintf(" (line %d has %s, which does not read as a severity section: write it as a heading of level 1 to 4 such as '### High Priority')", h.Line, quote(d.Line(h.Line))), h.Line
		}
	}
	for _, s := range severitySections {
		if hint, n := codeOnly(d, "### "+s.title); n > 0 {
			return hint, n
		}
	}
	return codeOnly(d, noIssuesMark)
}

// hasChecklist reports whether the output has a task-list item ("- [x] …"),
// the verification checklist that should accompany NO_ISSUES_FOUND.
func hasChecklist(d *markdown.Doc) bool {
	for l := range linesIn(d, 0, len(d.Text)) {
		if _, at, ok := listItem(l.prose); ok {
			rest := l.prose[skipSpace(l.prose, at):]
			if strings.HasPrefix(rest, "[x]") || strings.HasPrefix(rest, "[X]") || strings.HasPrefix(rest, "[ ]") {
				return true
			}
		}
	}
	return false
}
