package rollback_test

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/rollback"
)

// A whole rollback as the engine performs it: decide, plan, read, execute,
// commit. The Store is a map here.
func Example() {
	at := time.Date(2026, 1, 12, 14, 30, 0, 0, time.UTC)
	store := map[string][]byte{
		"status.md": []byte("# Status\n"), "decisions.md": []byte("# Decisions\n"), "state.json": []byte("{}"),
		"status_backup_round_4.md": []byte("# Status after round 4\n"), "decisions_backup_round_4.md": []byte("# Decisions\n"),
		"state_backup_round_4.json": []byte(`{"round":4}`),
		"round_005/engineer.md":     []byte("## Gap Resolution: GAP-FLOW-007\n\nIt depends.\n"),
	}
	var history rollback.History

	step := rollback.DefaultPolicy().Next(5, history, false, false)
	fmt.Printf("attempt %d, ask the user: %v\n", step.Attempt, step.Ask)

	plan, err := rollback.PlanRollback(rollback.Request{Current: 5, To: 4, Keys: slices.Sorted(maps.Keys(store)), History: history})
	if err != nil {
		panic(err)
	}
	files := map[string][]byte{}
	for _, k := range plan.Reads() {
		files[k] = store[k]
	}
	res, err := plan.Execute(rollback.Execution{
		Files: files, At: at, Reason: "Proposals too abstract",
		Mode: step.Mode, Trigger: rollback.TriggerUser,
	})
	if err != nil {
		panic(err)
	}
	// The engine merges history into the restored state before committing.
	history.Records = append(history.Records, res.Records...)
	for _, op := range res.Ops() {
		if op.Delete {
			fmt.Println("delete", op.Key)
			delete(store, op.Key)
		} else {
			fmt.Println("put", op.Key)
			store[op.Key] = op.Value
		}
	}
	fmt.Println("used", history.Used(), "of", rollback.DefaultLimit)
	// Output:
	// attempt 1, ask the user: true
	// delete round_005/engineer.md
	// put round_005_rolled_back_1.tar.gz
	// put status.md
	// put decisions.md
	// put state.json
	// used 1 of 7
}

func ExampleAvailableTargets() {
	keys := []string{}
	for n := 5; n <= 7; n++ { // the backups of rounds 5-7
		keys = append(keys, fmt.Sprintf("status_backup_round_%d.md", n),
			fmt.Sprintf("decisions_backup_round_%d.md", n), fmt.Sprintf("state_backup_round_%d.json", n))
	}
	fmt.Println(rollback.AvailableTargets(8, keys))
	_, err := rollback.PlanRollback(rollback.Request{Current: 8, To: 4, Keys: keys})
	fmt.Println(err)
	// Output:
	// [7 6 5]
	// rollback: round 4 cannot be restored from round 8: its backups were rotated out (only the last 3 rounds are kept); available targets: 7, 6, 5
}

func ExampleDetectPatterns() {
	d := rollback.DetectPatterns(rollback.Input{
		Engineer: "## Gap Resolution: GAP-FLOW-005\n\n### Examples\n\n**Example 1:** a\n\n**Example 2:** an edge case\n",
		Assigned: []gap.ID{"GAP-FLOW-005"},
	})
	fmt.Println(d.FailurePattern())
	for _, a := range rollback.AutoAdjustments(d) {
		fmt.Println(a.Prompt)
	}
	// Output:
	// MISSING_SECTIONS (Trade-offs absent)
	// You MUST include a ### Trade-offs section with at least 2 pros and 2 cons.
}

func ExampleReadArchive() {
	meta := rollback.Metadata{
		OriginalRound: 5, RollbackTimestamp: time.Date(2026, 1, 12, 14, 30, 0, 0, time.UTC),
		Reason: "too abstract", AttemptNumber: 1, TargetRound: 4,
	}
	b, err := rollback.BuildArchive(map[string][]byte{"round_005/engineer.md": []byte("output")}, meta, "")
	if err != nil {
		panic(err)
	}
	files, got, err := rollback.ReadArchive(b, rollback.Limits{})
	if err != nil {
		panic(err)
	}
	fmt.Println(slices.Sorted(maps.Keys(files)), got.Reason)
	// Output:
	// [decisions_from_round_5.md engineer.md rollback_metadata.json] too abstract
}

func ExampleExpired() {
	moved := time.Date(2026, 1, 12, 18, 0, 0, 0, time.UTC)
	cs, err := rollback.ColdPlan(nil, []rollback.ArchiveInfo{{Name: "round_003_rolled_back_1.tar.gz", Size: 2150}}, "abc123", "/var/lib/refine/cold", moved)
	if err != nil {
		panic(err)
	}
	fmt.Print(cs.LogLine)
	for _, days := range []int{29, 31} {
		ex, err := rollback.Expired(cs.Manifest, moved.AddDate(0, 0, days), 30*24*time.Hour)
		if err != nil {
			panic(err)
		}
		fmt.Printf("after %d days: %d expired\n", days, len(ex.Expired))
	}
	// Output:
	// 2026-01-12T18:00:00Z MOVED 1 archive (2.1 KB) of session abc123 to spec_refinement_workflow/2026-01-12_session_abc123
	// after 29 days: 0 expired
	// after 31 days: 1 expired
}
