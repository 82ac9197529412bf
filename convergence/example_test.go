package convergence_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/refine-spec/refine/convergence"
	"github.com/refine-spec/refine/gap"
)

// A Mediator measures each round against the previous one, records the row,
// asks the user on DIVERGENCE_WARNING, and runs the termination check.
func Example() {
	at := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	ledger := &gap.Ledger{}
	for _, g := range []gap.Gap{
		{ID: "GAP-FLOW-001", Title: "Validation", Severity: gap.High},
		{ID: "GAP-FLOW-002", Title: "Stall detection", Severity: gap.Medium},
		{ID: "GAP-FLOW-003", Title: "Handoff format", Severity: gap.Low},
	} {
		if err := ledger.Add(g); err != nil {
			panic(err)
		}
	}
	tracker, err := convergence.NewTracker(convergence.DefaultSettings())
	if err != nil {
		panic(err)
	}

	// Round 1: the Engineer resolves the HIGH gap.
	before := ledger.Clone()
	for _, to := range []gap.State{gap.InProgress, gap.Proposed, gap.Accepted} {
		if err := ledger.Transition("GAP-FLOW-001", to, 1, at, "round 1"); err != nil {
			panic(err)
		}
	}
	row := tracker.Observe(1, before, ledger)
	fmt.Printf("round %d: net %+d, weighted net %+d, %s\n", row.Round, row.Net, row.WeightedNet, row.State)

	// The tracker is plain JSON inside state.json.
	snapshot, _ := json.Marshal(tracker)
	var restored convergence.Tracker
	if err := json.Unmarshal(snapshot, &restored); err != nil {
		panic(err)
	}
	fmt.Println("restored state:", restored.Current())

	// Termination check: only polish is left, so the user is offered to stop.
	decision := convergence.Decide(convergence.Input{Round: 1, MaxRounds: 10, Ledger: ledger})
	fmt.Println(decision.Outcome, "offer:", decision.OfferEarlyTermination)
	prompt := convergence.EarlyTerminationQuestion(convergence.EarlyTerminationInput{Round: 1, MaxRounds: 10, Ledger: ledger})
	fmt.Printf("%s\n\n%s\n", prompt.Title, prompt.Body)
	for _, o := range prompt.Options {
		fmt.Printf("%s: %s - %s\n", o.Key, o.Label, o.Effect)
	}

	// An automated run answers with the prompt's default.
	final := convergence.Decide(convergence.Input{Round: 1, MaxRounds: 10, Ledger: ledger, Choice: convergence.Choice(prompt.Default)})
	fmt.Println(final.Outcome)
	// Output:
	// round 1: net +1, weighted net +4, CONVERGING
	// restored state: CONVERGING
	// CONTINUE offer: true
	// Accept the spec as good enough?
	//
	// Session Progress: Round 1 of max 10
	// Open Gaps: 2 (0 Critical, 0 High, 1 Medium, 1 Low)
	//
	// No CRITICAL or HIGH gap is open, no gap is blocked, and no HIGH or CRITICAL conflict is unresolved: the spec is good enough to finish.
	//
	// continue: Continue - Keep refining (1 Medium, 1 Low gaps remain)
	// accept: Accept as complete - Finish as USER_APPROVED (GOOD_ENOUGH when the automated policy accepts) and document the open gaps as known limitations
	// pause: Pause - Save state for later
	// abandon: Abandon - End the session as ABANDONED without accepting the spec
	// GOOD_ENOUGH
}

// The convergence table of status.md, from GAP-FLOW-002's example.
func ExampleTable() {
	rows := []convergence.Row{
		{Round: 1, GapsStart: 25, Resolved: 3, New: 2, GapsEnd: 24, Net: 1, WeightedNet: 1, State: convergence.Converging},
		{Round: 2, GapsStart: 24, Resolved: 4, New: 4, GapsEnd: 24, Net: 0, WeightedNet: 0, State: convergence.Stalled(1)},
		{Round: 3, GapsStart: 24, Resolved: 1, New: 5, GapsEnd: 28, Net: -4, WeightedNet: -4, State: convergence.DivergenceWarning},
	}
	fmt.Print(convergence.Table(rows))
	// Output:
	// | Round | Gaps Start | Resolved | Deferred | New | Reopened | Gaps End | Net | Weighted Net | State              |
	// |-------|------------|----------|----------|-----|----------|----------|-----|--------------|--------------------|
	// | 1     | 25         | 3        | 0        | 2   | 0        | 24       | +1  | +1           | CONVERGING         |
	// | 2     | 24         | 4        | 0        | 4   | 0        | 24       | 0   | 0            | STALLED(1)         |
	// | 3     | 24         | 1        | 0        | 5   | 0        | 28       | -4  | -4           | DIVERGENCE_WARNING |
}

// On DIVERGENCE_WARNING the Mediator asks; "accept complexity" quiets the
// warning for the next StallRounds rounds.
func ExampleTracker_AcceptComplexity() {
	var tracker convergence.Tracker // zero value: default settings
	for _, net := range []int{0, 0} {
		tracker.Record(convergence.Row{Net: net, WeightedNet: net})
	}
	fmt.Println(tracker.Current())
	tracker.AcceptComplexity()
	for range 3 {
		fmt.Println(tracker.Record(convergence.Row{}).State)
	}
	// Output:
	// DIVERGENCE_WARNING
	// STALLED(1)
	// STALLED(2)
	// DIVERGENCE_WARNING
}
