package exemplar

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/markdown"
	"github.com/refine-spec/refine/validate"
)

// HistoryItem is one output of this session that passed Mediator validation:
// a Tier 2 candidate. Hosts pass validated outputs only (the spec's
// was_validated filter is theirs to apply).
type HistoryItem struct {
	Round      int      // the round that produced it, from 1
	Role       gap.Role // gap.Engineer or gap.Reviewer
	Content    string   // the accepted output (round_NNN/{role}.md)
	RolledBack bool     // the round was rolled back: never used (GAP-FLOW-007)
	// LedToAccepted: a gap the output addressed or reviewed became ACCEPTED.
	LedToAccepted bool
}

// RelevanceScore rates how well h would serve as the example for a retry
// after failureType (calculate_relevance_score, GAP-FLOW-008 §3):
//
//   - WRONG_FORMAT: +10 for a "## Gap Resolution:" heading, +5 for "###
//     Trade-offs", +5 for "### Examples";
//   - NO_GAPS_ADDRESSED: +2 per gap ID reference, at most +10;
//   - +20 when the output led to an ACCEPTED gap;
//   - length in characters: +5 for 501 to 4,999, +2 for 5,000 to 9,999.
//
// Headings and gap references inside code are examples, not structure, and
// do not count. The headings are the spec's Engineer headings for both
// roles, as in the spec; candidates are always of one role, so the
// ranking is unaffected.
func RelevanceScore(h HistoryItem, failureType validate.FailureType) int {
	score := 0
	switch normalizeFailure(failureType) {
	case validate.WrongFormat:
		doc := markdown.Parse(h.Content)
		if hasHeading(doc, 2, "Gap Resolution:") {
			score += 10
		}
		if hasHeading(doc, 3, "Trade-offs") {
			score += 5
		}
		if hasHeading(doc, 3, "Examples") {
			score += 5
		}
	case validate.NoGapsAddressed:
		doc := markdown.Parse(h.Content)
		score += countGapReferences(doc.Prose, scoredReferences) * 2
	}
	if h.LedToAccepted {
		score += 20
	}
	switch n := utf8.RuneCountInString(h.Content); {
	case 500 < n && n < 5000:
		score += 5
	case 5000 <= n && n < 10000:
		score += 2
	}
	return score
}

// scoredReferences is where the reference score stops growing (+2 each, at
// most +10).
const scoredReferences = 5

// countGapReferences counts gap ID occurrences in prose, up to limit. It runs
// gap's ID pattern only on a short window at each "GAP-" (the longest ID,
// plus the character on either side its word boundaries look at), so a
// long history is scored without running the pattern over all of it.
func countGapReferences(prose string, limit int) int {
	const longestID = len("GAP-") + 10 + len("-") + 3 + 1 // GAP-[A-Z]{2,10}-\d{3}[a-z]?
	n := 0
	for from := 0; n < limit; {
		i := strings.Index(prose[from:], "GAP-")
		if i < 0 {
			break
		}
		at := from + i
		lo, hi := max(at-1, 0), min(at+longestID+1, len(prose))
		for _, m := range gap.FindIDMatches(prose[lo:hi]) {
			if lo+m.Start == at {
				n++
				break
			}
		}
		from = at + len("GAP-")
	}
	return n
}

// hasHeading reports whether doc has a heading of level whose title starts
// with prefix (the spec's `"### Trade-offs" in content`).
func hasHeading(doc *markdown.Doc, level int, prefix string) bool {
	for _, h := range doc.Headings {
		if h.Level == level && strings.HasPrefix(h.Title, prefix) {
			return true
		}
	}
	return false
}

// scored is a Tier 2 candidate with its score.
type scored struct {
	item  HistoryItem
	score int
	index int // position in the history, the last tie-breaker
}

// SessionExample returns the best Tier 2 example for a retry of role in
// currentRound (select_session_example, GAP-FLOW-008 §3): among outputs of
// the same role from rounds 1 to currentRound-1 that were not rolled back
// and are not blank, the highest RelevanceScore; on a tie the most recent
// round, then the earlier item in history. ok is false when there is no
// candidate.
func SessionExample(role gap.Role, failureType validate.FailureType, currentRound int, history []HistoryItem) (item HistoryItem, ok bool) {
	best, _, why := bestInHistory(role, failureType, currentRound, history)
	return best.item, why == ""
}

// bestInHistory is SessionExample that also counts the candidates, or
// explains why there were none (why is "" when there were).
func bestInHistory(role gap.Role, failureType validate.FailureType, currentRound int, history []HistoryItem) (best scored, candidates int, why string) {
	role = normalizeRole(role)
	var pool []scored
	rolledBack := 0
	for i, h := range history {
		if normalizeRole(h.Role) != role || h.Round < 1 || h.Round >= currentRound || strings.TrimSpace(h.Content) == "" {
			continue
		}
		if h.RolledBack {
			rolledBack++
			continue
		}
		pool = append(pool, scored{item: h, score: RelevanceScore(h, failureType), index: i})
	}
	if len(pool) == 0 {
		why := "no validated " + string(role) + " output from an earlier round"
		if currentRound <= 1 {
			why = "round " + strconv.Itoa(currentRound) + " has no earlier rounds"
		}
		if rolledBack > 0 {
			why += " (" + strconv.Itoa(rolledBack) + " from rolled-back rounds excluded)"
		}
		return scored{}, 0, why
	}
	best = slices.MinFunc(pool, func(a, b scored) int {
		return cmp.Or(
			cmp.Compare(b.score, a.score),
			cmp.Compare(b.item.Round, a.item.Round),
			cmp.Compare(a.index, b.index),
		)
	})
	return best, len(pool), ""
}

// provenance is the header of a Tier 2 example (GAP-FLOW-008 §3, "Session
// Example Format"): which round it comes from and what it achieved, in the
// spec's words when they are true ("approved by Reviewer" only when it led
// to an ACCEPTED gap).
func provenance(h HistoryItem) string {
	doc := markdown.Parse(h.Content)
	var what string
	if normalizeRole(h.Role) == gap.Reviewer {
		what = "This review"
		for _, s := range doc.Headings {
			if hasPrefixFold(s.Title, "Review:") {
				if subject := strings.TrimSpace(s.Title[len("Review:"):]); subject != "" {
					what += " of " + subject
				}
				break
			}
		}
		what += " passed Mediator validation"
		if h.LedToAccepted {
			what += " and led to ACCEPTED gaps"
		}
	} else {
		var addressed []string
		for _, s := range doc.Headings {
			if hasPrefixFold(s.Title, "Gap Resolution:") {
				if id := gap.FirstID(s.Title); id != "" && !slices.Contains(addressed, string(id)) {
					addressed = append(addressed, string(id))
				}
			}
		}
		if len(addressed) > 0 {
			what = "This output successfully addressed " + strings.Join(addressed, ", ")
		} else {
			what = "This output passed Mediator validation"
		}
		switch {
		case h.LedToAccepted:
			what += " and was approved by Reviewer"
		case len(addressed) > 0:
			what += " and passed Mediator validation"
		}
	}
	return "---\nExample from this session (Round " + strconv.Itoa(h.Round) + "):\n" + what + ".\n---"
}

// sessionBody is the content of a Tier 2 example as attached: frontmatter
// and surrounding blank lines removed, line endings normalised.
func sessionBody(h HistoryItem) string {
	return trimBlankLines(stripFrontmatter(markdown.Normalize(h.Content)))
}
