package rollbacktext_test

import (
	"fmt"

	"github.com/refine-spec/refine/internal/rollbacktext"
)

// The targets question at round 8 with rounds 7 and 6 restorable, as a
// terminal shows it; the engine dispatches on the chosen option's Effect.
func ExampleTargetsQuestion() {
	p := rollbacktext.TargetsQuestion(8, []rollbacktext.Target{{Round: 7, OpenGaps: 12, DecisionsSince: 1}, {Round: 6, OpenGaps: 14, DecisionsSince: 3}})
	fmt.Print(p.Text())
	o, _ := p.Option(p.Default)
	n, _ := rollbacktext.TargetOf(o.Effect)
	fmt.Println("default: roll back to round", n)
	// Output:
	// ROLLBACK OPTIONS
	//
	// Available rollback targets:
	// | Target | Gaps at Target | Decisions Since | Rounds to Undo |
	// |--------|----------------|-----------------|----------------|
	// | Round 7 | 12 open | 1 decision | 1 |
	// | Round 6 | 14 open | 3 decisions | 2 |
	//
	// Note: Earlier rounds cannot be rolled back (backups rotated).
	//
	// Options:
	// 1. Rollback to Round 7 (undo 1 round)
	// 2. Rollback to Round 6 (undo 2 rounds)
	// 3. Cancel rollback (continue from Round 8)
	// default: roll back to round 7
}
