package conflict

import (
	"slices"
	"strings"
	"time"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/markdown"
)

// ExplicitInput is what DetectExplicit reads.
type ExplicitInput struct {
	// Round is the Engineer round whose output is read (N+1).
	Round int
	// EngineerOutput is that output. It supplies the disagreements when
	// Disagreements is nil, and the informal blocks of the soft fallback.
	EngineerOutput string
	// disagreements are the parsed DISAGREE blocks (from validate, or
	// parseEngineerDisagreements); nil parses EngineerOutput.
	disagreements []Disagreement
	// Issues are the Reviewer issues the output answers, with severity
	// overrides applied (ApplyOverrides).
	Issues []Issue
	// Earlier are the session's other issues (earlier rounds), overrides
	// applied: a disagreement that names one by its ID is a conflict with
	// it, as validation accepts any issue of the session; soft matching
	// considers Issues only.
	Earlier []Issue
	// At stamps the conflicts' DetectedAt.
	At time.Time
}

// ExplicitResult is what DetectExplicit found.
type ExplicitResult struct {
	// Conflicts, one per disagreed issue, in prioritize order, all
	// Unresolved with options generated. A LOW issue's conflict is low
	// priority: it blocks nothing and recommends the Engineer's position
	// (§7: "may auto-resolve to Engineer"), so automated mode resolves it
	// that way; left unresolved, it is a known limitation.
	Conflicts []Conflict `json:"conflicts"`
	// Logged are repeated blocks for an issue already in conflict, for the
	// round's log.
	Logged []Disagreement `json:"logged,omitempty"`
	// Unmatched are disagreements that name no known issue and soft-match
	// none.
	Unmatched []Disagreement `json:"unmatched,omitempty"`
	// Submitted counts the DISAGREE blocks the Engineer wrote, exact and
	// informal: the count §3's absolute limit applies to.
	Submitted int `json:"submitted"`
}

// DetectExplicit turns the Engineer's disagreements into conflicts
// (GAP-FLOW-006 §2). A DISAGREE block naming a known issue (of Issues or
// Earlier) is a conflict
// with source DISAGREE_BLOCK and HIGH match confidence. The soft-matching
// fallback then handles what the exact format missed, with MEDIUM
// confidence and source SOFT_MATCH:
//
//   - a DISAGREE block naming no issue, or an unknown one, is matched with
//     matchIssueText against the issues not yet in conflict, the best match
//     winning (quote, then location, then keyword overlap, then priority);
//   - an informal disagreement (a heading starting "Disagree" in another
//     case, or "**Engineer Position:** DISAGREE" in a section) is matched by
//     the first known issue ID it names, else like the above.
//
// Code never counts: headings and IDs inside code blocks or inline code are
// examples.
func DetectExplicit(in ExplicitInput) ExplicitResult {
	var res ExplicitResult
	byID := make(map[string]Issue, len(in.Issues)+len(in.Earlier))
	for _, is := range append(slices.Clip(in.Issues), in.Earlier...) {
		if _, dup := byID[is.ID]; !dup {
			byID[is.ID] = is
		}
	}
	doc := markdown.Parse(in.EngineerOutput)
	exact := in.disagreements
	if exact == nil {
		exact = parseDisagreements(doc)
	}
	taken := map[string]bool{}
	add := func(d Disagreement, is Issue, src source, ref string) {
		if taken[is.ID] {
			res.Logged = append(res.Logged, d)
			return
		}
		taken[is.ID] = true
		res.Conflicts = append(res.Conflicts, newExplicit(in.Round, d, is, src, ref, in.At))
	}

	var soft []softCandidate
	for _, d := range exact {
		if is, ok := byID[d.IssueID]; ok {
			add(d, is, sourceDisagreeBlock, "")
			continue
		}
		soft = append(soft, softCandidate{d: d, text: disagreementText(d)})
	}
	for _, b := range informalDisagreements(doc) {
		soft = append(soft, softCandidate{d: b.Disagreement, text: b.text, ids: b.ids, informal: true})
	}
	res.Submitted = len(exact) + countInformal(soft)

	ordered := prioritize(issueConflicts(in.Issues))
	var matchers []issueMatcher
	if len(soft) > 0 {
		matchers = make([]issueMatcher, len(ordered))
		for i, oc := range ordered {
			matchers[i] = newIssueMatcher(oc.Issue)
		}
	}
	for _, c := range soft {
		ref := c.d.IssueID
		if c.informal {
			if id, ok := firstKnown(c.ids, byID, taken); ok {
				d := c.d
				d.IssueID = id
				add(d, byID[id], sourceSoftMatch, "")
				continue
			}
		}
		best, bestMatch := -1, softMatch{}
		t := newMatchText(c.text)
		for i, oc := range ordered {
			if taken[oc.IssueID] {
				continue
			}
			if m := matchers[i].match(t); m.Matched && (best < 0 || m.better(bestMatch)) {
				best, bestMatch = i, m
			}
		}
		if best < 0 {
			res.Unmatched = append(res.Unmatched, c.d)
			continue
		}
		is := ordered[best].Issue
		d := c.d
		d.IssueID = is.ID
		add(d, is, sourceSoftMatch, ref)
	}
	res.Conflicts = prioritize(res.Conflicts)
	return res
}

// softCandidate is a disagreement the exact format did not tie to an issue.
type softCandidate struct {
	d        Disagreement
	text     string   // what is matched against issues
	ids      []string // issue IDs named in an informal block
	informal bool
}

func countInformal(cs []softCandidate) int {
	n := 0
	for _, c := range cs {
		if c.informal {
			n++
		}
	}
	return n
}

// firstKnown returns the first of ids that is a known issue not yet taken.
func firstKnown(ids []string, known map[string]Issue, taken map[string]bool) (string, bool) {
	for _, id := range ids {
		if _, ok := known[id]; ok && !taken[id] {
			return id, true
		}
	}
	return "", false
}

// disagreementText is a parsed block's text for soft matching.
func disagreementText(d Disagreement) string {
	return strings.Join([]string{d.ReviewerConcern, d.EngineerPosition, d.Rationale, d.Alternative}, "\n")
}

// issueConflicts wraps issues so prioritize can order them.
func issueConflicts(issues []Issue) []Conflict {
	out := make([]Conflict, len(issues))
	for i, is := range issues {
		out[i] = Conflict{IssueID: is.ID, Issue: is}
	}
	return out
}

// softNote is shown with a soft-matched conflict so the user confirms the
// match before deciding.
func softNote(issueID, ref string) string {
	named := ""
	if ref != "" {
		named = " (it named " + ref + ")"
	}
	return "NOTE: This conflict was matched to " + issueID + " by soft matching (MEDIUM\n" +
		"confidence): the Engineer's disagreement did not use the\n" +
		"'## DISAGREE: ISSUE-R{N}-{XXX}' format with a known issue ID" + named + ".\n" +
		"Confirm that it refers to this issue before resolving."
}

func newExplicit(round int, d Disagreement, is Issue, src source, ref string, at time.Time) Conflict {
	c := Conflict{
		IssueID:           is.ID,
		Type:              explicit,
		Issue:             is,
		Round:             round,
		Subject:           firstLine(is.Summary),
		ReviewerPosition:  reviewerText(is),
		ReviewerConcern:   d.ReviewerConcern,
		EngineerPosition:  d.EngineerPosition,
		EngineerRationale: d.Rationale,
		Alternative:       d.Alternative,
		Source:            src,
		MatchConfidence:   gap.ConfidenceHigh,
		Reference:         ref,
		DetectedAt:        at,
		Status:            StatusUnresolved,
	}
	if src == sourceSoftMatch {
		c.MatchConfidence = gap.ConfidenceMedium
		c.PresentationNote = softNote(is.ID, ref)
	}
	c.Options = generateOptions(c)
	return c
}
