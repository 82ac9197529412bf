package rollback

import (
	"regexp"
	"slices"
	"strings"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/rollbackfmt"
)

// Concerns are what a round's rolled-back attempts show about a gap, as
// the root-cause analysis finds it, for SuggestSplit: first the sections
// an attempt wrote that another did not (round-06 Example 3: "Attempt 1
// addressed X, attempt 2 addressed Y"), in attempt order, then findings,
// the Reviewer's issues against the gap (the checks its attempts failed),
// oldest first. The sections every gap resolution has (Proposed Solution,
// Trade-offs, Examples, New Gaps …, a response to an issue) are no concern.
func Concerns(attempts []AttemptInfo, findings []string) []string {
	var out []string
	if len(attempts) >= 2 {
		sections := make([][]string, len(attempts))
		for i, a := range attempts {
			sections[i] = producedSections(a.Engineer)
		}
		for i, secs := range sections {
			for _, s := range secs {
				n := normTitle(s)
				inAll := true
				for j, other := range sections {
					if j != i && !slices.ContainsFunc(other, func(o string) bool { return normTitle(o) == n }) {
						inAll = false
					}
				}
				if !inAll && !standardSection(n) {
					out = append(out, s)
				}
			}
		}
	}
	return append(out, findings...)
}

// standardSection reports the normalised titles of the sections every gap
// resolution may have, which say nothing about what an attempt addressed.
func standardSection(n string) bool {
	for _, s := range [...]string{"Proposed Solution", "Trade-offs", "Examples", "Example", "Rationale", "Alternatives Considered",
		"New Gaps Introduced", "New Gaps Identified", "Open Questions", "Confidence", "Summary"} {
		if n == normTitle(s) {
			return true
		}
	}
	return strings.HasPrefix(n, "responseto")
}

// SuggestSplit proposes sub-gap titles for a gap whose round keeps being
// rolled back, one per distinct concern (see Concerns), in their order, at
// most three. Two concerns are one when most of their content words are
// shared once the gap's title words and the words of a complaint
// ("unclear", "missing", "still", "again") are set aside; a concern that is
// only a complaint about the gap as a whole is none. With fewer than two
// distinct concerns it suggests nothing: a split the analysis cannot
// ground is the user's to name. The titles start with the gap's title so
// each stands alone.
func SuggestSplit(title string, concerns []string) []string {
	title = strings.TrimRight(rollbackfmt.OneLine(title), " .:")
	if title == "" {
		title = "Gap"
	}
	own := concernWords(title, nil)
	var out []string
	var kept [][]string
	for _, c := range concerns {
		c = strings.TrimRight(withoutIDs(rollbackfmt.OneLine(c)), " .")
		words := concernWords(c, own)
		if len(words) == 0 || slices.ContainsFunc(kept, func(k []string) bool { return jaccard(k, words) >= similarity }) {
			continue
		}
		kept = append(kept, words)
		if len(c) > 80 {
			c = strings.TrimSpace(c[:77]) + "..."
		}
		out = append(out, title+": "+c)
		if len(out) == 3 {
			break
		}
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

// withoutIDs removes the gap, issue and decision IDs a finding names (the
// gap its sub-gaps split, mostly: "… (GAP-HOOK-001)"), which every concern
// would share.
func withoutIDs(s string) string {
	var ms []gap.Match
	ms = append(ms, gap.FindIDMatches(s)...)
	ms = append(ms, gap.FindIssueMatches(s)...)
	ms = append(ms, gap.FindDecisionMatches(s)...)
	slices.SortFunc(ms, func(a, b gap.Match) int { return b.Start - a.Start })
	for _, m := range ms {
		s = s[:m.Start] + s[m.End:]
	}
	return strings.Join(strings.Fields(emptyParens.ReplaceAllString(s, "")), " ")
}

// emptyParens is what is left of "(GAP-HOOK-001, ISSUE-R1-002)" without its IDs.
var emptyParens = regexp.MustCompile(`\([\s,;/]*\)`)

// concernWords are the content words of a concern (reasonWords) without
// the words of except and of a complaint.
func concernWords(s string, except []string) []string {
	return slices.DeleteFunc(reasonWords(s), func(w string) bool { return complaintWord(w) || slices.Contains(except, w) })
}

// complaintWord reports words that say something is wrong, not what (as
// reasonWords gives them: "does" is "doe").
func complaintWord(w string) bool {
	switch w {
	case "unclear", "unspecified", "undefined", "missing", "vague", "incomplete", "wrong", "lack", "lacking", "need",
		"should", "must", "more", "detail", "specified", "defined", "clear", "clarify", "has", "have", "yet", "doe",
		"what", "how", "which", "any", "all", "about":
		return true
	}
	return false
}
