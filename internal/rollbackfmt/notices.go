package rollbackfmt

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// DecisionsNotice is the block appended to the restored decisions.md for
// rolled-back round n, as the spec's restore protocol shows it:
//
//	## Rollback Notice - Round {N}
//
//	Round {N} was rolled back at {timestamp}.
//	Decisions from round {N} have been archived to:
//	  {location}
//
//	Reason: {rollback_reason}
//
// location says where the archived decisions are, for example
// "round_005_rolled_back/decisions_from_round_5.md" (the file's place inside
// the round's archive folder) or
// "round_005_rolled_back_1.tar.gz (round_005_rolled_back/decisions_from_round_5.md)".
func DecisionsNotice(n int, at time.Time, reason, location string) string {
	return fmt.Sprintf("## Rollback Notice - Round %d\n\n"+
		"Round %d was rolled back at %s.\n"+
		"Decisions from round %d have been archived to:\n"+
		"  %s\n\n"+
		"Reason: %s\n",
		n, n, FormatTimestamp(at), n, location, OneLine(reason))
}

// StatusNotice is the block appended to the restored status.md. The spec
// asks for a rollback notice without fixing its text; this one mirrors the
// decisions notice. rounds are the undone rounds, attempts their rollback
// numbers, to the round restored to, and archives the archive names, in the
// order created. For one round:
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
		fmt.Fprintf(&b, "Rounds %s were rolled back to Round %d at %s.\n", JoinInts(ascending(rounds)), to, ts)
	}
	fmt.Fprintf(&b, "Restored status.md, decisions.md and state.json from the Round %d backups.\n", to)
	b.WriteString("Archived to:\n")
	for _, a := range archives {
		fmt.Fprintf(&b, "  %s\n", a)
	}
	fmt.Fprintf(&b, "\nReason: %s\n", OneLine(reason))
	return b.String()
}

// ascending returns a sorted copy of ns.
func ascending(ns []int) []int {
	out := slices.Clone(ns)
	slices.Sort(out)
	return out
}
