package conflict

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/refine-spec/refine/gap"
)

// Violation kinds.
const (
	// violationReArgued: a DISAGREE on a decided issue. The engine turns it
	// into the retriable validation failure RE_ARGUED_CONFLICT with Message.
	violationReArgued = "RE_ARGUED_CONFLICT"
	// violationRepeatedPosition: the Engineer may be proposing a position
	// the user rejected. A warning, not a failure.
	violationRepeatedPosition = "REPEATED_POSITION"
)

// repeatedPositionThreshold is the share of a rejected position's keywords
// a block must repeat to be flagged.
const repeatedPositionThreshold = 0.8

// Violation is one breach of a recorded decision found in Engineer output.
type Violation struct {
	Kind       string `json:"kind"`
	IssueID    string `json:"issue_id"`
	DecisionID string `json:"decision_id"`
	Line       int    `json:"line"`
	// Fatal: the output fails validation (RE_ARGUED_CONFLICT, retriable).
	Fatal   bool   `json:"fatal"`
	Message string `json:"message"`
}

// disagreeRef is §5's check, f"DISAGREE: {issue_id}" in the output,
// tolerant of spacing; it is searched outside code.
var disagreeRef = regexp.MustCompile(`DISAGREE:[ \t]*(ISSUE-R\d{1,3}-\d{3})\b`)

// CheckCompliance is §5's validate_decision_compliance over every decision
// passed (the engine passes all the session's decisions):
//
//   - Re-arguing is fatal: a DISAGREE block on a decided issue, the text
//     "DISAGREE: ISSUE-…" for it anywhere outside code, or an informal
//     disagreement naming it. The message quotes the decision.
//   - Repeating a rejected position is a warning: when the user did not
//     choose B, a block of the output (paragraph, list item) that contains
//     the Engineer's rejected position, or at least
//     repeatedPositionThreshold of its keywords (when it has three or
//     more), or an informal disagreement soft-matching the decided issue.
//
// Waivers are skipped: the Engineer's position won. Violations come in
// decision order, fatal ones first for each decision.
func CheckCompliance(engineerOutput string, decisions []Ruling) []Violation {
	if len(decisions) == 0 {
		return nil
	}
	o := newOutline(engineerOutput)
	d := o.doc
	reargued := map[string]int{} // issue ID → line
	note := func(id string, line int) {
		if _, ok := reargued[id]; !ok {
			reargued[id] = line
		}
	}
	for _, s := range d.Sections() {
		if t := headingProse(d, s.Heading); isDisagreeTitle(t) {
			for _, m := range gap.FindIssueIDs(t) {
				note(m, s.Line)
			}
		}
	}
	for _, m := range disagreeRef.FindAllStringSubmatchIndex(d.Prose, -1) {
		note(d.Prose[m[2]:m[3]], d.LineOf(m[0]))
	}
	informal := informalDisagreements(d)
	for _, b := range informal {
		if len(b.ids) > 0 {
			note(b.ids[0], b.Line)
		}
	}

	var out []Violation
	for _, dec := range decisions {
		if dec.ChosenOption == OptionWaive {
			continue
		}
		if line, ok := reargued[dec.IssueID]; ok {
			out = append(out, Violation{
				Kind: violationReArgued, IssueID: dec.IssueID, DecisionID: dec.ID, Line: line, Fatal: true,
				Message: fmt.Sprintf("Engineer re-argued %s which was already resolved by user. %s (line %d). "+
					"Honor the decision; note any new concern as a NEW gap, not as disagreement with the decided conflict.",
					dec.IssueID, quoteDecision(dec), line),
			})
			continue
		}
		if dec.ChosenOption == optionEngineer {
			continue
		}
		if line, ok := repeatsPosition(o, dec.EngineerPosition); ok {
			out = append(out, repeated(dec, line))
			continue
		}
		for _, b := range informal {
			if len(b.ids) == 0 && matchIssueText(b.text, Issue{ID: dec.IssueID, Summary: dec.Subject}).Matched {
				out = append(out, repeated(dec, b.Line))
				break
			}
		}
	}
	return out
}

func repeated(dec Ruling, line int) Violation {
	return Violation{
		Kind: violationRepeatedPosition, IssueID: dec.IssueID, DecisionID: dec.ID, Line: line,
		Message: fmt.Sprintf("Engineer may be proposing same position rejected in %s (line %d). %s", dec.IssueID, line, quoteDecision(dec)),
	}
}

// quoteDecision quotes a decision for a message:
// Decision DECISION-R5-001: Option A - "Implement strict mode validation."
func quoteDecision(d Ruling) string {
	opt := "Option " + d.ChosenOption
	if d.ChosenOption == OptionWaive {
		opt = "Waived"
	}
	return fmt.Sprintf("Decision %s: %s - %s", d.ID, opt, quoted(oneLine(d.Decision)))
}

// repeatsPosition looks for a block of the output restating position and
// returns its line.
func repeatsPosition(o *outline, position string) (int, bool) {
	if position == "" || position == implicitEngineerPosition {
		return 0, false
	}
	norm := normWords(position)
	verbatim := quotable(norm)
	want := keywordSet(position)
	if !verbatim && len(want) < 3 {
		return 0, false
	}
	for _, u := range o.units {
		if u.kind == unitHeading {
			continue
		}
		p := o.prose(u)
		if verbatim && strings.Contains(normWords(p), norm) {
			return u.line, true
		}
		if len(want) >= 3 {
			if _, share := overlap(want, keywordSet(p)); share >= repeatedPositionThreshold {
				return u.line, true
			}
		}
	}
	return 0, false
}
