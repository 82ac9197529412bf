package rollback

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/markdown"
)

// Heuristic is a row of the spec's "Root Cause Detection Heuristics" table.
type Heuristic string

// The five heuristics, in the table's order.
const (
	// sameFailureMode: rollback reasons similar → prompt issue or gap ambiguity.
	sameFailureMode Heuristic = "SAME_FAILURE_MODE"
	// DifferentFailureModes: reasons divergent → scope too large.
	DifferentFailureModes Heuristic = "DIFFERENT_FAILURE_MODES"
	// referencesUnknowns: output mentions undefined terms → missing context.
	referencesUnknowns Heuristic = "REFERENCES_UNKNOWNS"
	// minimalOutput: under 200 characters in every attempt → domain gap.
	minimalOutput Heuristic = "MINIMAL_OUTPUT"
	// selfContradiction: internal inconsistencies → gap ambiguity.
	selfContradiction Heuristic = "SELF_CONTRADICTION"
)

// Likely causes, as the history records them.
const (
	causePromptOrAmbiguity = "Prompt issue or gap ambiguity"
	causeScopeTooLarge     = "Gap scope too large"
	causeMissingContext    = "Missing context"
	causeDomainGap         = "Domain gap"
	causeAmbiguity         = "Gap ambiguity"
)

// Action is a remedy offered after root-cause analysis.
type Action string

// The actions; each value is also the machine token of the matching option
// in the root-cause question a host asks.
const (
	ActionSplit    Action = "split"
	ActionContext  Action = "context"
	ActionReassign Action = "reassign"
	ActionForce    Action = "force"
	ActionPause    Action = "pause"
)

// Label is the action in words, as history records the recommendation.
func (a Action) Label() string {
	switch a {
	case ActionSplit:
		return "Split gap"
	case ActionContext:
		return "Provide additional context"
	case ActionReassign:
		return "Reassign to different gaps"
	case ActionForce:
		return "Force proceed"
	case ActionPause:
		return "Pause session"
	}
	return string(a)
}

// AttemptInfo is one rollback of the round under analysis.
type AttemptInfo struct {
	Attempt int
	Reason  string
	Trigger Trigger
	// Engineer and Reviewer are the rolled-back outputs (from the archive).
	Engineer, Reviewer string
	// Patterns are the patterns detected in them.
	Patterns []Pattern
}

// Cause is a fired heuristic.
type Cause struct {
	Heuristic Heuristic
	// Cause is the likely cause in words, as history records it: "Prompt
	// issue or gap ambiguity", "Gap scope too large", "Missing context",
	// "Domain gap" or "Gap ambiguity". Match on Heuristic, not on this text.
	Cause      string
	Evidence   string
	Confidence gap.Confidence
}

// Diagnosis is the result of root-cause analysis.
type Diagnosis struct {
	// Causes are the fired heuristics, in table order.
	Causes []Cause
	// Action is the recommended remedy; Primary the cause that drove it
	// (nil when no heuristic fired).
	Action  Action
	Primary *Cause
}

// Record returns the history form of the diagnosis.
func (d Diagnosis) Record() *AnalysisRecord {
	detected := "No consistent cause"
	if d.Primary != nil {
		detected = d.Primary.Cause
	}
	return &AnalysisRecord{Detected: detected, Recommendation: d.Action.Label()}
}

// similarity is the threshold of token Jaccard similarity above which two
// rollback reasons or two outputs' section sets count as "similar".
const similarity = 0.5

// Diagnose applies the root-cause heuristics to a round's rollbacks.
//
// Same versus different failure modes is a vote of up to three signals,
// each compared between consecutive attempts: the rollback reasons (word
// Jaccard similarity >= 0.5, stop words dropped), the detected pattern sets
// (equal or not; only when every attempt has patterns), and the section
// titles the outputs produced (Jaccard >= 0.5). The majority decides; the
// confidence is HIGH when at least two signals agree and none dissents,
// otherwise MEDIUM; a tie fires neither. References to unknowns are
// DOMAIN_CONFUSION or INCONSISTENT_REFS in an attempt (HIGH when in all).
// Minimal output is every attempt under minGapChars characters. Self
// contradiction is a reviewer calling the output contradictory or
// internally inconsistent.
//
// The recommended action is a split when failure modes differ (the scope is
// too large), otherwise additional context.
func Diagnose(attempts []AttemptInfo) Diagnosis {
	var causes []Cause
	if c, ok := failureModes(attempts); ok {
		causes = append(causes, c)
	}
	var unknown []string
	for _, a := range attempts {
		for _, p := range a.Patterns {
			if p == domainConfusion || p == inconsistentRefs {
				unknown = append(unknown, fmt.Sprintf("Attempt %d: %s", a.Attempt, p))
			}
		}
	}
	if len(unknown) > 0 {
		conf := gap.ConfidenceMedium
		if countAttemptsWith(attempts, domainConfusion, inconsistentRefs) == len(attempts) {
			conf = gap.ConfidenceHigh
		}
		causes = append(causes, Cause{referencesUnknowns, causeMissingContext, "Output references undefined terms or gaps (" + strings.Join(unknown, "; ") + ")", conf})
	}
	if len(attempts) > 0 {
		minimal := true
		var sizes []string
		for _, a := range attempts {
			n := utf8.RuneCountInString(strings.TrimSpace(a.Engineer))
			minimal = minimal && n < minGapChars
			sizes = append(sizes, fmt.Sprintf("Attempt %d: %d", a.Attempt, n))
		}
		if minimal {
			causes = append(causes, Cause{minimalOutput, causeDomainGap, fmt.Sprintf("Output under %d characters in every attempt (%s)", minGapChars, strings.Join(sizes, ", ")), gap.ConfidenceHigh})
		}
	}
	var contra []string
	for _, a := range attempts {
		if phrase := contradiction(a.Reviewer); phrase != "" {
			contra = append(contra, fmt.Sprintf("Attempt %d: reviewer says %q", a.Attempt, phrase))
		}
	}
	if len(contra) > 0 {
		causes = append(causes, Cause{selfContradiction, causeAmbiguity, "Output contradicts itself (" + strings.Join(contra, "; ") + ")", gap.ConfidenceMedium})
	}

	d := Diagnosis{Causes: causes, Action: ActionContext}
	pick := func(h Heuristic) bool {
		for i := range d.Causes {
			if d.Causes[i].Heuristic == h {
				d.Primary = &d.Causes[i]
				return true
			}
		}
		return false
	}
	switch {
	case pick(DifferentFailureModes):
		d.Action = ActionSplit
	case pick(referencesUnknowns), pick(minimalOutput), pick(sameFailureMode), pick(selfContradiction):
	}
	return d
}

func countAttemptsWith(attempts []AttemptInfo, ps ...Pattern) int {
	n := 0
	for _, a := range attempts {
		if slices.ContainsFunc(a.Patterns, func(p Pattern) bool { return slices.Contains(ps, p) }) {
			n++
		}
	}
	return n
}

var contradictionPhrases = [...]string{
	"contradicts itself", "self-contradictory", "contradictory", "contradiction",
	"internally inconsistent", "internal inconsistenc", "inconsistent with itself",
	"conflicts with itself",
}

func contradiction(review string) string {
	lower := strings.ToLower(markdown.Parse(review).Prose)
	for _, p := range contradictionPhrases {
		if strings.Contains(lower, p) {
			return p
		}
	}
	return ""
}

// failureModes votes same versus different failure modes.
func failureModes(attempts []AttemptInfo) (Cause, bool) {
	if len(attempts) < 2 {
		return Cause{}, false
	}
	same, diff := 0, 0
	var sameEv, diffEv []string
	vote := func(v int, sameText, diffText string) {
		switch v {
		case 1:
			same++
			sameEv = append(sameEv, sameText)
		case -1:
			diff++
			diffEv = append(diffEv, diffText)
		}
	}

	reasons := make([][]string, len(attempts))
	for i, a := range attempts {
		reasons[i] = reasonWords(a.Reason)
	}
	vote(compareAll(reasons, func(a, b []string) bool { return jaccard(a, b) >= similarity }),
		"Rollback reasons similar", "Rollback reasons divergent")

	pats := make([][]string, len(attempts))
	for i, a := range attempts {
		for _, p := range a.Patterns {
			pats[i] = append(pats[i], string(p))
		}
	}
	vote(compareAll(pats, func(a, b []string) bool { return jaccard(a, b) == 1 }),
		"Same patterns in every attempt", "Different patterns in each attempt")

	secs := make([][]string, len(attempts))
	var shown []string
	for i, a := range attempts {
		titles := producedSections(a.Engineer)
		for _, t := range titles {
			secs[i] = append(secs[i], normTitle(t))
		}
		shown = append(shown, fmt.Sprintf("Attempt %d: %s", a.Attempt, strings.Join(titles, ", ")))
	}
	vote(compareAll(secs, func(a, b []string) bool { return jaccard(a, b) >= similarity }),
		"Attempts produced similar sections",
		"Different sections produced in each attempt ("+strings.Join(shown, "; ")+")")

	switch {
	case same > diff:
		conf := gap.ConfidenceMedium
		if same >= 2 && diff == 0 {
			conf = gap.ConfidenceHigh
		}
		return Cause{sameFailureMode, causePromptOrAmbiguity, strings.Join(sameEv, "; "), conf}, true
	case diff > same:
		conf := gap.ConfidenceMedium
		if diff >= 2 && same == 0 {
			conf = gap.ConfidenceHigh
		}
		return Cause{DifferentFailureModes, causeScopeTooLarge, strings.Join(diffEv, "; "), conf}, true
	}
	return Cause{}, false
}

// compareAll compares consecutive non-empty sets: 1 when all pairs are
// alike, -1 when any pair differs, 0 when a set is missing.
func compareAll(sets [][]string, alike func(a, b []string) bool) int {
	for _, s := range sets {
		if len(s) == 0 {
			return 0
		}
	}
	for i := 1; i < len(sets); i++ {
		if !alike(sets[i-1], sets[i]) {
			return -1
		}
	}
	return 1
}

func jaccard(a, b []string) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	inter, union := 0, 0
	seen := map[string]int{}
	for _, x := range a {
		seen[x] |= 1
	}
	for _, x := range b {
		seen[x] |= 2
	}
	for _, v := range seen {
		union++
		if v == 3 {
			inter++
		}
	}
	return float64(inter) / float64(union)
}

// isStopWord reports words that carry no failure mode ("still", "now",
// "instead" make "Now UX is unclear instead" read as a new complaint).
func isStopWord(w string) bool {
	switch w {
	case "a", "an", "the", "is", "are", "was", "were", "be", "to", "of", "in", "on", "for",
		"and", "or", "but", "no", "not", "still", "now", "instead", "again", "too", "very",
		"it", "this", "that", "with", "as", "at", "by", "from", "user", "request":
		return true
	}
	return false
}

// reasonWords returns the distinct content words of a reason, lower-cased,
// with a plural "s" dropped.
func reasonWords(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if isStopWord(w) {
			continue
		}
		if len(w) > 3 {
			w = strings.TrimSuffix(w, "s")
		}
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// producedSections returns the subsection titles of an output's gap
// sections (all level-3 titles when it has none).
func producedSections(engineer string) []string {
	doc := markdown.Parse(engineer)
	var out []string
	seen := map[string]bool{}
	add := func(t string) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	found := false
	for _, s := range doc.SectionsAt(2) {
		if !strings.HasPrefix(strings.ToLower(s.Title), "gap resolution") {
			continue
		}
		found = true
		for _, sub := range doc.Within(s) {
			if sub.Level == 3 {
				add(sub.Title)
			}
		}
	}
	if !found {
		for _, s := range doc.SectionsAt(3) {
			add(s.Title)
		}
	}
	return out
}
