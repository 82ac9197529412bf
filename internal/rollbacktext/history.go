package rollbacktext

import (
	"fmt"
	"strings"

	"github.com/refine-spec/refine/internal/rollbackfmt"
	"github.com/refine-spec/refine/rollback"
)

// RenderRecord renders one record as the spec's "### Round 5 - Rollback 1"
// entry.
func RenderRecord(r rollback.Record) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### Round %d - Rollback %d\n", r.Round, r.Attempt)
	fmt.Fprintf(&b, "- **Timestamp:** %s\n", rollbackfmt.FormatTimestamp(r.At))
	mode := string(r.Mode)
	if r.Attempt >= 2 {
		mode += fmt.Sprintf(" (%s attempt)", rollbackfmt.Ordinal(r.Attempt))
	}
	fmt.Fprintf(&b, "- **Mode:** %s\n", mode)
	if r.Target < r.Round-1 {
		fmt.Fprintf(&b, "- **Rolled Back To:** Round %d\n", r.Target)
	}
	reason := rollbackfmt.OneLine(r.Reason)
	if len(r.Patterns) > 0 {
		ps := make([]string, len(r.Patterns))
		for i, p := range r.Patterns {
			ps[i] = string(p)
		}
		word := "pattern"
		if len(ps) > 1 {
			word = "patterns"
		}
		reason = strings.TrimSpace(fmt.Sprintf("%s (detected %s: %s)", reason, word, strings.Join(ps, ", ")))
	}
	fmt.Fprintf(&b, "- **Reason:** %s\n", reason)
	if len(r.Adjustments) > 0 {
		b.WriteString("- **Adjustments Applied:**\n")
		for _, a := range r.Adjustments {
			fmt.Fprintf(&b, "  - %s\n", rollbackfmt.OneLine(a))
		}
	}
	if r.Analysis != nil {
		b.WriteString("- **Root Cause Analysis:** Performed\n")
		fmt.Fprintf(&b, "  - Detected: %s\n", rollbackfmt.OneLine(r.Analysis.Detected))
		fmt.Fprintf(&b, "  - Recommendation: %s\n", rollbackfmt.OneLine(r.Analysis.Recommendation))
	}
	if d := rollbackfmt.OneLine(r.UserDecision); d != "" {
		fmt.Fprintf(&b, "- **User Decision:** %s\n", d)
	}
	fmt.Fprintf(&b, "- **Archive:** %s\n", r.Archive)
	outcome := rollbackfmt.OneLine(r.Outcome)
	if outcome == "" {
		outcome = "Pending"
	}
	fmt.Fprintf(&b, "- **Outcome:** %s\n", outcome)
	return b.String()
}

// RenderSummary renders the "### Session Rollback Summary" table.
func RenderSummary(s rollback.Summary) string {
	var b strings.Builder
	b.WriteString("### Session Rollback Summary\n")
	b.WriteString("| Metric | Value |\n|--------|-------|\n")
	fmt.Fprintf(&b, "| Total Rollbacks | %d |\n", s.Total)
	fmt.Fprintf(&b, "| Successful Retries | %d |\n", s.SuccessfulRetries)
	fmt.Fprintf(&b, "| Root Cause Analyses | %d |\n", s.Analyses)
	splits := fmt.Sprint(len(s.Splits))
	if len(s.Splits) > 0 {
		parts := make([]string, len(s.Splits))
		for i, sp := range s.Splits {
			parts[i] = fmt.Sprintf("%s -> %s", sp.Parent, rollbackfmt.Plural(len(sp.Children), "sub-gap", "sub-gaps"))
		}
		splits += " (" + strings.Join(parts, ", ") + ")"
	}
	fmt.Fprintf(&b, "| Gaps Split | %s |\n", splits)
	fmt.Fprintf(&b, "| Remaining Rollbacks | %d of %d |\n", s.Remaining, s.Limit)
	return b.String()
}

// RenderHistory renders status.md's "## Rollback History" section: every
// record, oldest first, then the Session Rollback Summary.
func RenderHistory(h rollback.History, limit int) string {
	var b strings.Builder
	b.WriteString("## Rollback History\n\n")
	if len(h.Records) == 0 {
		b.WriteString("No rollbacks in this session.\n\n")
	}
	for _, r := range h.Records {
		b.WriteString(RenderRecord(r))
		b.WriteString("\n")
	}
	b.WriteString(RenderSummary(h.Summarize(limit)))
	return b.String()
}
