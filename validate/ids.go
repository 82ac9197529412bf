package validate

import (
	"cmp"
	"slices"
	"strings"

	"github.com/refine-spec/refine/gap"
)

// findGapIDs is gap.FindIDMatches, made fast: the package's regexp needs
// the slow NFA for its word boundaries (about 20 MB/s), so instead of
// running it over the whole text we find each literal "GAP-" and read the
// ID that follows by hand (gapIDLen), exactly as the regexp
// \bGAP-[A-Z]{2,10}-\d{3}[a-z]?\b reads it; the regexp stays the
// authority: FuzzEngineer checks the two agree on every input.
func findGapIDs(text string) []gap.Match {
	ms := findLiteral(text, "GAP-", gapIDLen)
	// As gap.FindIDMatches: what the pattern reads but ValidID refuses
	// (number 000) is passed over.
	return slices.DeleteFunc(ms, func(m gap.Match) bool {
		id := strings.TrimRight(m.ID, "abcdefghijklmnopqrstuvwxyz")
		return strings.HasSuffix(id, "-000")
	})
}

// findIssueIDs is gap.FindIssueMatches with the same approach.
func findIssueIDs(text string) []gap.Match {
	return findLiteral(text, "ISSUE-R", issueIDLen)
}

// gapIDLen returns the length of the gap ID s starts with, after its
// "GAP-", or 0: 2-10 upper-case letters, a dash, 3 digits, an optional
// lower-case letter, then a word boundary (the letter is dropped if only
// that leaves one, as the regexp backtracks).
func gapIDLen(s string) int {
	n := run(s, 'A', 'Z')
	if n < 2 || n > 10 || len(s) <= n || s[n] != '-' || run(s[n+1:], '0', '9') < 3 {
		return 0
	}
	end := n + 4
	if end < len(s) && s[end] >= 'a' && s[end] <= 'z' && (end+1 == len(s) || !isWordByte(s[end+1])) {
		return end + 1
	}
	if end < len(s) && isWordByte(s[end]) {
		return 0
	}
	return end
}

// issueIDLen returns the length of the issue ID s starts with, after its
// "ISSUE-R", or 0: 1-3 digits, a dash, 3 digits, a word boundary.
func issueIDLen(s string) int {
	n := run(s, '0', '9')
	if n < 1 || n > 3 || len(s) <= n || s[n] != '-' || run(s[n+1:], '0', '9') < 3 {
		return 0
	}
	end := n + 4
	if end < len(s) && isWordByte(s[end]) {
		return 0
	}
	return end
}

// run counts the leading bytes of s within lo..hi, stopping at 11.
func run(s string, lo, hi byte) int {
	n := 0
	for n < len(s) && n < 11 && s[n] >= lo && s[n] <= hi {
		n++
	}
	return n
}

// findLiteral finds each lit at a word boundary whose following bytes
// idLen reads as an ID, leftmost first and not overlapping.
func findLiteral(text, lit string, idLen func(string) int) []gap.Match {
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
		n := idLen(text[off:])
		if n == 0 {
			continue
		}
		end := off + n
		out = append(out, gap.Match{ID: text[i:end], Start: i, End: end})
		off = end
	}
}

// isWordByte is the ASCII word class of the regexp \b.
func isWordByte(c byte) bool {
	return c == '_' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

// sortIDs sorts valid gap IDs in gap.Compare order. gap.Compare re-parses
// both IDs with a regexp on every comparison; parsing each ID once, by
// hand (gapKey), keeps a large output's sort cheap.
func sortIDs(ids []gap.ID) {
	type key struct {
		id       gap.ID
		category string
		number   int
		suffix   string
	}
	keys := make([]key, len(ids))
	for i, id := range ids {
		c, n, sfx := gapKey(id)
		keys[i] = key{id, c, n, sfx}
	}
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(strings.Compare(a.category, b.category), cmp.Compare(a.number, b.number), strings.Compare(a.suffix, b.suffix))
	})
	for i, k := range keys {
		ids[i] = k.id
	}
}

// gapKey returns what id.Category, id.Number and id.Suffix return, reading
// ^GAP-([A-Z]{2,10})-(\d{3})([a-z]?)$ by hand: zero values when id does not
// match. FuzzEngineer holds sortIDs to gap.Compare's order.
func gapKey(id gap.ID) (category string, number int, suffix string) {
	s, ok := strings.CutPrefix(string(id), "GAP-")
	if !ok {
		return "", 0, ""
	}
	n := run(s, 'A', 'Z')
	if n < 2 || n > 10 || len(s) < n+4 || s[n] != '-' || run(s[n+1:n+4], '0', '9') != 3 {
		return "", 0, ""
	}
	tail := s[n+4:]
	if len(tail) > 1 || len(tail) == 1 && (tail[0] < 'a' || tail[0] > 'z') {
		return "", 0, ""
	}
	num := int(s[n+1]-'0')*100 + int(s[n+2]-'0')*10 + int(s[n+3]-'0')
	return s[:n], num, tail
}
