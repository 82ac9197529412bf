// Package quirk holds the ways real chat models write an answer that
// differ from the formats refine asks for (DESIGN §18, issue #38), as pure
// text transforms: benign quirks, which the validators must read exactly
// as the answer written to the format, and defects, which they must catch
// with a given failure type. Tests apply them to every valid answer the
// repository holds (the metamorphic test) and compose them (the fuzz
// target); refinetest.Quirky applies them to a scripted role's answers.
//
// A transform takes the answer and a random stream and returns the new
// text and whether it applied (false when the answer has nothing it acts
// on: a severity quirk on an Engineer answer, say). Given the same stream
// state it returns the same result. It leaves text inside fenced code
// blocks alone, so examples stay examples.
package quirk

import (
	"math/rand/v2"
	"strings"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/markdown"
	"github.com/refine-spec/refine/validate"
)

// Integration is the role of the integration step's answer (the refined
// spec), beside gap.Engineer and gap.Reviewer.
const Integration gap.Role = "integration"

// Layer orders the quirks of a composition: line-level ones first, then at
// most one wrapper, then at most one block before the answer, as a model
// would produce them, then the byte-level ones (line breaks, a BOM) the
// transport adds.
type Layer int

// The layers, innermost first.
const (
	Inner   Layer = iota // headers, lists, IDs, comments: any number
	Wrapper              // a fence around the whole answer: at most one
	Outer                // a <think> block before it all: at most one
	Bytes                // CRLF, a BOM, trailing spaces: any number
)

// Quirk is one way an answer can differ from the format.
type Quirk struct {
	Name string
	// Role is the role whose answers the quirk applies to; "" for any.
	Role  gap.Role
	Layer Layer
	// Apply transforms text; applied is false when the answer has nothing
	// the quirk acts on (text is then returned unchanged).
	Apply func(text string, r *rand.Rand) (out string, applied bool)
}

// Defect is a quirk the validators must catch.
type Defect struct {
	Quirk
	// Want is the failure type the defect must produce.
	Want validate.FailureType
	// FinishReason is the finish reason a backend reports with the answer
	// (TRUNCATED and REFUSAL come from it); "" for a normal stop.
	FinishReason string
	// WantIntegration is the failure type for an integrated spec when it
	// differs from Want (a fence left open: INTEGRATION_STRUCTURE).
	WantIntegration validate.FailureType
	// NeedsKnownGaps is set when the defect only shows against the
	// session's gap list (INCONSISTENT_REFS), NeedsRound when only against
	// the round (an issue ID of another round).
	NeedsKnownGaps, NeedsRound bool
}

// For reports whether q applies to answers of role.
func (q Quirk) For(role gap.Role) bool { return q.Role == "" || q.Role == role }

// Compose applies the quirks to text in layer order (each once, inner ones
// in the order given, then one wrapper, then one outer block, then the
// byte-level ones) and returns the text and the names of those that
// applied.
func Compose(text string, r *rand.Rand, qs ...Quirk) (string, []string) {
	var names []string
	for _, layer := range [...]Layer{Inner, Wrapper, Outer, Bytes} {
		done := false
		for _, q := range qs {
			if q.Layer != layer || done && (layer == Wrapper || layer == Outer) {
				continue
			}
			out, ok := q.Apply(text, r)
			if ok {
				text, names, done = out, append(names, q.Name), true
			}
		}
	}
	return text, names
}

// line is a line of an answer and whether it lies in a fenced block
// (fence lines included).
type line struct {
	text  string
	fence bool
}

// split splits text into lines, marking those in fenced blocks.
func split(text string) []line {
	raw := strings.Split(text, "\n")
	out := make([]line, len(raw))
	open, ch, n := false, byte(0), 0
	for i, l := range raw {
		out[i].text = l
		switch {
		case open:
			out[i].fence = true
			if markdown.ClosingFence(l, ch, n) {
				open = false
			}
		default:
			if c, k, _, ok := markdown.OpeningFence(l); ok {
				open, ch, n = true, c, k
				out[i].fence = true
			}
		}
	}
	return out
}

func join(ls []line) string {
	s := make([]string, len(ls))
	for i, l := range ls {
		s[i] = l.text
	}
	return strings.Join(s, "\n")
}

// mapLines rewrites the lines outside fences that match; which picks the
// matches to rewrite by their index among the matches (nil: all).
func mapLines(text string, match func(string) bool, which func(n int) []int, f func(string) string) (string, bool) {
	ls := split(text)
	var idx []int
	for i, l := range ls {
		if !l.fence && match(l.text) {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return text, false
	}
	pick := idx
	if which != nil {
		pick = nil
		for _, k := range which(len(idx)) {
			pick = append(pick, idx[k])
		}
	}
	changed := false
	for _, i := range pick {
		if t := f(ls[i].text); t != ls[i].text {
			ls[i].text, changed = t, true
		}
	}
	if !changed {
		return text, false
	}
	return join(ls), true
}

// prefixed matches a line starting with prefix.
func prefixed(prefix string) func(string) bool {
	return func(s string) bool { return strings.HasPrefix(s, prefix) }
}

// second picks the second match, when there is one.
func second(n int) []int {
	if n < 2 {
		return nil
	}
	return []int{1}
}

// one picks a random match.
func one(r *rand.Rand) func(int) []int { return func(n int) []int { return []int{r.IntN(n)} } }

// replacePrefix rewrites lines starting with old to start with new.
func replacePrefix(old, new string) func(string, *rand.Rand) (string, bool) {
	return func(t string, _ *rand.Rand) (string, bool) {
		return mapLines(t, prefixed(old), nil, func(s string) string { return new + s[len(old):] })
	}
}

// wrap puts the answer in a fence, as chat models do: fences inside it
// stay as they are (a ```http example inside a ```markdown wrapper).
func wrap(open, close string) func(string, *rand.Rand) (string, bool) {
	return func(t string, _ *rand.Rand) (string, bool) {
		return open + "\n" + strings.TrimRight(t, "\n") + "\n" + close + "\n", true
	}
}

// hasHeading reports whether the answer has an ATX heading outside fences.
func hasHeading(t string) bool {
	for _, l := range split(t) {
		if _, _, ok := markdown.ATXHeading(l.text); ok && !l.fence {
			return true
		}
	}
	return false
}

// hyphenIDs rewrites the hyphens of every ID outside fences with h.
func hyphenIDs(h string) func(string, *rand.Rand) (string, bool) {
	return func(t string, _ *rand.Rand) (string, bool) {
		changed := false
		ls := split(t)
		for i, l := range ls {
			if l.fence {
				continue
			}
			for _, m := range append(gap.FindIDMatches(l.text), gap.FindIssueMatches(l.text)...) {
				id := strings.ReplaceAll(m.ID, "-", h)
				ls[i].text = strings.Replace(ls[i].text, m.ID, id, 1)
				changed = true
			}
		}
		return join(ls), changed
	}
}

// insertAt inserts block before a random line outside fences that
// follows a blank line (a paragraph boundary).
func insertAt(block string) func(string, *rand.Rand) (string, bool) {
	return func(t string, r *rand.Rand) (string, bool) {
		ls := split(t)
		var at []int
		for i := 1; i < len(ls); i++ {
			if !ls[i].fence && !ls[i-1].fence && strings.TrimSpace(ls[i-1].text) == "" && strings.TrimSpace(ls[i].text) != "" {
				at = append(at, i)
			}
		}
		if len(at) == 0 {
			return t, false
		}
		i := at[r.IntN(len(at))]
		ins := []line{{text: block}, {text: ""}}
		ls = append(ls[:i], append(ins, ls[i:]...)...)
		return join(ls), true
	}
}

// bullets rewrites "- " list markers outside fences as marker.
func bullets(marker string) func(string, *rand.Rand) (string, bool) {
	return func(t string, _ *rand.Rand) (string, bool) {
		return mapLines(t, func(s string) bool { return strings.HasPrefix(strings.TrimLeft(s, " "), "- ") }, nil,
			func(s string) string {
				i := len(s) - len(strings.TrimLeft(s, " "))
				return s[:i] + marker + s[i+2:]
			})
	}
}
