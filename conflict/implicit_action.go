package conflict

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/refine-spec/refine/gap"
)

// IgnoreSet holds the issues the user marked as false positives (GAP-FLOW-013
// action 4): DetectImplicit never flags them again. The zero value is empty.
type IgnoreSet struct {
	IssueIDs []string `json:"issue_ids"` // sorted, distinct
}

// has reports whether id is ignored.
func (s IgnoreSet) has(id string) bool {
	_, ok := slices.BinarySearch(s.IssueIDs, id)
	return ok
}

// with returns a set that also holds id; s is not modified.
func (s IgnoreSet) with(id string) IgnoreSet {
	i, ok := slices.BinarySearch(s.IssueIDs, id)
	if ok {
		return s
	}
	return IgnoreSet{IssueIDs: slices.Insert(slices.Clone(s.IssueIDs), i, id)}
}

// presentationNote is §6's note shown with a converted implicit conflict.
const presentationNote = `NOTE: This conflict was detected automatically because Engineer did not
explicitly address this HIGH/CRITICAL issue. Engineer may have:
1. Overlooked the issue (oversight)
2. Intentionally not addressed it (implicit disagreement)
3. Addressed it in substance without referencing the issue ID

User should consider requesting clarification before resolving.`

// implicitEngineerPosition is §6's Engineer position of a converted
// implicit conflict.
const implicitEngineerPosition = "Not explicitly stated - Engineer did not address this issue"

// convertImplicit is §6's convert_implicit_to_conflict (GAP-FLOW-013 action
// 2): a conflict of type IMPLICIT_CONVERTED whose Reviewer position is the
// suggestion, whose Engineer position is implicitEngineerPosition, carrying
// the heuristics that fired and presentationNote, with options generated.
func convertImplicit(f Finding, at time.Time) Conflict {
	c := Conflict{
		IssueID:          f.IssueID,
		Type:             implicitConverted,
		Issue:            f.Issue,
		Round:            f.Round,
		Subject:          firstLine(f.Issue.Summary),
		ReviewerPosition: reviewerText(f.Issue),
		EngineerPosition: implicitEngineerPosition,
		Source:           sourceImplicit,
		Heuristics:       slices.Clone(f.Heuristics),
		MatchConfidence:  f.Confidence,
		PresentationNote: presentationNote,
		DetectedAt:       at,
		Status:           StatusUnresolved,
	}
	c.Options = generateOptions(c)
	return c
}

// ImplicitOutcome is what one answer to an implicit-disagreement question
// does. Exactly one of Instruction, Conflict, Decision is set, or none for
// "ignore", which updates Ignore.
type ImplicitOutcome struct {
	Effect string `json:"effect"` // the chosen option's Effect
	// Instruction goes into the next Engineer prompt (action 1), and
	// GapState is then NEEDS_REVISION for the issue's gap.
	Instruction string    `json:"instruction,omitempty"`
	GapState    gap.State `json:"gap_state,omitempty"`
	// Conflict is the converted conflict to present (action 2).
	Conflict *Conflict `json:"conflict,omitempty"`
	// Decision records the waiver (action 3); the issue is closed.
	Decision *Ruling `json:"decision,omitempty"`
	// Ignore is the ignore set after the answer (action 4 adds the issue).
	Ignore IgnoreSet `json:"ignore"`
}

// ResolveImplicit applies the answer to ImplicitQuestion(f): key is the
// chosen option ("1" to "4") and text the user's optional note (a further
// instruction, or the waiver's rationale). decisionID (from gap.NextDecisionID)
// is needed only for a waiver; at stamps a conversion or a waiver. The
// answer is checked with validateAnswer first.
func ResolveImplicit(f Finding, key, text, decisionID string, at time.Time, ignore IgnoreSet) (ImplicitOutcome, error) {
	p := ImplicitQuestion(f)
	if err := validateAnswer(p, key, text); err != nil {
		return ImplicitOutcome{}, err
	}
	o, _ := optionByKey(p, key)
	out := ImplicitOutcome{Effect: o.Effect, Ignore: ignore}
	text = strings.TrimSpace(text)
	switch o.Effect {
	case effectRequestAddress:
		out.Instruction = addressInstruction(f, text)
		if f.Issue.Gap != "" {
			out.GapState = gap.NeedsRevision
		}
	case effectConvert:
		c := convertImplicit(f, at)
		out.Conflict = &c
	case effectWaive:
		d, err := waiver(f, text, decisionID, at)
		if err != nil {
			return ImplicitOutcome{}, err
		}
		out.Decision = &d
	case effectIgnore:
		out.Ignore = ignore.with(f.IssueID)
	}
	return out, nil
}

// addressInstruction is the next-prompt instruction of action 1: name the
// issue, ask for an explicit response or a DISAGREE block.
func addressInstruction(f Finding, note string) string {
	is := f.Issue
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s", is.ID, rank(is.Severity))
	if is.Gap != "" {
		fmt.Fprintf(&b, ", %s", is.Gap)
	}
	fmt.Fprintf(&b, ") was not addressed in Round %d: %s\n", f.Round, quoted(oneLine(is.Summary)))
	fmt.Fprintf(&b, "Address it explicitly this round: write a paragraph that names %s and revise", is.ID)
	if is.Gap != "" {
		fmt.Fprintf(&b, " %s", is.Gap)
	} else {
		b.WriteString(" the proposal")
	}
	if s := oneLine(is.Suggestion); s != "" {
		fmt.Fprintf(&b, " per the Reviewer's suggestion (%s)", quoted(s))
	}
	fmt.Fprintf(&b, ", or, if you disagree, write a '## DISAGREE: %s' block with your rationale.", is.ID)
	if note != "" {
		b.WriteString("\nUser note: " + note)
	}
	return b.String()
}

// waiver builds the decision of action 3.
func waiver(f Finding, text, id string, at time.Time) (Ruling, error) {
	did, err := gap.ParseDecisionID(id)
	if err != nil {
		return Ruling{}, fmt.Errorf("conflict: waiving %s: %w", f.IssueID, err)
	}
	is := f.Issue
	rationale := text
	if rationale == "" {
		rationale = "(none given)"
	}
	gapAction := "No gap affected."
	if is.Gap != "" {
		gapAction = fmt.Sprintf("%s no longer has to answer %s.", is.Gap, is.ID)
	}
	return Ruling{
		ID:             did.String(),
		Round:          did.Round,
		IssueID:        is.ID,
		Subject:        firstLine(is.Summary),
		Type:           implicitWaived,
		Gap:            is.Gap,
		Severity:       is.Severity,
		ChosenOption:   OptionWaive,
		Decision:       fmt.Sprintf("Waive %s: the issue is closed without change.", is.ID),
		Rationale:      rationale,
		Constraints:    "None",
		EngineerAction: fmt.Sprintf("None: %s was waived by the user; do not address it.", is.ID),
		GapAction:      gapAction,
		DecidedBy:      decidedByUser,
		Timestamp:      at.UTC(),
	}, nil
}
