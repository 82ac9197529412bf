package convergence

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/question"
)

// Option keys. Where a key is also a termination Choice it has the same
// value, so an answer converts with Choice(key).
const (
	KeyNarrowScope      = "narrow_scope"
	KeyAcceptComplexity = "accept_complexity"
	KeyPauseForInput    = "pause_for_input"
	KeyForceComplete    = string(ChoiceForceComplete)
	KeyRollBack         = "rollback"
	// KeyStop ends the session as STALL_EXIT (the divergence question).
	KeyStop = string(ChoiceStop)

	KeyContinue = string(ChoiceContinue)
	KeyAccept   = string(ChoiceAccept)
	KeyPause    = string(ChoicePause)
	KeyAbandon  = string(ChoiceAbandon)

	KeyAcknowledge = "acknowledge"
)

// DivergenceInput is what the divergence question describes.
type DivergenceInput struct {
	// Rows is the tracker's history; the trailing rows explain the warning.
	Rows     []Row
	Settings Settings // zero: DefaultSettings
	Ledger   *gap.Ledger
	// RollbackAvailable offers "Roll back" (backups exist and the session
	// rollback limit is not reached).
	RollbackAvailable bool
}

// DivergenceQuestion words the DIVERGENCE_WARNING question (GAP-FLOW-002, with
// refine's two further options). Options: Narrow scope, Accept complexity,
// Pause for input, Force complete, Roll back when available, and Stop (end
// as STALL_EXIT). Option effects are sentences for the user; the caller
// dispatches on the keys and sets the question's ID.
//
// Automated default: Narrow scope when NarrowScopeDefault finds gaps to
// defer, else Accept complexity. It is the cautious choice because it is
// reversible (DEFERRED → OPEN), loses nothing silently (deferred gaps are
// listed as known limitations), and spends the remaining rounds on the
// CRITICAL/HIGH gaps that decide GOOD_ENOUGH; Force complete would claim an
// approval no user gave, Pause would halt a run nobody is watching, and Roll
// back tends to replay the same round. With nothing to narrow, Accept
// complexity keeps going and MaxRounds still bounds the cost.
func DivergenceQuestion(in DivergenceInput) question.Question {
	s := in.Settings
	if s == (Settings{}) {
		s = DefaultSettings()
	}
	narrow := NarrowScopeDefault(in.Ledger)
	counts := CountOpen(in.Ledger)

	var body strings.Builder
	flat := trailingFlat(in.Rows)
	var explain []Row
	var last Row
	if n := len(in.Rows); n > 0 {
		last = in.Rows[n-1]
	}
	switch {
	case len(in.Rows) > 0 && last.Net < s.DivergenceNet && flat < s.StallRounds:
		fmt.Fprintf(&body, "Round %d introduced far more gaps than it resolved (Net: %s, below %s).\n", last.Round, signed(last.Net), signed(s.DivergenceNet))
		explain = in.Rows[len(in.Rows)-1:]
	case flat > 0:
		// The spec's wording; it also covers a stall that ends in an explosion.
		fmt.Fprintf(&body, "The workflow has not made net progress for %d %s.\n", flat, plural(flat, "round", "rounds"))
		explain = in.Rows[len(in.Rows)-flat:]
	default:
		body.WriteString("The workflow is not converging.\n")
		explain = in.Rows[len(in.Rows)-min(len(in.Rows), 1):]
	}
	// Five rounds make the point; a long stall need not flood the question.
	explain = explain[len(explain)-min(len(explain), 5):]
	for _, r := range explain {
		fmt.Fprintf(&body, "Round %d: Resolved %d, Introduced %d, Reopened %d, Deferred %d (Net: %s, Weighted net: %s)\n",
			r.Round, r.Resolved, r.New, r.Reopened, r.Deferred, signed(r.Net), signed(r.WeightedNet))
	}
	fmt.Fprintf(&body, "\nOpen Gaps: %d (%d Critical, %d High, %d Medium, %d Low)\n", counts.Total, counts.Critical, counts.High, counts.Medium, counts.Low)

	narrowEffect := "Defer the chosen gaps as known limitations; answer with their IDs. No non-blocking MEDIUM/LOW gap is open, so there is no default selection"
	if len(narrow) > 0 {
		narrowEffect = fmt.Sprintf("Remove non-blocking gaps: defer %d MEDIUM/LOW %s (%s) as known limitations, or answer with the IDs of the gaps to defer instead",
			len(narrow), plural(len(narrow), "gap", "gaps"), listIDs(narrow, 5))
	}
	options := []question.Option{
		{Key: KeyNarrowScope, Label: "Narrow scope", Effect: narrowEffect},
		{Key: KeyAcceptComplexity, Label: "Accept complexity", Effect: fmt.Sprintf(
			"Continue with expanded scope; the stall count restarts and no divergence warning is raised for the next %d %s", s.StallRounds, plural(s.StallRounds, "round", "rounds"))},
		{Key: KeyPauseForInput, Label: "Pause for input", Effect: "Provide additional constraints or context as text; it is added to the next prompts as an adjustment"},
		{Key: KeyForceComplete, Label: "Force complete", Effect: fmt.Sprintf(
			"Accept current state with known gaps: end as USER_APPROVED with %d open %s documented as known limitations", counts.Total, plural(counts.Total, "gap", "gaps"))},
	}
	if in.RollbackAvailable {
		options = append(options, question.Option{Key: KeyRollBack, Label: "Roll back", Effect: "Discard the latest round(s) and retry from an earlier state (GAP-FLOW-007)"})
	}
	// The user (or a host's policy) may also stop on divergence: the
	// session ends as STALL_EXIT.
	options = append(options, question.Option{Key: KeyStop, Label: "Stop - End the session here without approving it",
		Effect: "Session ends as STALL_EXIT; open gaps are listed as known limitations"})
	def := KeyAcceptComplexity
	if len(narrow) > 0 {
		def = KeyNarrowScope
	}
	for i := range options {
		options[i].Recommended = options[i].Key == def
	}
	round := 0
	if n := len(in.Rows); n > 0 {
		round = in.Rows[n-1].Round
	}
	return question.Question{
		Kind:      question.KindDivergence,
		Round:     round,
		Title:     fmt.Sprintf("Divergence warning after round %d", round),
		Body:      body.String(),
		Options:   options,
		AllowText: true,
		Default:   def,
	}
}

// trailingFlat counts the trailing rows without weighted progress.
func trailingFlat(rows []Row) int {
	n := 0
	for i := len(rows) - 1; i >= 0 && rows[i].WeightedNet <= 0; i-- {
		n++
	}
	return n
}

// EarlyTerminationInput is what the early-termination offer describes.
type EarlyTerminationInput struct {
	Round     int // rounds completed
	MaxRounds int // 0: no limit
	Ledger    *gap.Ledger
}

// EarlyTerminationQuestion words the offer made when the good-enough criteria
// first hold for an open set (GAP-FLOW-005): Continue, Accept as complete,
// Pause, Abandon.
//
// Automated default: Accept as complete, which Decide turns into
// GOOD_ENOUGH ("accepted by user or by policy in automated mode";
// docs/workflow.md#outcomes): only MEDIUM/LOW, non-blocking gaps remain, and further rounds mostly
// polish. Nothing is marked Recommended, because for a person the spec's
// warning applies: accepting early under time pressure is the risk.
func EarlyTerminationQuestion(in EarlyTerminationInput) question.Question {
	counts := CountOpen(in.Ledger)
	var body strings.Builder
	if in.MaxRounds > 0 {
		fmt.Fprintf(&body, "Session Progress: Round %d of max %d\n", in.Round, in.MaxRounds)
	} else {
		fmt.Fprintf(&body, "Session Progress: Round %d\n", in.Round)
	}
	fmt.Fprintf(&body, "Open Gaps: %d (%d Critical, %d High, %d Medium, %d Low)\n", counts.Total, counts.Critical, counts.High, counts.Medium, counts.Low)
	body.WriteString("\nNo CRITICAL or HIGH gap is open, no gap is blocked, and no HIGH or CRITICAL conflict is unresolved: the spec is good enough to finish.\n")

	return question.Question{
		Kind:  question.KindEarlyTermination,
		Round: in.Round,
		Title: "Accept the spec as good enough?",
		Body:  body.String(),
		Options: []question.Option{
			{Key: KeyContinue, Label: "Continue", Effect: "Keep refining (" + remaining(counts) + ")"},
			{Key: KeyAccept, Label: "Accept as complete", Effect: "Finish as USER_APPROVED (GOOD_ENOUGH when the automated policy accepts) and document the open gaps as known limitations"},
			{Key: KeyPause, Label: "Pause", Effect: "Save state for later"},
			{Key: KeyAbandon, Label: "Abandon", Effect: "End the session as ABANDONED without accepting the spec"},
		},
		Default: KeyAccept,
	}
}

// remaining says what is left, e.g. "2 Medium, 1 Low gaps remain".
func remaining(c OpenCounts) string {
	var parts []string
	for _, p := range []struct {
		n    int
		name string
	}{{c.Critical, "Critical"}, {c.High, "High"}, {c.Medium, "Medium"}, {c.Low, "Low"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.name))
		}
	}
	if len(parts) == 0 {
		return "no open gaps remain"
	}
	return strings.Join(parts, ", ") + " " + plural(c.Total, "gap remains", "gaps remain")
}

// HighConflictQuestion words the explicit acknowledgment USER_APPROVED needs
// while n HIGH conflicts are unresolved (GAP-FLOW-006 §8: "Warning +
// acknowledgment required"), a question of kind conflict; the caller sets
// its ID and round. Automated default: Continue, because an
// acknowledgment is by definition a person's; a policy must not give it.
func HighConflictQuestion(n int) question.Question {
	return question.Question{
		Kind:  question.KindConflict,
		Title: "Accept with unresolved HIGH conflicts?",
		Body: fmt.Sprintf("Warning: %d HIGH-severity %s between the Engineer and the Reviewer %s unresolved.\n"+
			"Accepting now records %s as known limitations of the final spec.\n",
			n, plural(n, "conflict", "conflicts"), plural(n, "is", "are"), plural(n, "it", "them")),
		Options: []question.Option{
			{Key: KeyAcknowledge, Label: "Acknowledge and accept", Effect: "End as USER_APPROVED with the conflicts listed as known limitations"},
			{Key: KeyContinue, Label: "Continue", Effect: "Keep refining and resolve the conflicts first"},
		},
		Default: KeyContinue,
	}
}

// NarrowScopeDefault returns the gaps "Narrow scope" defers when the user
// names none: every open MEDIUM or LOW gap that is neither BLOCKED nor
// marked Blocking, in gap.Compare order.
func NarrowScopeDefault(l *gap.Ledger) []gap.ID {
	var out []gap.ID
	for _, g := range gapsOf(l) {
		if g.State.IsOpen() && g.State != gap.Blocked && !g.Blocking && !g.Severity.AtLeastHigh() {
			out = append(out, g.ID)
		}
	}
	slices.SortFunc(out, gap.Compare)
	return out
}

// ErrInvalidScope is returned by ScopeFromAnswer for a selection naming a
// gap that is not in the ledger or not open.
var ErrInvalidScope = errors.New("invalid narrow-scope selection")

// ScopeFromAnswer reads the gaps to defer from the free text of a "Narrow
// scope" answer: the gap IDs it mentions, or NarrowScopeDefault when it
// mentions none. Every named gap must be open, so a typo cannot silently
// defer nothing; errors wrap ErrInvalidScope.
func ScopeFromAnswer(l *gap.Ledger, text string) ([]gap.ID, error) {
	ids := gap.FindIDs(text)
	if len(ids) == 0 {
		return NarrowScopeDefault(l), nil
	}
	open := map[gap.ID]bool{}
	for _, g := range gapsOf(l) {
		open[g.ID] = g.State.IsOpen()
	}
	var bad []string
	for _, id := range ids {
		isOpen, known := open[id]
		switch {
		case !known:
			bad = append(bad, string(id)+" (unknown)")
		case !isOpen:
			bad = append(bad, string(id)+" (not open)")
		}
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrInvalidScope, strings.Join(bad, ", "))
	}
	return ids, nil
}

// listIDs joins up to limit IDs, summarising the rest.
func listIDs(ids []gap.ID, limit int) string {
	parts := make([]string, 0, min(len(ids), limit)+1)
	for i, id := range ids {
		if i == limit {
			parts = append(parts, fmt.Sprintf("and %d more", len(ids)-limit))
			break
		}
		parts = append(parts, string(id))
	}
	return strings.Join(parts, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
