package rollbackfmt_test

import (
	"fmt"
	"time"

	"github.com/refine-spec/refine/internal/rollbackfmt"
)

// The notice appended to decisions.md when round 5 is rolled back.
func ExampleDecisionsNotice() {
	at := time.Date(2026, 1, 12, 14, 30, 0, 0, time.UTC)
	fmt.Print(rollbackfmt.DecisionsNotice(5, at, "Proposals too\nabstract", "round_005_rolled_back/decisions_from_round_5.md"))
	// Output:
	// ## Rollback Notice - Round 5
	//
	// Round 5 was rolled back at 2026-01-12T14:30:00Z.
	// Decisions from round 5 have been archived to:
	//   round_005_rolled_back/decisions_from_round_5.md
	//
	// Reason: Proposals too abstract
}
