package gap_test

import (
	"fmt"
	"time"

	"github.com/refine-spec/refine/gap"
)

// IDs are found on word boundaries (GAP-FLOW-0012 is not GAP-FLOW-001),
// and the ledger enforces the lifecycle's transitions.
func Example() {
	fmt.Println(gap.FindIDs("See GAP-FLOW-001 and GAP-FLOW-007a, not GAP-FLOW-0012 or GAP-XXX."))
	var l gap.Ledger
	_ = l.Add(gap.Gap{ID: "GAP-FLOW-001", Title: "Stall detection", Severity: gap.High})
	at := time.Date(2026, 1, 12, 14, 30, 0, 0, time.UTC)
	fmt.Println(l.Transition("GAP-FLOW-001", gap.InProgress, 1, at, "assigned"))
	fmt.Println(l.Transition("GAP-FLOW-001", gap.Accepted, 1, at, "skipping review") != nil)
	// Output:
	// [GAP-FLOW-001 GAP-FLOW-007a]
	// <nil>
	// true
}
