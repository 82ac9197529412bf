package exemplar

import (
	"strconv"
	"strings"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/validate"
)

// Retry outcomes as the Example Attachment Log writes them. An entry whose
// retry has not been validated yet has OutcomePending. Any outcome starting
// with "Success" (round 9 writes "Success on retry") counts as a success in
// the statistics.
const (
	OutcomeSuccess = "Success"
	OutcomeFailed  = "Failed"
	OutcomePending = ""
)

// LogEntry records one example attachment (GAP-FLOW-008 §8).
type LogEntry struct {
	Round       int
	Role        gap.Role // gap.Engineer or gap.Reviewer
	Retry       int      // 1 for the first retry
	FailureType validate.FailureType
	Tier        int
	// Source is written after "Example Source:"; NewLogEntry fills in the
	// spec's wording ("Tier 1 (Canonical from workflow spec)", "Tier 2
	// (Round 3 reviewer.md)", "Tier 3 (Template)"). When empty, RenderLog
	// derives it from Tier.
	Source              string
	Chars, Tokens       int // size of the attached example
	TruncatedFromTokens int // size before truncation; 0 when not truncated
	TruncatedFromChars  int
	Outcome             string // OutcomeSuccess, OutcomeFailed or OutcomePending
}

// NewLogEntry records sel as attached to retry number retry of role in
// round, outcome pending.
func NewLogEntry(round int, role gap.Role, retry int, failureType validate.FailureType, sel Selection) LogEntry {
	return LogEntry{
		Round:               round,
		Role:                normalizeRole(role),
		Retry:               retry,
		FailureType:         failureType,
		Tier:                sel.Tier,
		Source:              logSource(sel.Tier, sel.HistoryRound, role),
		Chars:               sel.Chars,
		Tokens:              sel.Tokens,
		TruncatedFromTokens: sel.TruncatedFromTokens,
		TruncatedFromChars:  sel.TruncatedFromChars,
	}
}

// logSource is the §8 wording of an example's source.
func logSource(tier, historyRound int, role gap.Role) string {
	switch tier {
	case TierCanonical:
		return "Tier 1 (Canonical from workflow spec)"
	case TierSession:
		if historyRound > 0 {
			return "Tier 2 (Round " + strconv.Itoa(historyRound) + " " + string(normalizeRole(role)) + ".md)"
		}
		return "Tier 2 (Session)"
	case TierTemplate:
		return "Tier 3 (Template)"
	}
	return "None (no example attached)"
}

// RenderLog writes the "## Example Attachment Log" section of status.md in
// the format of GAP-FLOW-008 §8: one "### Round N - Role Retry K"
// subsection per entry, in the order given, then the "### Example Source
// Statistics" table with a row per tier. Uses counts every entry of the
// tier; Success Rate is the share of decided (non-pending) retries that
// succeeded, rounded to a whole percent, "-" when none is decided. Entries
// without an example (TierNone) are listed but not in the table.
func RenderLog(entries []LogEntry) string {
	var b strings.Builder
	b.WriteString("## Example Attachment Log\n\n")
	if len(entries) == 0 {
		b.WriteString("No examples attached.\n\n")
	}
	for _, e := range entries {
		source := e.Source
		if source == "" {
			source = logSource(e.Tier, 0, e.Role)
		}
		truncated := "No"
		switch {
		case e.TruncatedFromChars > 0:
			truncated = "Yes (from " + thousands(e.TruncatedFromChars) + " chars)"
		case e.TruncatedFromTokens > 0:
			truncated = "Yes (from " + thousands(e.TruncatedFromTokens) + " tokens)"
		}
		outcome := e.Outcome
		if outcome == OutcomePending {
			outcome = "Pending"
		}
		b.WriteString("### Round " + strconv.Itoa(e.Round) + " - " + e.Role.Title() + " Retry " + strconv.Itoa(e.Retry) + "\n")
		b.WriteString("- **Failure Type:** " + string(e.FailureType) + "\n")
		b.WriteString("- **Example Source:** " + source + "\n")
		b.WriteString("- **Example Size:** " + thousands(e.Chars) + " chars (" + thousands(e.Tokens) + " tokens)\n")
		b.WriteString("- **Truncated:** " + truncated + "\n")
		b.WriteString("- **Retry Outcome:** " + outcome + "\n\n")
	}
	b.WriteString("### Example Source Statistics\n")
	b.WriteString("| Source | Uses | Success Rate |\n")
	b.WriteString("|--------|------|--------------|\n")
	for _, row := range []struct {
		tier  int
		label string
	}{
		{TierCanonical, "Tier 1 (Canonical)"},
		{TierSession, "Tier 2 (Session)"},
		{TierTemplate, "Tier 3 (Template)"},
	} {
		uses, decided, succeeded := 0, 0, 0
		for _, e := range entries {
			if e.Tier != row.tier {
				continue
			}
			uses++
			if e.Outcome != OutcomePending {
				decided++
				if strings.HasPrefix(e.Outcome, OutcomeSuccess) {
					succeeded++
				}
			}
		}
		rate := "-"
		if decided > 0 {
			rate = strconv.Itoa((succeeded*200+decided)/(2*decided)) + "%"
		}
		b.WriteString("| " + row.label + " | " + strconv.Itoa(uses) + " | " + rate + " |\n")
	}
	return b.String()
}
