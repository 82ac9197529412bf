package core

import (
	"fmt"
	"slices"
	"strings"

	"github.com/refine-spec/refine/conflict"
	"github.com/refine-spec/refine/convergence"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/core/render"
	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/internal/markdown"
	"github.com/refine-spec/refine/validate"
)

// The known limitations of a finished session (DESIGN §16, turn 4).
//
// What is known before the integration call is listed by final_summary.md
// when the session ends, given to the integration prompt, and checked by
// the integration validator (INTEGRATION_MISSING when one is not listed):
// the open and deferred gaps, the open issues of the last approved review,
// unresolved conflicts (MEDIUM/LOW, or HIGH the user acknowledged when
// approving: FLOW-006 §8) and waived issues. What the consistency review
// leaves open is appended by the Mediator after it (consistencyLeft).

// knownLimitations are the known limitations of st before integration:
// the ledger's open and deferred gaps, then the rest (extraKnown).
func knownLimitations(st *state.State) []convergence.Limitation {
	return append(convergence.Limitations(&st.Ledger), extraKnown(st)...)
}

// extraKnown are the known limitations that are not gaps: unresolved
// conflicts and waived issues, then the open issues of the last approved
// review.
func extraKnown(st *state.State) []convergence.Limitation {
	return append(extraLimitations(st), openReviewIssues(st)...)
}

// openReviewIssues are the issues of the last review that approved (one
// with no HIGH or CRITICAL issue): its MEDIUM and LOW issues did not hold
// the gaps back, and no later round answers them, so the final spec owns
// up to them. Issues a conflict was raised over are the conflicts' lines.
func openReviewIssues(st *state.State) []convergence.Limitation {
	last := 0
	for _, r := range st.Rounds {
		if r.Verdict == string(validate.Approve) {
			last = r.N
		}
	}
	if last == 0 {
		return nil
	}
	inConflict := map[string]bool{}
	for _, c := range st.Conflicts {
		inConflict[c.IssueID] = true
	}
	for _, d := range st.ConflictDecisions {
		inConflict[d.IssueID] = true
	}
	var out []convergence.Limitation
	for _, is := range st.Issues {
		if is.Round != last || inConflict[is.ID] {
			continue
		}
		out = append(out, convergence.Limitation{ID: is.ID, Severity: is.Severity, Title: strings.TrimSuffix(render.OneLine(is.Summary), "."),
			Note: fmt.Sprintf("open issue of the round %d review", last)})
	}
	slices.SortStableFunc(out, func(a, b convergence.Limitation) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// limitationIDs splits known limitations into gap IDs and the others'
// IDs (issues), as the integration validator checks them.
func limitationIDs(ls []convergence.Limitation) (gaps []gap.ID, others []string) {
	for _, l := range ls {
		if id, err := gap.ParseID(l.ID); err == nil {
			gaps = append(gaps, id)
		} else {
			others = append(others, l.ID)
		}
	}
	return gaps, others
}

// consistencyLeft are the consistency review's issues the final spec
// lists as known limitations after it: its MEDIUM and LOW issues always,
// its CRITICAL and HIGH ones when the user accepted them, in ID order.
func consistencyLeft(in *state.IntegrationState) []conflict.Issue {
	out := slices.Clone(in.KnownIssues)
	for _, is := range in.Issues {
		if !is.Severity.AtLeastHigh() {
			out = append(out, is)
		}
	}
	slices.SortStableFunc(out, func(a, b conflict.Issue) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// withKnownIssues appends the consistency review's issues left open to
// the spec's "## Known Limitations" (made, before the Resolution Log, if
// absent).
func withKnownIssues(spec string, issues []conflict.Issue) string {
	if len(issues) == 0 {
		return spec
	}
	var b strings.Builder
	for _, is := range issues {
		fmt.Fprintf(&b, "- %s (%s, consistency review): %s\n", is.ID, is.Severity, render.OneLine(is.Summary))
	}
	if out, ok := appendUnder(spec, 2, "Known Limitations", b.String()); ok {
		return out
	}
	d := markdown.Parse(spec)
	for _, sec := range d.SectionsAt(2) {
		if strings.EqualFold(strings.TrimSpace(sec.Title), "Resolution Log") {
			return d.Text[:sec.Start] + "## Known Limitations\n\n" + b.String() + "\n" + d.Text[sec.Start:]
		}
	}
	return strings.TrimRight(d.Text, "\n") + "\n\n## Known Limitations\n\n" + b.String()
}

// withSummaryLimitations appends the same issues to final_summary.md's
// "### Known Limitations" list, in the line form the list uses.
func withSummaryLimitations(summary string, issues []conflict.Issue) string {
	if len(issues) == 0 {
		return summary
	}
	var b strings.Builder
	for _, is := range issues {
		l := convergence.Limitation{ID: is.ID, Severity: is.Severity, Title: strings.TrimSuffix(render.OneLine(is.Summary), "."), Note: "consistency review"}
		b.WriteString("- " + l.String() + "\n")
	}
	if out, ok := appendUnder(summary, 3, "Known Limitations", b.String()); ok {
		return out
	}
	return strings.TrimRight(summary, "\n") + "\n\n### Known Limitations\n" + b.String()
}

// appendUnder appends lines to the body of text's first section at level
// titled title, replacing a body that says only "None"; false when there
// is no such section.
func appendUnder(text string, level int, title, lines string) (string, bool) {
	d := markdown.Parse(text)
	for _, sec := range d.SectionsAt(level) {
		if !strings.EqualFold(strings.TrimSpace(sec.Title), title) {
			continue
		}
		raw := d.Text[sec.BodyStart:sec.End]
		body := strings.TrimRight(raw, "\n")
		t := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(body), "- "), ".")
		switch {
		case strings.EqualFold(t, "none") && strings.HasPrefix(raw, "\n"):
			body = "\n"
		case strings.EqualFold(t, "none"):
			body = ""
		default:
			body += "\n"
		}
		return d.Text[:sec.BodyStart] + body + lines + "\n" + d.Text[sec.End:], true
	}
	return text, false
}
