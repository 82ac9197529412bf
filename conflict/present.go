package conflict

import (
	"fmt"
	"strings"

	"github.com/refine-spec/refine/gap"
)

// present renders a conflict in §4's presentation format: the
// "### Conflict: ISSUE-…" block with the Reviewer's position (A), the
// Engineer's (B), the synthesis (C) and the CRITICAL-only D, each position
// quoted verbatim, the recommended option marked "[RECOMMENDED]" (as in
// Example 2), then "### Options Summary" with its table, and for CRITICAL
// issues the recommendation note. A converted implicit conflict states that
// the Engineer's position was not stated (Example 2) and carries §6's
// presentation note; a soft match carries its confirmation note.
func present(c Conflict) string {
	c = c.withOptions()
	var b strings.Builder
	is := c.Issue
	sep := func() { b.WriteString("---\n\n") }
	mark := func(key string) string {
		if o, ok := c.option(key); ok && o.Recommended {
			return " [RECOMMENDED]"
		}
		return ""
	}

	fmt.Fprintf(&b, "### Conflict: %s\n\n", c.IssueID)
	fmt.Fprintf(&b, "**Subject:** %s\n", oneLine(c.Subject))
	fmt.Fprintf(&b, "**Severity:** %s\n", rank(is.Severity))
	fmt.Fprintf(&b, "**Gap Affected:** %s\n\n", orNotStated(string(is.Gap)))
	sep()

	fmt.Fprintf(&b, "**Reviewer Position (Option A):**%s\n", mark(optionReviewer))
	fmt.Fprintf(&b, "%s\n\n", quoted(c.ReviewerPosition))
	fmt.Fprintf(&b, "**Impact if ignored:** %s\n\n", quotedOrNotStated(is.Impact))
	sep()

	fmt.Fprintf(&b, "**Engineer Position (Option B):**%s\n", mark(optionEngineer))
	if c.Type == implicitConverted {
		fmt.Fprintf(&b, "Not explicitly stated. Engineer did not address this %s issue in Round %d.\n\n", rank(is.Severity), c.Round)
	} else {
		fmt.Fprintf(&b, "%s\n\n", quotedOrNotStated(c.EngineerPosition))
		if r := strings.TrimSpace(c.EngineerRationale); r != "" {
			fmt.Fprintf(&b, "**Rationale:** %s\n\n", r)
		}
	}
	if c.PresentationNote != "" {
		fmt.Fprintf(&b, "%s\n\n", strings.TrimSpace(c.PresentationNote))
	}
	sep()

	if o, ok := c.option(optionSynthesis); ok {
		fmt.Fprintf(&b, "**Synthesized Option (Option C):**%s\n", mark(optionSynthesis))
		fmt.Fprintf(&b, "%s\n\n", strings.TrimSpace(o.Description))
		fmt.Fprintf(&b, "**Trade-off:** %s\n\n", o.TradeOff)
		sep()
	}
	if _, ok := c.option(optionUserSpecified); ok {
		fmt.Fprintf(&b, "**Option D: User Specifies Alternative**%s\n", mark(optionUserSpecified))
		b.WriteString("(Available for CRITICAL severity)\n\n")
		sep()
	}

	b.WriteString("### Options Summary\n\n")
	b.WriteString("| Option | Position | Trade-off | Recommended? |\n")
	b.WriteString("|--------|----------|-----------|--------------|\n")
	rec := c.recommended()
	for _, o := range c.Options {
		trade := o.TradeOff
		if o.Key == optionUserSpecified {
			trade = "Maximum flexibility" // §4's summary wording for D
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", o.Key, o.Position, cell(trade), recommendedCell(c, o, rec))
	}
	if is.Severity == gap.Critical {
		b.WriteString("\n**Note:** For CRITICAL severity, Option A (Reviewer) is recommended unless Engineer's rationale addresses safety/correctness concerns.\n")
	}
	if rec == "" {
		fmt.Fprintf(&b, "\n**Note:** %s\n", noRecommendation(c))
	}
	return b.String()
}

// recommendedCell is the Options Summary's "Recommended?" for o, with the
// rule of §4/§7 that makes it so; rec is the recommended key, if any.
func recommendedCell(c Conflict, o ConflictOption, rec string) string {
	switch {
	case o.Recommended && o.Key == optionReviewer:
		return "Yes (CRITICAL)"
	case o.Recommended && o.Key == optionSynthesis:
		return "Yes (addresses both concerns)"
	case o.Recommended && o.Key == optionEngineer:
		return "Yes (LOW: resolves to the Engineer)"
	case o.Recommended:
		return "Yes"
	case rec == "" && o.Key == optionReviewer:
		return "- (unattended default)"
	}
	return "-"
}

// noRecommendation says why no option is recommended, by §4/§7's rules.
func noRecommendation(c Conflict) string {
	why := "no option addresses both concerns, so none is recommended"
	// (LOW always has one: B.)
	switch c.Issue.Severity {
	case gap.High:
		why = "HIGH severity has no default recommendation (GAP-FLOW-006 §7): the choice is yours"
	case gap.Critical:
		why = "the Engineer's rationale raises safety or correctness, so Option A is not recommended by default, and no synthesis addresses both concerns"
	}
	return why + "; an unattended run takes Option A, so the Reviewer's concern is not dropped on the Engineer's word."
}

func quotedOrNotStated(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(not stated)"
	}
	return quoted(s)
}
