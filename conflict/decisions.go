package conflict

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/refine-spec/refine/gap"
)

// OptionWaive is the ChosenOption of a waiver decision (GAP-FLOW-013
// action 3), which has no A-D option.
const OptionWaive = "WAIVE"

// Who decided.
const (
	decidedByUser      = "User"
	decidedByAutomated = "Mediator (automated mode)"
)

// Ruling is the record of a resolved conflict (§5), or of a waived
// implicit issue. It is the unit of decisions.md, of the next Engineer
// prompt's resolution block and of the compliance check.
type Ruling struct {
	ID      string `json:"id"`    // DECISION-R{N}-{NNN}
	Round   int    `json:"round"` // the round it was made in (N of the ID)
	IssueID string `json:"issue_id"`
	Subject string `json:"subject"`
	Type    Type   `json:"type"`
	Gap     gap.ID `json:"gap,omitempty"`
	// Severity is the issue's severity when decided (overrides applied).
	Severity gap.Severity `json:"severity"`

	// One-line positions for the record (explicit conflicts only).
	ReviewerSummary string `json:"reviewer_summary,omitempty"`
	EngineerSummary string `json:"engineer_summary,omitempty"`
	// EngineerPosition is the Engineer's full position, kept for the
	// repeated-position check; "" for implicit conflicts.
	EngineerPosition string `json:"engineer_position,omitempty"`

	ChosenOption   string `json:"chosen_option"` // A-D, or OptionWaive
	Decision       string `json:"decision"`
	Rationale      string `json:"rationale"`
	Constraints    string `json:"constraints"`
	EngineerAction string `json:"engineer_action"`
	GapAction      string `json:"gap_action"`
	// NextState suggests the gap's state once nothing else holds it:
	// ACCEPTED when the Engineer's proposal stands (B, waiver), OPEN when
	// the gap must be revised per the decision (A, C, D).
	NextState gap.State `json:"next_state,omitempty"`

	DecidedBy string    `json:"decided_by"`
	Timestamp time.Time `json:"timestamp"`
}

// Resolution is an answer to a conflict: the option and the user's text,
// plus optional wording a host wants in the record instead of the generated
// one. Text is the rationale for A, B and C and the alternative itself for
// D (where it is required).
type Resolution struct {
	Option    string `json:"option"`
	Text      string `json:"text,omitempty"`
	DecidedBy string `json:"decided_by,omitempty"` // default decidedByUser

	Decision        string `json:"decision,omitempty"`
	Rationale       string `json:"rationale,omitempty"`
	Constraints     string `json:"constraints,omitempty"`
	EngineerAction  string `json:"engineer_action,omitempty"`
	GapAction       string `json:"gap_action,omitempty"`
	ReviewerSummary string `json:"reviewer_summary,omitempty"`
	EngineerSummary string `json:"engineer_summary,omitempty"`
}

// autoResolution is the automated-mode answer to a conflict: its
// ConflictQuestion default (the recommended option, else A, the Reviewer's
// position, because an unattended run should not drop a HIGH/CRITICAL
// concern on the Engineer's word).
func autoResolution(c Conflict) Resolution {
	return Resolution{
		Option:    ConflictQuestion(c).Default,
		DecidedBy: decidedByAutomated,
		Rationale: "Automated mode: default option (the recommended one, else the Reviewer's position)",
	}
}

// Decide records the resolution of an unresolved conflict under decision
// id, at the given time. It checks that the option was offered (and that D
// carries the user's alternative) and returns the decision and the conflict
// marked RESOLVED. Generated wording (see the option cases below) can be
// replaced field by field through r.
func Decide(c Conflict, r Resolution, id string, at time.Time) (Ruling, Conflict, error) {
	did, err := gap.ParseDecisionID(id)
	if err != nil {
		return Ruling{}, c, fmt.Errorf("conflict: deciding %s: %w", c.IssueID, err)
	}
	if !c.Open() {
		return Ruling{}, c, fmt.Errorf("conflict: %s is %s, not open for a decision", c.IssueID, c.Status)
	}
	c = c.withOptions()
	text := strings.TrimSpace(r.Text)
	// D's alternative may come as the answer text or as a host's wording.
	if err := validateAnswer(ConflictQuestion(c), r.Option, cmp.Or(text, strings.TrimSpace(r.Decision))); err != nil {
		return Ruling{}, c, err
	}
	opt, _ := c.option(r.Option)
	is := c.Issue
	g := string(is.Gap)

	d := Ruling{
		ID: did.String(), Round: did.Round,
		IssueID: c.IssueID, Subject: c.Subject, Type: c.Type, Gap: is.Gap, Severity: is.Severity,
		ChosenOption: opt.Key,
		Constraints:  "None",
		DecidedBy:    cmp.Or(r.DecidedBy, decidedByUser),
		Timestamp:    at.UTC(),
		Rationale:    cmp.Or(text, "(none given)"),
	}
	if c.Type == explicit {
		d.EngineerPosition = c.EngineerPosition
		d.ReviewerSummary = firstSentence(c.ReviewerPosition)
		d.EngineerSummary = firstSentence(c.EngineerPosition)
	}
	switch opt.Key {
	case optionReviewer:
		d.Decision = "Adopt the Reviewer's position: " + oneLine(c.ReviewerPosition)
		d.EngineerAction = fmt.Sprintf("Implement the Reviewer's suggestion for %s: %s", c.IssueID, oneLine(c.ReviewerPosition))
		d.GapAction = gapAction(g, "%s must implement the chosen option before ACCEPTED.")
		d.NextState = gap.Open
	case optionEngineer:
		d.Decision = "Keep the Engineer's position: " + oneLine(c.EngineerPosition)
		if c.Type == implicitConverted {
			d.Decision = "Keep the current proposal unchanged (the Engineer's implicit position)."
		}
		d.EngineerAction = fmt.Sprintf("Keep your current approach for %s; no change is required.", c.IssueID)
		d.GapAction = gapAction(g, "%s may now transition to ACCEPTED")
		d.NextState = gap.Accepted
	case optionSynthesis:
		d.Decision = opt.Description
		d.EngineerAction = fmt.Sprintf("Implement the synthesis for %s: %s", c.IssueID, oneLine(opt.Description))
		d.GapAction = gapAction(g, "%s may proceed with this approach.")
		d.NextState = gap.Open
	case optionUserSpecified:
		alt := cmp.Or(strings.TrimSpace(r.Decision), text)
		d.Decision = alt
		d.Rationale = "User-specified alternative"
		d.EngineerAction = fmt.Sprintf("Implement the user's alternative for %s: %s", c.IssueID, oneLine(alt))
		d.GapAction = gapAction(g, "%s may proceed with the user's alternative.")
		d.NextState = gap.Open
	}
	d.Decision = cmp.Or(strings.TrimSpace(r.Decision), d.Decision)
	d.Rationale = cmp.Or(strings.TrimSpace(r.Rationale), d.Rationale)
	d.Constraints = cmp.Or(strings.TrimSpace(r.Constraints), d.Constraints)
	d.EngineerAction = cmp.Or(strings.TrimSpace(r.EngineerAction), d.EngineerAction)
	d.GapAction = cmp.Or(strings.TrimSpace(r.GapAction), d.GapAction)
	d.ReviewerSummary = cmp.Or(strings.TrimSpace(r.ReviewerSummary), d.ReviewerSummary)
	d.EngineerSummary = cmp.Or(strings.TrimSpace(r.EngineerSummary), d.EngineerSummary)

	c.Status = StatusResolved
	c.DecisionID = d.ID
	return d, c, nil
}

func gapAction(g, format string) string {
	if g == "" {
		return "No gap affected."
	}
	return fmt.Sprintf(format, g)
}

// optionLabel is the "Chosen Option" value: "C (Synthesis)".
func (d Ruling) optionLabel() string {
	switch d.ChosenOption {
	case optionReviewer:
		return "A (Reviewer)"
	case optionEngineer:
		return "B (Engineer)"
	case optionSynthesis:
		return "C (Synthesis)"
	case optionUserSpecified:
		return "D (User specifies)"
	case OptionWaive:
		return "Waive (issue closed)"
	}
	return d.ChosenOption
}

// typeLabel is the "Conflict Type" value.
func (d Ruling) typeLabel() string {
	switch d.Type {
	case explicit:
		return "Explicit DISAGREE"
	case implicitConverted:
		return "Implicit (converted via GAP-FLOW-013)"
	case implicitWaived:
		return "Implicit (waived via GAP-FLOW-013)"
	}
	return string(d.Type)
}

// renderDecision renders one decisions.md entry in §5's format (as its
// Example 1 shows it; Example 2's implicit entry has no Positions). Values
// spanning lines continue indented by two spaces.
func renderDecision(d Ruling) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### %s: %s\n\n", d.IssueID, d.Subject)
	fmt.Fprintf(&b, "**Conflict Type:** %s\n", d.typeLabel())
	fmt.Fprintf(&b, "**Gap Affected:** %s\n", orNotStated(string(d.Gap)))
	fmt.Fprintf(&b, "**Severity:** %s\n\n", rank(d.Severity))
	if d.ReviewerSummary != "" || d.EngineerSummary != "" {
		b.WriteString("**Positions:**\n")
		fmt.Fprintf(&b, "- Reviewer: %s\n", indentContinuation(orNotStated(d.ReviewerSummary)))
		fmt.Fprintf(&b, "- Engineer: %s\n\n", indentContinuation(orNotStated(d.EngineerSummary)))
	}
	b.WriteString("**Resolution:**\n")
	fmt.Fprintf(&b, "- **Chosen Option:** %s\n", d.optionLabel())
	fmt.Fprintf(&b, "- **Decision:** %s\n", indentContinuation(d.Decision))
	fmt.Fprintf(&b, "- **Rationale:** %s\n", indentContinuation(d.Rationale))
	fmt.Fprintf(&b, "- **Constraints:** %s\n\n", indentContinuation(d.Constraints))
	b.WriteString("**Action Required:**\n")
	fmt.Fprintf(&b, "- For Engineer: %s\n", indentContinuation(d.EngineerAction))
	fmt.Fprintf(&b, "- For Gap: %s\n\n", indentContinuation(d.GapAction))
	fmt.Fprintf(&b, "**Decided By:** %s\n", d.DecidedBy)
	fmt.Fprintf(&b, "**Timestamp:** %s\n", timestamp(d.Timestamp))
	return b.String()
}

// timestamp formats t as the spec's ISO 8601 timestamps
// (YYYY-MM-DDTHH:MM:SSZ, UTC).
func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05Z") }

// RenderDecisions renders the conflict part of decisions.md: for each round
// in order, "## Round {N} Conflict Resolutions" and its entries in ID order,
// each preceded by an HTML comment naming the decision ID (invisible when
// rendered, so entries keep §5's format, yet traceable). Empty input gives "".
func RenderDecisions(ds []Ruling) string {
	sorted := slices.Clone(ds)
	slices.SortStableFunc(sorted, func(a, b Ruling) int {
		ia, _ := gap.ParseDecisionID(a.ID)
		ib, _ := gap.ParseDecisionID(b.ID)
		return cmp.Or(cmp.Compare(a.Round, b.Round), cmp.Compare(ia.Number, ib.Number))
	})
	var b strings.Builder
	for i, d := range sorted {
		if i == 0 || d.Round != sorted[i-1].Round {
			if i > 0 {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "## Round %d Conflict Resolutions\n\n", d.Round)
		} else {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "<!-- %s -->\n", d.ID)
		b.WriteString(renderDecision(d))
	}
	return b.String()
}

// RecentDecisions returns the decisions to feed the Engineer prompt of
// round: those made in the previous round (§5: "from previous round"), in
// ID order.
func RecentDecisions(all []Ruling, round int) []Ruling {
	var out []Ruling
	for _, d := range all {
		if d.Round == round-1 {
			out = append(out, d)
		}
	}
	slices.SortStableFunc(out, func(a, b Ruling) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// rule is the 79-character double rule framing the resolution block.
const rule = "═══════════════════════════════════════════════════════════════════════════════"

// ResolutionBlock is §5's "CONFLICT RESOLUTIONS FROM PREVIOUS ROUND"
// section of the next Engineer prompt (build_engineer_prompt_with_decisions,
// without its leading blank line), "" when there are no decisions. The
// engine puts it, then a blank line, before the base prompt. Waivers are
// included: the Engineer learns the issue is closed.
func ResolutionBlock(decisions []Ruling) string {
	if len(decisions) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(rule + "\n")
	b.WriteString("                    CONFLICT RESOLUTIONS FROM PREVIOUS ROUND\n")
	b.WriteString(rule + "\n\n")
	b.WriteString("The following conflicts were resolved by the user. You MUST honor these decisions.\n\n")
	for _, d := range decisions {
		fmt.Fprintf(&b, "\n### %s: %s\n\n", d.IssueID, d.Subject)
		if d.ChosenOption == OptionWaive {
			fmt.Fprintf(&b, "**User Decision:** Waived - %s\n", d.Decision)
		} else {
			fmt.Fprintf(&b, "**User Decision:** Option %s - %s\n", d.ChosenOption, d.Decision)
		}
		fmt.Fprintf(&b, "**Rationale:** %s\n\n", d.Rationale)
		fmt.Fprintf(&b, "**Your Action Required:**\n%s\n\n---\n", d.EngineerAction)
	}
	b.WriteString("\n" + rule + "\n\n")
	b.WriteString("IMPORTANT: Do not re-argue decided conflicts. Honor the user's decision and\n")
	b.WriteString("proceed with implementation based on the chosen option.\n\n")
	b.WriteString("If you believe the decision creates new issues, note them as NEW gaps, not\n")
	b.WriteString("as disagreement with the decided conflict.\n")
	return b.String()
}
