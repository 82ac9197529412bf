package conflict

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/refine-spec/refine/gap"
)

// Option keys of a conflict (GAP-FLOW-006 §4).
const (
	optionReviewer      = "A" // Reviewer's position, always offered
	optionEngineer      = "B" // Engineer's position, always offered
	optionSynthesis     = "C" // only when a middle ground is obvious
	optionUserSpecified = "D" // only for CRITICAL issues
)

// ConflictOption is one choice offered for a conflict.
type ConflictOption struct {
	Key         string `json:"key"`      // "A" to "D"
	Name        string `json:"name"`     // "Reviewer Position", …
	Position    string `json:"position"` // the Options Summary's column: Reviewer, Engineer, Synthesis, User specifies
	Description string `json:"description"`
	TradeOff    string `json:"trade_off"`
	Recommended bool   `json:"recommended"`
}

// Synthesis is a middle ground between the two positions (§4
// attempt_synthesis).
type Synthesis struct {
	Proposal string `json:"proposal"`
	TradeOff string `json:"trade_off"`
	// AddressesBoth: the proposal answers the Reviewer's concern and the
	// Engineer's; only then may Option C be recommended.
	AddressesBoth bool `json:"addresses_both"`
}

// analysis is the Mediator's optional judgment about a conflict, the spec's
// mediator_analysis: a host (or an LLM it runs) may condense the subject and
// propose a synthesis the three fixed patterns cannot see. Zero fields keep
// the defaults.
type analysis struct {
	Subject   string     `json:"subject,omitempty"`   // one line; default: the issue summary
	Synthesis *Synthesis `json:"synthesis,omitempty"` // default: synthesize's patterns
}

// withAnalysis returns c with the analysis applied: its subject replaced and
// its options regenerated. Use it before presenting the conflict.
func (c Conflict) withAnalysis(a analysis) Conflict {
	if s := strings.TrimSpace(a.Subject); s != "" {
		c.Subject = firstLine(s)
	}
	if a.Synthesis != nil && strings.TrimSpace(a.Synthesis.Proposal) != "" {
		syn := *a.Synthesis
		c.Synthesis = &syn
	}
	c.Options = generateOptions(c)
	return c
}

// synthesize is §4's attempt_synthesis, its three patterns tried in order:
//
//  1. the Engineer argues "complexity": make the Reviewer's suggestion
//     optional/configurable with a simpler default (addresses both);
//  2. the issue's summary names a "threshold" or "limit": make it
//     configurable with the Reviewer's default (addresses both);
//  3. the Engineer argues "out of scope": defer to v2 with a placeholder
//     (does not address the Reviewer's concern).
//
// The Engineer's argument is the position and the rationale together (the
// spec looks at the rationale only, but Engineers state the reason in either
// field). Matching ignores case. ok is false when no pattern applies.
func synthesize(issue Issue, engineerPosition, rationale string) (s Synthesis, ok bool) {
	argument := strings.ToLower(engineerPosition + "\n" + rationale)
	summary := strings.ToLower(issue.Summary)
	switch {
	case strings.Contains(argument, "complexity"):
		return Synthesis{
			Proposal:      "Implement " + suggestionClause(reviewerText(issue)) + " as optional/configurable, with simpler default",
			TradeOff:      "Partial complexity for flexibility",
			AddressesBoth: true,
		}, true
	case strings.Contains(summary, "threshold") || strings.Contains(summary, "limit"):
		return Synthesis{
			Proposal:      "Make threshold configurable with default matching Reviewer's suggestion",
			TradeOff:      "Configuration complexity for correctness",
			AddressesBoth: true,
		}, true
	case strings.Contains(argument, "out of scope"):
		return Synthesis{
			Proposal:      "Defer to v2 with explicit placeholder in spec",
			TradeOff:      "Delayed implementation",
			AddressesBoth: false, // doesn't fully address the Reviewer's concern
		}, true
	}
	return Synthesis{}, false
}

// suggestionClause fits a suggestion after "Implement ": one line, no
// final period, no doubled leading "Implement", and a capitalised first
// word lower-cased ("Add strict mode" → "add strict mode"; "TTL" stays).
func suggestionClause(s string) string {
	s = strings.TrimSuffix(strings.TrimSpace(oneLine(s)), ".")
	if len(s) > len("implement ") && strings.EqualFold(s[:len("implement ")], "implement ") {
		s = strings.TrimSpace(s[len("implement "):])
	}
	r, n := utf8.DecodeRuneInString(s)
	if n > 0 && unicode.IsUpper(r) {
		r2, _ := utf8.DecodeRuneInString(s[n:])
		if !unicode.IsUpper(r2) && !unicode.IsDigit(r2) {
			s = string(unicode.ToLower(r)) + s[n:]
		}
	}
	return s
}

// generateOptions is §4's generate_conflict_options for c: A (Reviewer) and
// B (Engineer) always, C when c.Synthesis is set or synthesize finds a
// pattern, D
// when the issue is CRITICAL; two to four options in key order. At most one
// option is recommended:
//
//   - CRITICAL: A, unless the Engineer's argument raises safety or
//     correctness (safety, unsafe, correctness, incorrect, security, data
//     loss, corruption, integrity), in which case C if it addresses both
//     concerns;
//   - HIGH: none (§7: "No default recommendation");
//   - MEDIUM and LOW: C if it addresses both concerns.
func generateOptions(c Conflict) []ConflictOption {
	issue := c.Issue
	implicit := c.Type == implicitConverted
	a := ConflictOption{
		Key: optionReviewer, Name: "Reviewer Position", Position: "Reviewer",
		Description: reviewerText(issue),
		TradeOff:    reviewerTradeOff(c),
	}
	b := ConflictOption{
		Key: optionEngineer, Name: "Engineer Position", Position: "Engineer",
		Description: c.EngineerPosition,
		TradeOff:    "May leave unaddressed: " + orNotStated(oneLine(issue.Impact)),
	}
	if implicit {
		b.Name = "No change (implicit Engineer position)"
	}
	opts := []ConflictOption{a, b}

	var s Synthesis
	ok := false
	if c.Synthesis != nil {
		s, ok = *c.Synthesis, true
	} else {
		s, ok = synthesize(issue, engineerArgument(c), c.EngineerRationale)
	}
	if ok {
		opts = append(opts, ConflictOption{
			Key: optionSynthesis, Name: "Synthesis", Position: "Synthesis",
			Description: s.Proposal, TradeOff: s.TradeOff,
		})
	}
	if issue.Severity == gap.Critical {
		opts = append(opts, ConflictOption{
			Key: optionUserSpecified, Name: "User Specifies Alternative", Position: "User specifies",
			Description: "Provide your own resolution approach",
			TradeOff:    "Requires additional user input",
		})
	}

	rec := ""
	switch issue.Severity {
	case gap.Critical:
		if !raisesSafety(c.EngineerPosition + "\n" + c.EngineerRationale) {
			rec = optionReviewer
		} else if ok && s.AddressesBoth {
			rec = optionSynthesis
		}
	case gap.High:
		// §7: HIGH has no default recommendation.
	case gap.Low:
		// §7: LOW "may auto-resolve to Engineer".
		rec = optionEngineer
	default:
		if ok && s.AddressesBoth {
			rec = optionSynthesis
		}
	}
	for i := range opts {
		opts[i].Recommended = opts[i].Key == rec
	}
	return opts
}

// reviewerTradeOff is what taking the Reviewer's position gives up: the
// Engineer's concern, from the rationale (else the position), in brief.
// An implicit conflict has no stated concern.
func reviewerTradeOff(c Conflict) string {
	arg := strings.TrimSpace(c.EngineerRationale)
	if arg == "" {
		arg = engineerArgument(c)
	}
	if strings.TrimSpace(arg) == "" {
		return "Nothing the Engineer stated; the Engineer must change the section"
	}
	return "Gives up the Engineer's point: " + brief(arg)
}

// briefLen bounds a trade-off drawn from a position, in bytes.
const briefLen = 140

// brief is the first sentence of s without a leading label ("Trade-off
// analysis: …") and cut to briefLen at a word boundary.
func brief(s string) string {
	s = firstSentence(s)
	if i := strings.Index(s, ": "); i > 0 && i <= 30 && !strings.ContainsAny(s[:i], ".,;") {
		s = s[i+2:]
	}
	if len(s) > briefLen {
		cut := strings.LastIndexByte(s[:briefLen], ' ')
		if cut < briefLen/2 {
			cut = briefLen
			for cut > 0 && !utf8.RuneStart(s[cut]) {
				cut--
			}
		}
		s = strings.TrimRight(s[:cut], " ,;:") + " …"
	}
	r, n := utf8.DecodeRuneInString(s)
	if n > 0 && unicode.IsUpper(r) {
		r2, _ := utf8.DecodeRuneInString(s[n:])
		if !unicode.IsUpper(r2) && !unicode.IsDigit(r2) { // "The" → "the"; "TTL" stays
			s = string(unicode.ToLower(r)) + s[n:]
		}
	}
	return s
}

// engineerArgument is the Engineer's stated position, empty for an
// implicit conflict (whose position is the Mediator's placeholder).
func engineerArgument(c Conflict) string {
	if c.Type == implicitConverted {
		return ""
	}
	return c.EngineerPosition
}

// raisesSafety reports whether an argument addresses safety or correctness,
// which lifts the default recommendation of A for CRITICAL issues.
func raisesSafety(s string) bool {
	n := normWords(s)
	for _, w := range [...]string{"safety", "unsafe", "correctness", "incorrect", "security", "data loss", "corruption", "integrity"} {
		if strings.Contains(n, " "+w+" ") {
			return true
		}
	}
	return false
}

// option returns the option with key k.
func (c Conflict) option(k string) (ConflictOption, bool) {
	for _, o := range c.Options {
		if o.Key == k {
			return o, true
		}
	}
	return ConflictOption{}, false
}

// recommended returns the key of the recommended option, or "".
func (c Conflict) recommended() string {
	for _, o := range c.Options {
		if o.Recommended {
			return o.Key
		}
	}
	return ""
}
