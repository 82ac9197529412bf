package gap

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Patterns for the three identifier kinds. They are anchored on word
// boundaries so that a longer token (GAP-FLOW-0012, xGAP-FLOW-001) is never
// read as a shorter valid ID.
var (
	gapIDPattern      = regexp.MustCompile(`\bGAP-([A-Z]{2,10})-(\d{3})([a-z]?)\b`)
	issueIDPattern    = regexp.MustCompile(`\bISSUE-R(\d{1,3})-(\d{3})\b`)
	decisionIDPattern = regexp.MustCompile(`\bDECISION-R(\d{1,3})-(\d{3})\b`)

	exactGapID      = regexp.MustCompile(`^GAP-([A-Z]{2,10})-(\d{3})([a-z]?)$`)
	exactIssueID    = regexp.MustCompile(`^ISSUE-R(\d{1,3})-(\d{3})$`)
	exactDecisionID = regexp.MustCompile(`^DECISION-R(\d{1,3})-(\d{3})$`)
)

// ID is a gap identifier such as "GAP-FLOW-001" or, for a split sub-gap,
// "GAP-FLOW-007a". The zero value is not a valid ID.
type ID string

// ParseID checks that s is exactly one well-formed gap ID.
func ParseID(s string) (ID, error) {
	if !ValidID(s) {
		return "", fmt.Errorf("gap: %q is not a gap ID: want GAP-{2-10 uppercase letters}-{3 digits}[optional lowercase letter], e.g. GAP-FLOW-001", s)
	}
	return ID(s), nil
}

// ValidID reports whether s is exactly one well-formed gap ID. Numbers run
// from 001 to 999, as the spec's format says.
func ValidID(s string) bool {
	m := exactGapID.FindStringSubmatch(s)
	return m != nil && m[2] != "000"
}

// Category returns the letters between "GAP-" and the number ("FLOW").
func (id ID) Category() string {
	m := exactGapID.FindStringSubmatch(string(id))
	if m == nil {
		return ""
	}
	return m[1]
}

// Number returns the three-digit number of the ID (1 for GAP-FLOW-001).
func (id ID) Number() int {
	m := exactGapID.FindStringSubmatch(string(id))
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[2])
	return n
}

// Suffix returns the split suffix letter, or "" for an unsplit gap.
func (id ID) Suffix() string {
	m := exactGapID.FindStringSubmatch(string(id))
	if m == nil {
		return ""
	}
	return m[3]
}

// Parent returns the ID of the gap a split sub-gap came from
// (GAP-FLOW-007a → GAP-FLOW-007), or "" when id has no suffix.
func (id ID) Parent() ID {
	if id.Suffix() == "" {
		return ""
	}
	return id[:len(id)-1]
}

// Child returns the split sub-gap ID with the given suffix letter
// (GAP-FLOW-007.Child('b') → GAP-FLOW-007b).
func (id ID) Child(letter byte) ID {
	base := id
	if p := id.Parent(); p != "" {
		base = p
	}
	return base + ID(rune(letter))
}

// Compare orders gap IDs by category, then number, then suffix; it is
// suitable for slices.SortFunc. A malformed ID compares by plain string
// order, so the order stays total. It parses without regular expressions
// because sorting is hot.
func Compare(a, b ID) int {
	ac, an, as, aok := split(a)
	bc, bn, bs, bok := split(b)
	if !aok || !bok {
		return strings.Compare(string(a), string(b))
	}
	if c := strings.Compare(ac, bc); c != 0 {
		return c
	}
	if c := strings.Compare(an, bn); c != 0 { // three digits: string order is numeric order
		return c
	}
	return strings.Compare(as, bs)
}

// split takes a well-formed ID apart: "GAP-FLOW-007a" → "FLOW", "007", "a".
func split(id ID) (category, number, suffix string, ok bool) {
	s := string(id)
	rest, found := strings.CutPrefix(s, "GAP-")
	if !found {
		return "", "", "", false
	}
	dash := strings.LastIndexByte(rest, '-')
	if dash < 2 || dash > 10 {
		return "", "", "", false
	}
	category, tail := rest[:dash], rest[dash+1:]
	for i := 0; i < len(category); i++ {
		if category[i] < 'A' || category[i] > 'Z' {
			return "", "", "", false
		}
	}
	if len(tail) == 4 && tail[3] >= 'a' && tail[3] <= 'z' {
		tail, suffix = tail[:3], tail[3:]
	}
	if len(tail) != 3 {
		return "", "", "", false
	}
	for i := 0; i < 3; i++ {
		if tail[i] < '0' || tail[i] > '9' {
			return "", "", "", false
		}
	}
	return category, tail, suffix, true
}

// Match is one identifier occurrence in a text, with its byte offsets.
type Match struct {
	ID    string
	Start int // byte offset of the first character
	End   int // byte offset just past the last character
}

// FindIDs returns the distinct gap IDs in text, sorted by Compare, as
// the spec's extract_gap_ids does. Callers that must ignore code blocks pass
// text with code removed (see internal/markdown).
func FindIDs(text string) []ID {
	seen := map[ID]bool{}
	var out []ID
	for _, m := range gapIDPattern.FindAllString(text, -1) {
		id := ID(m)
		if !ValidID(m) {
			continue // GAP-XX-000
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	slices.SortFunc(out, Compare)
	return out
}

// FindIDMatches returns every gap ID occurrence in text in order of appearance.
func FindIDMatches(text string) []Match {
	ms := findMatches(gapIDPattern, text)
	out := ms[:0]
	for _, m := range ms {
		if ValidID(m.ID) {
			out = append(out, m)
		}
	}
	return out
}

// FindIssueMatches returns every issue ID occurrence in text in order of appearance.
func FindIssueMatches(text string) []Match { return findMatches(issueIDPattern, text) }

// FindDecisionMatches returns every decision ID occurrence in text in order of appearance.
func FindDecisionMatches(text string) []Match { return findMatches(decisionIDPattern, text) }

func findMatches(re *regexp.Regexp, text string) []Match {
	idx := re.FindAllStringIndex(text, -1)
	out := make([]Match, 0, len(idx))
	for _, p := range idx {
		out = append(out, Match{ID: text[p[0]:p[1]], Start: p[0], End: p[1]})
	}
	return out
}

// FirstID returns the first gap ID occurring in text, or "" if none does.
func FirstID(text string) ID {
	for _, m := range gapIDPattern.FindAllString(text, -1) {
		if ValidID(m) {
			return ID(m)
		}
	}
	return ""
}

// IssueID identifies a Reviewer issue: ISSUE-R{round}-{number}, with a round
// of 1-999 (one to three digits; sessions may run past 99 rounds) and a
// number of 1-999.
type IssueID struct {
	Round  int
	Number int
}

// ParseIssueID parses exactly one issue ID such as "ISSUE-R12-042".
func ParseIssueID(s string) (IssueID, error) {
	r, n, ok := parseRoundNumber(exactIssueID, s)
	if !ok {
		return IssueID{}, fmt.Errorf("gap: %q is not an issue ID: want ISSUE-R{round 1-999}-{3 digits}, e.g. ISSUE-R3-001", s)
	}
	return IssueID{Round: r, Number: n}, nil
}

// String formats the ID as the spec writes it ("ISSUE-R3-001").
func (id IssueID) String() string { return fmt.Sprintf("ISSUE-R%d-%03d", id.Round, id.Number) }

// FindIssueIDs returns the distinct issue IDs in text in order of first appearance.
func FindIssueIDs(text string) []string { return distinct(issueIDPattern, text) }

// DecisionID identifies a recorded decision: DECISION-R{round}-{number}.
type DecisionID struct {
	Round  int
	Number int
}

// ParseDecisionID parses exactly one decision ID such as "DECISION-R5-001".
func ParseDecisionID(s string) (DecisionID, error) {
	r, n, ok := parseRoundNumber(exactDecisionID, s)
	if !ok {
		return DecisionID{}, fmt.Errorf("gap: %q is not a decision ID: want DECISION-R{round 1-999}-{3 digits}, e.g. DECISION-R5-001", s)
	}
	return DecisionID{Round: r, Number: n}, nil
}

// String formats the ID as the spec writes it ("DECISION-R5-001").
func (id DecisionID) String() string {
	return fmt.Sprintf("DECISION-R%d-%03d", id.Round, id.Number)
}

// NextDecisionID returns the next free decision ID of round: one more than
// the highest number that round's IDs among existing carry, whatever kind
// of decision they name, so an ID kept by a decision re-applied after a
// rollback is never issued twice. Entries that are not decision IDs are
// ignored. A round below 1 (a decision before the first round) numbers
// under round 1.
func NextDecisionID(existing []string, round int) string {
	round = max(round, 1)
	n := 0
	for _, s := range existing {
		if id, err := ParseDecisionID(s); err == nil && id.Round == round {
			n = max(n, id.Number)
		}
	}
	return DecisionID{Round: round, Number: n + 1}.String()
}

// FindDecisionIDs returns the distinct decision IDs in text in order of first appearance.
func FindDecisionIDs(text string) []string { return distinct(decisionIDPattern, text) }

func parseRoundNumber(re *regexp.Regexp, s string) (round, number int, ok bool) {
	m := re.FindStringSubmatch(s)
	if m == nil {
		return 0, 0, false
	}
	round, _ = strconv.Atoi(m[1])
	number, _ = strconv.Atoi(m[2])
	if round < 1 || number < 1 {
		return 0, 0, false
	}
	return round, number, true
}

func distinct(re *regexp.Regexp, text string) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range re.FindAllString(text, -1) {
		if !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	return out
}
