package rollbacktext

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/refine-spec/refine/internal/rollbackfmt"
	"github.com/refine-spec/refine/rollback"
)

// ReportInput is what the "Rollback Analysis" report is built from.
type ReportInput struct {
	Round int
	// Attempt is the rollback number of the round (1 for the first).
	Attempt int
	// Reason is the user's stated reason or the validation failure.
	Reason string
	At     time.Time
	// Detection is DetectPatterns over the rolled-back round's outputs.
	Detection rollback.Detection
	// Previous are the patterns of the round's earlier rollbacks, oldest
	// first (from History.ForRound(round)[i].Patterns).
	Previous [][]rollback.Pattern
	// Adjustments are the recommended adjustments; nil means Recommend(Detection).
	Adjustments []rollback.Adjustment
}

// reportWidth is the line width "Add to prompt" lines wrap at (indent
// included), which reproduces the spec's layout of the report.
const reportWidth = 82

// AnalysisReport renders the spec's "## Rollback Analysis - Round {N}"
// report, generated after every rollback and archived as analysis.md:
// Failure Summary; Content Analysis (What Was Produced, Structural
// Completeness); Pattern Detection (Detected Patterns, Historical
// Comparison); Recommended Adjustments; Adjustment Confidence.
func AnalysisReport(in ReportInput) string {
	d := in.Detection
	adjs := in.Adjustments
	if adjs == nil {
		adjs = rollback.Recommend(d)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## Rollback Analysis - Round %d\n\n", in.Round)

	b.WriteString("### Failure Summary\n")
	reason := rollbackfmt.OneLine(in.Reason)
	if reason == "" {
		reason = "Not stated"
	}
	fmt.Fprintf(&b, "- **Rollback Reason:** %s\n", reason)
	fmt.Fprintf(&b, "- **Attempt Number:** %d of this round\n", in.Attempt)
	fmt.Fprintf(&b, "- **Timestamp:** %s\n\n", rollbackfmt.FormatTimestamp(in.At))

	b.WriteString("### Content Analysis\n\n")
	b.WriteString("#### What Was Produced\n")
	b.WriteString("| Gap | Addressed | Sections Present | Example Count |\n")
	b.WriteString("|-----|-----------|------------------|---------------|\n")
	if len(d.Gaps) == 0 {
		b.WriteString("| (none) | No | None | 0 |\n")
	}
	for _, g := range d.Gaps {
		secs := "None"
		if len(g.Sections) > 0 {
			secs = strings.Join(g.Sections, ", ")
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d |\n", g.Gap, g.Addressed, rollbackfmt.Cell(secs), g.Examples)
	}
	b.WriteString("\n#### Structural Completeness\n")
	b.WriteString("| Check | Status |\n|-------|--------|\n")
	for _, c := range d.Checks {
		fmt.Fprintf(&b, "| %s | %s |\n", c.Name, c.Status)
	}

	b.WriteString("\n### Pattern Detection\n\n")
	b.WriteString("#### Detected Patterns\n")
	if len(d.Findings) == 0 {
		b.WriteString("- None detected\n")
	}
	for _, f := range d.Findings {
		fmt.Fprintf(&b, "- **%s:** %s\n", f.Pattern, rollbackfmt.OneLine(f.Detail))
	}
	b.WriteString("\n#### Historical Comparison\n")
	writeHistorical(&b, d.Patterns(), in.Previous)

	b.WriteString("\n### Recommended Adjustments\n\n")
	if len(adjs) == 0 {
		b.WriteString("No pattern-specific adjustments. Consider providing additional context for the retry.\n")
	} else {
		b.WriteString("Based on detected patterns:\n")
	}
	for i, a := range adjs {
		fmt.Fprintf(&b, "\n%d. **For %s:**\n", i+1, a.Pattern)
		if a.Prompt != "" {
			fmt.Fprintf(&b, "   %s\n", rollbackfmt.Wrap(`Add to prompt: "`+rollbackfmt.OneLine(a.Prompt)+`"`, reportWidth-3, "   "))
		}
		if len(a.Attach) > 0 {
			names := make([]string, len(a.Attach))
			for j, at := range a.Attach {
				names[j] = attachmentName(at)
			}
			fmt.Fprintf(&b, "   Attach to prompt: %s.\n", strings.Join(names, ", "))
		}
	}

	b.WriteString("\n### Adjustment Confidence\n")
	if len(adjs) == 0 {
		b.WriteString("- None\n")
	}
	for i, a := range adjs {
		fmt.Fprintf(&b, "- Adjustment %d: %s (%s)\n", i+1, a.Confidence, a.Why)
	}
	return b.String()
}

func attachmentName(a rollback.Attachment) string {
	switch a {
	case rollback.AttachGapList:
		return "the session's gap list"
	case rollback.AttachResolvedGaps:
		return "a summary of related resolved gaps"
	case rollback.AttachGlossary:
		return "a glossary of the spec's terms"
	}
	return string(a)
}

// writeHistorical renders the "Historical Comparison" table over the union
// of this attempt's and earlier attempts' patterns, in pattern order.
func writeHistorical(b *strings.Builder, now []rollback.Pattern, previous [][]rollback.Pattern) {
	var union []rollback.Pattern
	add := func(ps []rollback.Pattern) {
		for _, p := range ps {
			if !slices.Contains(union, p) {
				union = append(union, p)
			}
		}
	}
	add(now)
	for _, ps := range previous {
		add(ps)
	}
	order := rollback.Patterns()
	slices.SortStableFunc(union, func(a, b rollback.Pattern) int { return slices.Index(order, a) - slices.Index(order, b) })
	if len(union) == 0 {
		b.WriteString("No patterns detected in this or earlier attempts.\n")
		return
	}
	b.WriteString("| Pattern | This Attempt | Previous Attempts |\n")
	b.WriteString("|---------|--------------|-------------------|\n")
	for i, p := range union {
		this := "No"
		if slices.Contains(now, p) {
			this = "Yes"
		}
		var prev string
		switch {
		case len(previous) == 0 && i == 0:
			prev = "N/A (first attempt)"
		case len(previous) == 0:
			prev = "N/A"
		default:
			var seen []int
			for j, ps := range previous {
				if slices.Contains(ps, p) {
					seen = append(seen, j+1)
				}
			}
			switch len(seen) {
			case 0:
				prev = "No"
			case 1:
				prev = fmt.Sprintf("Yes (attempt %d)", seen[0])
			default:
				prev = fmt.Sprintf("Yes (attempts %s)", rollbackfmt.JoinInts(seen))
			}
		}
		fmt.Fprintf(b, "| %s | %s | %s |\n", p, this, prev)
	}
}
