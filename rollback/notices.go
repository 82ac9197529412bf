package rollback

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// DecisionsNotice is the block appended to the restored decisions.md for
// rolled-back round n, exactly as the spec's restore protocol shows:
//
//	## Rollback Notice - Round {N}
//
//	Round {N} was rolled back at {timestamp}.
//	Decisions from round {N} have been archived to:
//	  round_{N:03d}_rolled_back/decisions_from_round_{N}.md
//
//	Reason: {rollback_reason}
//
// The path is the file's place inside the round's archive folder.
func DecisionsNotice(n int, at time.Time, reason string) string {
	return fmt.Sprintf("## Rollback Notice - Round %d\n\n"+
		"Round %d was rolled back at %s.\n"+
		"Decisions from round %d have been archived to:\n"+
		"  %s/%s\n\n"+
		"Reason: %s\n",
		n, n, FormatTimestamp(at), n, ArchiveFolder(n), DecisionsFileName(n), oneLine(reason))
}

// StatusNotice is the block appended to the restored status.md. The spec
// asks for a rollback notice without fixing its text; this one mirrors the
// decisions notice. archives are the archive names, in the order created.
// For one round:
//
//	## Rollback Notice - Round 5
//
//	Round 5 was rolled back at 2026-01-12T14:30:00Z (rollback 1 of this round).
//	Restored status.md, decisions.md and state.json from the Round 4 backups.
//	Archived to:
//	  round_005_rolled_back_1.tar.gz
//
//	Reason: Proposals too abstract
//
// and for several ("multi-rollback notice"), headed "## Rollback Notice -
// Rounds 6-8" with "Rounds 6, 7, 8 were rolled back to Round 5 at …".
func StatusNotice(rounds []int, attempts []int, to int, at time.Time, reason string, archives []string) string {
	var b strings.Builder
	ts := FormatTimestamp(at)
	if len(rounds) == 1 {
		fmt.Fprintf(&b, "## Rollback Notice - Round %d\n\n", rounds[0])
		fmt.Fprintf(&b, "Round %d was rolled back at %s", rounds[0], ts)
		if len(attempts) == 1 {
			fmt.Fprintf(&b, " (rollback %d of this round)", attempts[0])
		}
		b.WriteString(".\n")
	} else {
		lo, hi := rounds[0], rounds[0]
		for _, r := range rounds {
			lo, hi = min(lo, r), max(hi, r)
		}
		fmt.Fprintf(&b, "## Rollback Notice - Rounds %d-%d\n\n", lo, hi)
		fmt.Fprintf(&b, "Rounds %s were rolled back to Round %d at %s.\n", joinInts(ascending(rounds)), to, ts)
	}
	fmt.Fprintf(&b, "Restored status.md, decisions.md and state.json from the Round %d backups.\n", to)
	b.WriteString("Archived to:\n")
	for _, a := range archives {
		fmt.Fprintf(&b, "  %s\n", a)
	}
	fmt.Fprintf(&b, "\nReason: %s\n", oneLine(reason))
	return b.String()
}

func ascending(ns []int) []int {
	out := slices.Clone(ns)
	slices.Sort(out)
	return out
}

// AutoRetry is the content of the "## Round {N} Auto-Retry" status block.
type AutoRetry struct {
	Round int
	// Attempt is the rollback number (1 for an automatic retry) and
	// Threshold the rollback number at which the user is prompted (2 in
	// AUTO_RETRY, where only a round's first rollback is automatic; <= 0
	// means 2).
	Attempt, Threshold int
	// FailurePattern is the detected pattern as printed, e.g.
	// "MISSING_SECTIONS (Trade-offs absent)"; see FailurePattern.
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
		threshold = DefaultAnalysisThreshold
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## Round %d Auto-Retry\n", a.Round)
	if a.Outcome == "" {
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "**Attempt:** %d of %d before user prompt\n", a.Attempt, threshold)
	fp := oneLine(a.FailurePattern)
	if fp == "" {
		fp = "None detected"
	}
	fmt.Fprintf(&b, "**Failure Pattern:** %s\n", fp)
	b.WriteString("**Auto-Adjustments Applied:**\n")
	for _, adj := range a.Adjustments {
		fmt.Fprintf(&b, "- %s\n", oneLine(adj))
	}
	if len(a.Adjustments) == 0 {
		b.WriteString("- None\n")
	}
	if a.Outcome != "" {
		fmt.Fprintf(&b, "**Outcome:** %s\n", oneLine(a.Outcome))
		return b.String()
	}
	fmt.Fprintf(&b, "\n**Note:** User not prompted. %s failure will trigger interactive mode.\n", capitalize(ordinal(a.Attempt+1)))
	return b.String()
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
	return fmt.Sprintf("## Rollback Notice - Round %d\n\n"+
		"Round %d was rolled back at %s.\n"+
		"Decisions from round %d have been archived to:\n"+
		"  %s (%s/%s)\n\n"+
		"Reason: %s\n",
		n, n, FormatTimestamp(at), n, archive, ArchiveFolder(n), DecisionsFileName(n), oneLine(reason))
}
