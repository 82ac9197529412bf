package convergence

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"

	"github.com/refine-spec/refine/gap"
)

// Outcome is where a session stands after a termination check
// (docs/workflow.md#outcomes), and how a session ended or why it stopped
// for now (the root package's OutcomeStatus is this type).
type Outcome string

// Terminal outcomes end the session; PAUSED, FAILED, CONTINUE and RUNNING
// do not.
const (
	// Complete: zero open gaps, last review APPROVE, no unresolved
	// HIGH/CRITICAL conflict.
	Complete Outcome = "COMPLETE"
	// GoodEnough: the good-enough criteria hold and the user (or the
	// automated policy) accepted the early-termination offer.
	GoodEnough Outcome = "GOOD_ENOUGH"
	// UserApproved: the user accepted the spec with known gaps although the
	// good-enough criteria did not hold.
	UserApproved Outcome = "USER_APPROVED"
	// MaxRounds: the round limit was reached before completion.
	MaxRounds Outcome = "MAX_ROUNDS"
	// StallExit: the user or an automated policy stopped on divergence.
	StallExit Outcome = "STALL_EXIT"
	// Abandoned: the user gave up on the session.
	Abandoned Outcome = "ABANDONED"
	// Paused: waiting for the user; resumable.
	Paused Outcome = "PAUSED"
	// Failed: a fatal error stopped the step; state is intact and resumable.
	Failed Outcome = "FAILED"
	// Continue: run another round (or ask what the Verdict says to ask first).
	Continue Outcome = "CONTINUE"
	// Running: a session being driven, as a host reports it; Decide never
	// returns it.
	Running Outcome = "RUNNING"
)

// Terminal reports whether o ends the session.
func (o Outcome) Terminal() bool {
	switch o {
	case Complete, GoodEnough, UserApproved, MaxRounds, StallExit, Abandoned:
		return true
	}
	return false
}

// Valid reports whether o is one of the nine outcomes a termination check
// can reach (RUNNING is not one).
func (o Outcome) Valid() bool { return o.Terminal() || o == Paused || o == Failed || o == Continue }

// Choice is a standing answer from the user, or from the automated policy,
// that bears on termination. Its values are the Option keys of the
// questions in this package where the two coincide; Decide treats any other
// value (e.g. "narrow_scope", which changes the ledger instead) as NoChoice.
type Choice string

// The choices Decide understands.
const (
	// NoChoice: nothing decided; the tree decides alone.
	NoChoice Choice = ""
	// ChoiceContinue: keep refining (declined the early-termination offer).
	ChoiceContinue Choice = "continue"
	// ChoiceAccept: "Accept as complete" from the early-termination offer:
	// GOOD_ENOUGH while the criteria hold, otherwise USER_APPROVED.
	ChoiceAccept Choice = "accept"
	// ChoiceForceComplete: "Force complete" from the divergence question:
	// USER_APPROVED.
	ChoiceForceComplete Choice = "force_complete"
	// ChoicePause: save state and stop for now (PAUSED).
	ChoicePause Choice = "pause"
	// ChoiceAbandon: give up (ABANDONED).
	ChoiceAbandon Choice = "abandon"
	// ChoiceStop: stop on divergence without approving (STALL_EXIT), for
	// hosts whose automated policy ends stalled runs.
	ChoiceStop Choice = "stop"
)

// ConflictBlock counts unresolved conflicts of the severities that block
// termination (GAP-FLOW-006 §8). MEDIUM/LOW conflicts never block; list them
// as known limitations in the summary instead.
type ConflictBlock struct {
	UnresolvedCritical int `json:"unresolved_critical"`
	UnresolvedHigh     int `json:"unresolved_high"`
}

// Input is everything the termination check looks at.
type Input struct {
	// Round is the number of rounds completed.
	Round int
	// MaxRounds is the round limit; 0 or less means none.
	MaxRounds int
	// Ledger holds the gaps; nil is an empty ledger.
	Ledger *gap.Ledger
	// LastReviewApproved: the last Reviewer verdict was APPROVE.
	LastReviewApproved bool
	// Conflicts are the unresolved HIGH/CRITICAL conflicts.
	Conflicts ConflictBlock
	// Choice is the standing user or policy answer, if any.
	Choice Choice
	// HighConflictsAcknowledged: the user explicitly acknowledged the
	// unresolved HIGH conflicts, which USER_APPROVED requires.
	HighConflictsAcknowledged bool
	// PendingQuestions counts questions deferred by the Asker.
	PendingQuestions int
	// Failure, when not empty, is the fatal error that stopped the step.
	Failure string
	// OfferedOpenSet is Verdict.OpenSet as stored when the early-
	// termination offer was last made ("" if never).
	OfferedOpenSet string
}

// Verdict is the result of a termination check.
type Verdict struct {
	Outcome Outcome
	// Reason explains the outcome in one sentence for logs and summaries.
	Reason string
	// OfferEarlyTermination: ask the early-termination question
	// (EarlyTerminationQuestion) before the next round, then store OpenSet
	// as Input.OfferedOpenSet.
	OfferEarlyTermination bool
	// NeedsUserDecisions: termination or progress waits on the user —
	// unresolved CRITICAL conflicts, or every open gap BLOCKED. Present the
	// pending decisions before anything else.
	NeedsUserDecisions bool
	// NeedsAcknowledgment: USER_APPROVED was chosen but unresolved HIGH
	// conflicts need the user's explicit acknowledgment first
	// (HighConflictQuestion); then decide again.
	NeedsAcknowledgment bool
	// OpenSet fingerprints the open gaps (OpenSetFingerprint).
	OpenSet string
}

// Decide walks the termination decision tree. The first matching rule wins:
//
//  1. ChoiceAbandon → ABANDONED (nothing blocks abandoning).
//  2. Failure → FAILED; ChoicePause or pending questions → PAUSED.
//  3. Unresolved CRITICAL conflict → CONTINUE with NeedsUserDecisions: it
//     blocks every other termination, the round limit included.
//  4. Zero open gaps, last review APPROVE, no unresolved HIGH conflict →
//     COMPLETE.
//  5. ChoiceStop → STALL_EXIT.
//  6. ChoiceAccept while IsGoodEnough holds → GOOD_ENOUGH.
//  7. ChoiceAccept otherwise, or ChoiceForceComplete → USER_APPROVED; with
//     unresolved HIGH conflicts not yet acknowledged → CONTINUE with
//     NeedsAcknowledgment.
//  8. Round ≥ MaxRounds → MAX_ROUNDS.
//  9. Every open gap BLOCKED → CONTINUE with NeedsUserDecisions.
//  10. Otherwise CONTINUE, with OfferEarlyTermination when ShouldOffer says so.
func Decide(in Input) Verdict {
	openSet := OpenSetFingerprint(in.Ledger)
	d := func(o Outcome, reason string) Verdict {
		return Verdict{Outcome: o, Reason: reason, OpenSet: openSet}
	}
	counts := CountOpen(in.Ledger)
	c := in.Conflicts

	switch {
	case in.Choice == ChoiceAbandon:
		return d(Abandoned, "the user abandoned the session")
	case in.Failure != "":
		return d(Failed, "a fatal error stopped the session (resumable): "+in.Failure)
	case in.Choice == ChoicePause:
		return d(Paused, "the user paused the session")
	case in.PendingQuestions > 0:
		return d(Paused, fmt.Sprintf("%d question(s) wait for an answer", in.PendingQuestions))
	case c.UnresolvedCritical > 0:
		dec := d(Continue, fmt.Sprintf("%d unresolved CRITICAL conflict(s) block every termination but abandoning; resolve them first", c.UnresolvedCritical))
		dec.NeedsUserDecisions = true
		return dec
	case counts.Total == 0 && in.LastReviewApproved && c.UnresolvedHigh == 0:
		return d(Complete, "no open gaps, the last review approved, and no conflict is unresolved")
	case in.Choice == ChoiceStop:
		return d(StallExit, "stopped on divergence without approval")
	}

	goodEnough, why := IsGoodEnough(in.Ledger, c)
	if in.Choice == ChoiceAccept && goodEnough {
		return d(GoodEnough, fmt.Sprintf("accepted as good enough with %s", counts))
	}
	if in.Choice == ChoiceAccept || in.Choice == ChoiceForceComplete {
		if c.UnresolvedHigh > 0 && !in.HighConflictsAcknowledged {
			dec := d(Continue, fmt.Sprintf("accepting with %d unresolved HIGH conflict(s) needs the user's explicit acknowledgment", c.UnresolvedHigh))
			dec.NeedsAcknowledgment = true
			return dec
		}
		reason := fmt.Sprintf("the user approved the spec with known gaps (%s)", counts)
		if !goodEnough {
			reason += "; not good enough because " + why
		}
		return d(UserApproved, reason)
	}

	if in.MaxRounds > 0 && in.Round >= in.MaxRounds {
		return d(MaxRounds, fmt.Sprintf("reached the limit of %d rounds with %s", in.MaxRounds, counts))
	}
	if counts.Total > 0 && counts.Blocked == counts.Total {
		dec := d(Continue, "every open gap is blocked on a user decision")
		dec.NeedsUserDecisions = true
		return dec
	}
	dec := d(Continue, fmt.Sprintf("%s remain", counts))
	if goodEnough {
		dec.Reason += "; the good-enough criteria hold"
		dec.OfferEarlyTermination = openSet != in.OfferedOpenSet
	}
	return dec
}

// ShouldOffer reports whether the early-termination offer is due: the
// good-enough criteria hold and the open set differs from the one the offer
// was last made for (offered, "" if never). It returns the current
// fingerprint to store once the offer is made, so the user is asked once per
// change of the open set rather than every round.
func ShouldOffer(l *gap.Ledger, c ConflictBlock, offered string) (offer bool, openSet string) {
	openSet = OpenSetFingerprint(l)
	ok, _ := IsGoodEnough(l, c)
	return ok && openSet != offered, openSet
}

// IsGoodEnough reports whether the good-enough criteria hold (GAP-FLOW-005,
// docs/workflow.md#outcomes): no CRITICAL or HIGH gap open, no open gap BLOCKED or marked
// Blocking, no unresolved HIGH/CRITICAL conflict. When they do not, why
// says which failed.
func IsGoodEnough(l *gap.Ledger, c ConflictBlock) (ok bool, why string) {
	counts := CountOpen(l)
	var failed []string
	if n := counts.Critical + counts.High; n > 0 {
		failed = append(failed, fmt.Sprintf("%d CRITICAL/HIGH gap(s) open", n))
	}
	if counts.Blocked > 0 {
		failed = append(failed, fmt.Sprintf("%d gap(s) blocked", counts.Blocked))
	}
	if counts.Blocking > 0 {
		failed = append(failed, fmt.Sprintf("%d blocking gap(s) open", counts.Blocking))
	}
	if n := c.UnresolvedCritical + c.UnresolvedHigh; n > 0 {
		failed = append(failed, fmt.Sprintf("%d HIGH/CRITICAL conflict(s) unresolved", n))
	}
	return len(failed) == 0, strings.Join(failed, ", ")
}

// OpenCounts tallies the open gaps of a ledger.
type OpenCounts struct {
	Total, Critical, High, Medium, Low int
	// Blocked counts gaps in state BLOCKED; Blocking counts gaps marked
	// Blocking (others wait on them).
	Blocked, Blocking int
}

// CountOpen tallies l's open gaps; nil is an empty ledger.
func CountOpen(l *gap.Ledger) OpenCounts {
	var c OpenCounts
	for _, g := range gapsOf(l) {
		if !g.State.IsOpen() {
			continue
		}
		c.Total++
		switch g.Severity {
		case gap.Critical:
			c.Critical++
		case gap.High:
			c.High++
		case gap.Low:
			c.Low++
		default:
			c.Medium++
		}
		if g.State == gap.Blocked {
			c.Blocked++
		}
		if g.Blocking {
			c.Blocking++
		}
	}
	return c
}

// String writes the spec's form: "3 open gaps (0 Critical, 0 High, 2 Medium, 1 Low)".
func (c OpenCounts) String() string {
	noun := "open gaps"
	if c.Total == 1 {
		noun = "open gap"
	}
	return fmt.Sprintf("%d %s (%d Critical, %d High, %d Medium, %d Low)", c.Total, noun, c.Critical, c.High, c.Medium, c.Low)
}

// OpenSetFingerprint identifies the set of open gaps with their
// severities, e.g. "GAP-FLOW-003:MEDIUM,GAP-UX-001:LOW" in gap.Compare order.
// Severity is included so a gap downgraded from HIGH counts as a change;
// lifecycle moves between open states do not, or every round would re-offer.
// The empty set is "(none)", never "", which means "never offered".
func OpenSetFingerprint(l *gap.Ledger) string {
	open := make([]gap.Gap, 0, len(gapsOf(l)))
	for _, g := range gapsOf(l) {
		if g.State.IsOpen() {
			open = append(open, g)
		}
	}
	slices.SortFunc(open, func(a, b gap.Gap) int { return gap.Compare(a.ID, b.ID) })
	if len(open) == 0 {
		return "(none)"
	}
	// A digest, not the list: it is stored with the session and compared,
	// never shown, and must not grow with the number of gaps.
	h := sha256.New()
	for _, g := range open {
		fmt.Fprintf(h, "%s:%s,", g.ID, g.Severity)
	}
	return fmt.Sprintf("%d:%x", len(open), h.Sum(nil)[:12])
}
