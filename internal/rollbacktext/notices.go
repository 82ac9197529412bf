package rollbacktext

import (
	"fmt"
	"strings"
	"time"

	"github.com/refine-spec/refine/internal/rollbackfmt"
	"github.com/refine-spec/refine/rollback"
)

// AutoRetry is the content of the "## Round {N} Auto-Retry" status block.
type AutoRetry struct {
	Round int
	// Attempt is the rollback number (1 for an automatic retry) and
	// Threshold the rollback number at which the user is prompted (2 in
	// AUTO_RETRY, where only a round's first rollback is automatic; <= 0
	// means 2).
	Attempt, Threshold int
	// FailurePattern is the detected pattern as printed, e.g.
	// "MISSING_SECTIONS (Trade-offs absent)"; see rollback.Detection.FailurePattern.
	FailurePattern string
	// Adjustments are the one-line summaries of the adjustments applied.
	Adjustments []string
	// Outcome, once known, replaces the "not prompted" note ("Successful on retry").
	Outcome string
}

// AutoRetryBlock renders the status.md block of an automatic retry. While
// the retry is pending it is the spec's protocol form (step 3):
//
//	## Round {N} Auto-Retry
//
//	**Attempt:** 1 of 2 before user prompt
//	**Failure Pattern:** {detected_pattern}
//	**Auto-Adjustments Applied:**
//	- {adjustment_1}
//
//	**Note:** User not prompted. Second failure will trigger interactive mode.
//
// and once Outcome is set it is Example 1's compact form, ending in
// "**Outcome:** …" instead of the note.
func AutoRetryBlock(a AutoRetry) string {
	threshold := a.Threshold
	if threshold <= 0 {
		threshold = rollback.DefaultAnalysisThreshold
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## Round %d Auto-Retry\n", a.Round)
	if a.Outcome == "" {
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "**Attempt:** %d of %d before user prompt\n", a.Attempt, threshold)
	fp := rollbackfmt.OneLine(a.FailurePattern)
	if fp == "" {
		fp = "None detected"
	}
	fmt.Fprintf(&b, "**Failure Pattern:** %s\n", fp)
	b.WriteString("**Auto-Adjustments Applied:**\n")
	for _, adj := range a.Adjustments {
		fmt.Fprintf(&b, "- %s\n", rollbackfmt.OneLine(adj))
	}
	if len(a.Adjustments) == 0 {
		b.WriteString("- None\n")
	}
	if a.Outcome != "" {
		fmt.Fprintf(&b, "**Outcome:** %s\n", rollbackfmt.OneLine(a.Outcome))
		return b.String()
	}
	fmt.Fprintf(&b, "\n**Note:** User not prompted. %s failure will trigger interactive mode.\n", rollbackfmt.Capitalize(rollbackfmt.Ordinal(a.Attempt+1)))
	return b.String()
}

// DecisionsNotice is the block appended to the restored decisions.md for
// rolled-back round n, as the spec's restore protocol shows it, naming the
// file's place inside the round's archive folder:
//
//	## Rollback Notice - Round {N}
//
//	Round {N} was rolled back at {timestamp}.
//	Decisions from round {N} have been archived to:
//	  round_{N:03d}_rolled_back/decisions_from_round_{N}.md
//
//	Reason: {rollback_reason}
func DecisionsNotice(n int, at time.Time, reason string) string {
	return rollbackfmt.DecisionsNotice(n, at, reason, rollback.ArchiveFolder(n)+"/"+rollback.DecisionsFileName(n))
}

// DecisionsNoticeIn is DecisionsNotice naming where the archived decisions
// really are: the file inside the round's archive, for example
//
//	Decisions from round 5 have been archived to:
//	  round_005_rolled_back_1.tar.gz (round_005_rolled_back/decisions_from_round_5.md)
func DecisionsNoticeIn(n int, at time.Time, reason, archive string) string {
	if archive == "" {
		return DecisionsNotice(n, at, reason)
	}
	return rollbackfmt.DecisionsNotice(n, at, reason, fmt.Sprintf("%s (%s/%s)", archive, rollback.ArchiveFolder(n), rollback.DecisionsFileName(n)))
}

// StatusNotice is the block appended to the restored status.md; see
// rollbackfmt.StatusNotice, which package rollback appends when it executes
// a plan.
func StatusNotice(rounds []int, attempts []int, to int, at time.Time, reason string, archives []string) string {
	return rollbackfmt.StatusNotice(rounds, attempts, to, at, reason, archives)
}
