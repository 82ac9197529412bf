package refine_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
)

func TestObserverEvents(t *testing.T) {
	var mu sync.Mutex
	var kinds []refine.EventKind
	eng := refinetest.Script("bad", "bad", "bad", engineerDoc("GAP-TEST-001"))
	rev := refinetest.Script(reviewerDoc(1, "GAP-TEST-001"))
	cfg := refinetest.Config(eng, rev, then(refinetest.Keys("3")))
	cfg.Observer = refine.ObserverFunc(func(e refine.Event) {
		mu.Lock()
		defer mu.Unlock()
		kinds = append(kinds, e.Kind)
	})
	_, out := run(t, cfg)
	if out.Status != refine.StatusComplete {
		t.Fatalf("outcome %+v", out)
	}
	// Each kind appears, in the order a round produces them.
	want := []refine.EventKind{
		refine.EventRoundStarted, refine.EventAttemptStarted, refine.EventAttemptFinished, refine.EventValidationFailed,
		refine.EventRetry, refine.EventEscalation, refine.EventQuestionAsked, refine.EventQuestionAnswered,
		refine.EventPhaseFinished, refine.EventPhaseStarted, refine.EventCommitted, refine.EventRoundFinished, refine.EventSessionFinished,
	}
	i := 0
	for _, k := range kinds {
		if i < len(want) && k == want[i] {
			i++
		}
	}
	if i != len(want) {
		t.Errorf("events out of order or missing %v; got %v", want[i], kinds)
	}
	if !slices.Contains(kinds, refine.EventCommitted) {
		t.Errorf("no commit event")
	}
}

// Prompt size must not grow with the number of rounds: older material is
// trimmed to the prompt's token budget.
func TestPromptSizeDoesNotGrowWithRounds(t *testing.T) {
	var gaps []gap.Gap
	for i := 0; i < 9; i++ {
		gaps = append(gaps, gap.Gap{ID: gap.ID("GAP-PS-00" + string(rune('1'+i))), Title: "gap " + string(rune('1'+i)), Severity: gap.High})
	}
	eng, rev := stallingRoles()
	engRole := eng.(refine.RoleFunc)
	var mu sync.Mutex
	sizes := map[int]int{}
	cfg := refinetest.Config(refine.RoleFunc(func(ctx context.Context, req refine.Request) (refine.Response, error) {
		mu.Lock()
		if req.Attempt == 1 {
			for _, m := range req.Messages {
				sizes[req.Round] += len(m.Content)
			}
		}
		mu.Unlock()
		return engRole(ctx, req)
	}), rev, auto(), gaps...)
	cfg.GapsPerRound, cfg.MaxRounds, cfg.StallRounds = 1, 9, 99
	run(t, cfg)
	if sizes[2] == 0 || sizes[9] == 0 {
		t.Fatalf("sizes = %v", sizes)
	}
	if sizes[9] > sizes[2]*13/10 {
		t.Errorf("round 9 prompt is %d bytes, round 2 was %d: prompts grow with rounds", sizes[9], sizes[2])
	}
}
