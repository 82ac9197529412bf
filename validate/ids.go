package validate

import (
	"cmp"
	"slices"
	"strings"

	"github.com/refine-spec/refine/gap"
)

// findGapIDs is gap.FindIDMatches, made fast: the package's regexp needs
// the slow NFA for its word boundaries (about 20 MB/s), so instead of
// running it over the whole text we find each literal "GAP-" whose next
// bytes have an ID's shape, and run the regexp, which stays the authority,
// on a window just long enough to hold the longest ID plus one byte for
// the trailing boundary. The leading boundary is checked here, since the
// window starts at the G. FuzzEngineer checks the two agree on every input.
func findGapIDs(text string) []gap.Match {
	const longest = len("GAP-ABCDEFGHIJ-001a")
	return findWindowed(text, "GAP-", longest+1, gapShape, gap.FindIDMatches)
}

// findIssueIDs is gap.FindIssueMatches with the same prefilter.
func findIssueIDs(text string) []gap.Match {
	const longest = len("ISSUE-R12-001")
	return findWindowed(text, "ISSUE-R", longest+1, issueShape, gap.FindIssueMatches)
}

// gapShape reports whether s (after "GAP-") starts like an ID: 2-10
// upper-case letters, a dash, 3 digits. It is a necessary condition only.
func gapShape(s string) bool {
	n := run(s, 'A', 'Z')
	return n >= 2 && n <= 10 && len(s) > n && s[n] == '-' && run(s[n+1:], '0', '9') >= 3
}

// issueShape reports whether s (after "ISSUE-R") starts like an issue ID's
// round and number: 1-2 digits, a dash, 3 digits.
func issueShape(s string) bool {
	n := run(s, '0', '9')
	return n >= 1 && n <= 2 && len(s) > n && s[n] == '-' && run(s[n+1:], '0', '9') >= 3
}

// run counts the leading bytes of s within lo..hi, stopping at 11.
func run(s string, lo, hi byte) int {
	n := 0
	for n < len(s) && n < 11 && s[n] >= lo && s[n] <= hi {
		n++
	}
	return n
}

func findWindowed(text, lit string, window int, shape func(string) bool, find func(string) []gap.Match) []gap.Match {
	var out []gap.Match
	for off := 0; ; {
		i := strings.Index(text[off:], lit)
		if i < 0 {
			return out
		}
		i += off
		off = i + len(lit)
		if i > 0 && isWordByte(text[i-1]) {
			continue // "xGAP-…" has no word boundary before the G
		}
		if !shape(text[off:]) {
			continue
		}
		ms := find(text[i:min(len(text), i+window)])
		if len(ms) == 0 || ms[0].Start != 0 {
			continue
		}
		m := ms[0]
		out = append(out, gap.Match{ID: m.ID, Start: i + m.Start, End: i + m.End})
		off = i + m.End
	}
}

// isWordByte is the ASCII word class of the regexp \b.
func isWordByte(c byte) bool {
	return c == '_' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

// sortIDs sorts valid gap IDs in gap.Compare order. gap.Compare re-parses
// both IDs with a regexp on every comparison; parsing each ID once keeps a
// large output's sort cheap.
func sortIDs(ids []gap.ID) {
	type key struct {
		id       gap.ID
		category string
		number   int
		suffix   string
	}
	keys := make([]key, len(ids))
	for i, id := range ids {
		keys[i] = key{id, id.Category(), id.Number(), id.Suffix()}
	}
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(strings.Compare(a.category, b.category), cmp.Compare(a.number, b.number), strings.Compare(a.suffix, b.suffix))
	})
	for i, k := range keys {
		ids[i] = k.id
	}
}
