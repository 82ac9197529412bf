package rollbacktext

import (
	"fmt"
	"slices"
	"strings"

	"github.com/refine-spec/refine/internal/rollbackfmt"
	"github.com/refine-spec/refine/question"
)

// Target describes one restorable round for the targets table. OpenGaps and
// DecisionsSince come from the engine (the backup's state and the decision
// log); this package does not parse state.json.
type Target struct {
	Round int
	// OpenGaps is the number of open gaps in the state after Round.
	OpenGaps int
	// DecisionsSince is the number of decisions made after Round: the
	// decisions a rollback to Round archives.
	DecisionsSince int
}

// TargetsTable renders the available-targets table in the spec's
// multi-round form (Example 2), one row per target in the order given:
//
//	| Target | Gaps at Target | Decisions Since | Rounds to Undo |
//	|--------|----------------|-----------------|----------------|
//	| Round 7 | 12 open | 1 decision | 1 |
func TargetsTable(current int, targets []Target) string {
	var b strings.Builder
	b.WriteString("| Target | Gaps at Target | Decisions Since | Rounds to Undo |\n")
	b.WriteString("|--------|----------------|-----------------|----------------|\n")
	for _, t := range targets {
		fmt.Fprintf(&b, "| Round %d | %d open | %s | %d |\n",
			t.Round, t.OpenGaps, rollbackfmt.Plural(t.DecisionsSince, "decision", "decisions"), current-t.Round)
	}
	return b.String()
}

// rotatedNote is shown when rounds older than the oldest target exist.
const rotatedNote = "Note: Earlier rounds cannot be rolled back (backups rotated)."

func targetsBody(current int, targets []Target, note bool) string {
	var b strings.Builder
	b.WriteString("Available rollback targets:\n")
	b.WriteString(TargetsTable(current, targets))
	if note && (len(targets) == 0 || slices.MinFunc(targets, func(a, b Target) int { return a.Round - b.Round }).Round > 0) {
		b.WriteString("\n" + rotatedNote + "\n")
	}
	return b.String()
}

// Effects of the target prompts' options.
const (
	EffectCancel         = "cancel"
	EffectChooseOther    = "choose-other"
	effectRollbackPrefix = "rollback-to:"
)

// RollbackToEffect is the Effect of an option that rolls back to round n.
func RollbackToEffect(n int) string { return fmt.Sprintf("%s%d", effectRollbackPrefix, n) }

// TargetOf reads the round out of a RollbackToEffect effect.
func TargetOf(effect string) (int, bool) {
	rest, ok := strings.CutPrefix(effect, effectRollbackPrefix)
	if !ok {
		return 0, false
	}
	var n int
	if _, err := fmt.Sscanf(rest, "%d", &n); err != nil || fmt.Sprint(n) != rest {
		return 0, false
	}
	return n, true
}

// TargetsQuestion is the spec's "ROLLBACK OPTIONS" question: one option per
// target ("Rollback to Round 7 (undo 1 round)") and a final cancel option
// ("Cancel rollback (continue from Round 8)"), with the spec's note when
// older rounds exist whose backups were rotated out. The automated default is the
// newest target (undo one round): the user or policy already chose to roll
// back, and undoing the least is the least destructive choice. With no
// targets, only cancel is offered and it is the default.
func TargetsQuestion(current int, targets []Target) question.Question {
	p := question.Question{
		Kind:  question.KindRollback,
		ID:    fmt.Sprintf("rollback-targets-r%d", current),
		Title: "ROLLBACK OPTIONS",
		Body:  targetsBody(current, targets, true),
	}
	for i, t := range targets {
		undo := current - t.Round
		p.Options = append(p.Options, question.Option{
			Key:    fmt.Sprint(i + 1),
			Label:  fmt.Sprintf("Rollback to Round %d (undo %s)", t.Round, rollbackfmt.Plural(undo, "round", "rounds")),
			Effect: RollbackToEffect(t.Round),
		})
	}
	cancel := fmt.Sprint(len(targets) + 1)
	p.Options = append(p.Options, question.Option{
		Key:    cancel,
		Label:  fmt.Sprintf("Cancel rollback (continue from Round %d)", current),
		Effect: EffectCancel,
	})
	p.Default = "1"
	return p
}

// ConfirmQuestion is the spec's "MULTI-ROUND ROLLBACK" confirmation (Example
// 2): the targets table, what rolling back to `to` will do, and the options
// roll back / choose a different target / cancel. openNow is the number of
// open gaps now. The automated default is cancel: a multi-round rollback
// discards work and needs a human's yes.
func ConfirmQuestion(current int, to Target, targets []Target, openNow int) question.Question {
	undone := make([]int, 0, current-to.Round)
	for r := to.Round + 1; r <= current; r++ {
		undone = append(undone, r)
	}
	var b strings.Builder
	b.WriteString(targetsBody(current, targets, false))
	fmt.Fprintf(&b, "\nRollback to Round %d will:\n", to.Round)
	fmt.Fprintf(&b, "- Discard %s %s\n", map[bool]string{true: "round", false: "rounds"}[len(undone) == 1], rollbackfmt.JoinInts(undone))
	fmt.Fprintf(&b, "- Restore %d open gaps (currently %d)\n", to.OpenGaps, openNow)
	fmt.Fprintf(&b, "- Archive %s (can be recovered)\n", rollbackfmt.Plural(to.DecisionsSince, "decision", "decisions"))
	fmt.Fprintf(&b, "- Create %s\n", rollbackfmt.Plural(len(undone), "archive file", "archive files"))
	return question.Question{
		Kind:  question.KindRollback,
		ID:    fmt.Sprintf("rollback-confirm-r%d-to%d", current, to.Round),
		Title: "MULTI-ROUND ROLLBACK",
		Body:  b.String(),
		Options: []question.Option{
			{Key: "1", Label: fmt.Sprintf("Rollback to Round %d (%s back)", to.Round, rollbackfmt.Plural(len(undone), "round", "rounds")), Effect: RollbackToEffect(to.Round)},
			{Key: "2", Label: "Choose different target", Effect: EffectChooseOther},
			{Key: "3", Label: "Cancel rollback", Effect: EffectCancel},
		},
		Default: "3",
	}
}
