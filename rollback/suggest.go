package rollback

import (
	"strings"

	"github.com/refine-spec/refine/internal/rollbackfmt"
)

// SuggestSplit proposes sub-gap titles for a gap whose round keeps being
// rolled back, from what the attempts disagreed about (round-06 Example 3:
// "Attempt 1 addressed X, attempt 2 addressed Y"). concerns are the
// Reviewer's findings against the gap across the attempts (one-line
// summaries), most recent last; each distinct one becomes a sub-gap, at
// most three. With fewer than two, the gap is split into its behaviour and
// its limits and failure handling, the two halves reviewers most often
// flag apart. The titles start with the gap's title so each stands alone.
func SuggestSplit(title string, concerns []string) []string {
	title = strings.TrimRight(rollbackfmt.OneLine(title), " .:")
	if title == "" {
		title = "Gap"
	}
	var out []string
	seen := map[string]bool{}
	for i := len(concerns) - 1; i >= 0 && len(out) < 3; i-- {
		c := strings.TrimRight(rollbackfmt.OneLine(concerns[i]), " .")
		key := strings.ToLower(c)
		if c == "" || seen[key] {
			continue
		}
		seen[key] = true
		if len(c) > 80 {
			c = strings.TrimSpace(c[:77]) + "..."
		}
		out = append(out, title+": "+c)
	}
	if len(out) >= 2 {
		// Oldest concern first, as the attempts met them.
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
		return out
	}
	return []string{title + ": core behaviour and data", title + ": limits, failures and user interaction"}
}
