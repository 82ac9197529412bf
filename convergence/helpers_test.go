package convergence

import (
	"fmt"
	"testing"
	"time"

	"github.com/refine-spec/refine/gap"
)

// fixedTime keeps transition timestamps deterministic.
var fixedTime = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// gid returns the n-th test gap ID, GAP-TEST-001 and so on.
func gid(n int) gap.ID { return gap.ID(fmt.Sprintf("GAP-TEST-%03d", n)) }

// addGaps adds gaps from..to (inclusive) in state OPEN with severity s.
func addGaps(t testing.TB, l *gap.Ledger, from, to int, s gap.Severity, round int) {
	t.Helper()
	for n := from; n <= to; n++ {
		if err := l.Add(gap.Gap{ID: gid(n), Title: fmt.Sprintf("test gap %d", n), Severity: s, Round: round}); err != nil {
			t.Fatal(err)
		}
	}
}

// move walks gap id through states using the real lifecycle, so tests
// cannot build a ledger the Mediator could not.
func move(t testing.TB, l *gap.Ledger, id gap.ID, round int, states ...gap.State) {
	t.Helper()
	for _, s := range states {
		if err := l.Transition(id, s, round, fixedTime, "test"); err != nil {
			t.Fatal(err)
		}
	}
}

// accept takes an OPEN gap through a full round to ACCEPTED.
func accept(t testing.TB, l *gap.Ledger, id gap.ID, round int) {
	t.Helper()
	move(t, l, id, round, gap.InProgress, gap.Proposed, gap.Accepted)
}

// ledgerOf builds a ledger from gaps, keeping their given states.
func ledgerOf(t testing.TB, gaps ...gap.Gap) *gap.Ledger {
	t.Helper()
	l := &gap.Ledger{}
	for _, g := range gaps {
		if err := l.Add(g); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

// g is shorthand for a gap literal.
func g(n int, s gap.Severity, st gap.State) gap.Gap {
	return gap.Gap{ID: gid(n), Title: fmt.Sprintf("test gap %d", n), Severity: s, State: st}
}

// flow002Ledgers builds the four ledgers behind GAP-FLOW-002's example
// table: 25 open gaps, then rounds resolving 3/4/1 and introducing 2/4/5.
func flow002Ledgers(t testing.TB) []*gap.Ledger {
	t.Helper()
	l0 := &gap.Ledger{}
	addGaps(t, l0, 1, 25, gap.Medium, 0)

	l1 := l0.Clone()
	for n := 1; n <= 3; n++ {
		accept(t, l1, gid(n), 1)
	}
	addGaps(t, l1, 26, 27, gap.Medium, 1)

	l2 := l1.Clone()
	for n := 4; n <= 7; n++ {
		accept(t, l2, gid(n), 2)
	}
	addGaps(t, l2, 28, 31, gap.Medium, 2)

	l3 := l2.Clone()
	accept(t, l3, gid(8), 3)
	addGaps(t, l3, 32, 36, gap.Medium, 3)
	return []*gap.Ledger{l0, l1, l2, l3}
}
