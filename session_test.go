package refine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
)

func TestSessionCompletesInOneRound(t *testing.T) {
	ctx := context.Background()
	eng := refinetest.Script(engineerDoc("GAP-TEST-001"))
	rev := refinetest.Script(reviewerDoc(1, "GAP-TEST-001"))
	cfg := refinetest.Config(eng, rev, auto())
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if out.Status != refine.StatusComplete || out.Round != 1 {
		t.Fatalf("outcome = %+v, want COMPLETE after round 1", out)
	}
	st, _ := s.Status(ctx)
	if st.Gaps[0].State != gap.Accepted {
		t.Errorf("gap state = %s, want ACCEPTED", st.Gaps[0].State)
	}
	keys, _ := cfg.Store.List(ctx, "")
	for _, want := range []string{"state.json", "status.md", "decisions.md", "round_001/engineer.md", "round_001/reviewer.md", "round_001/summary.md",
		"round_001/attempts/engineer-1.md", "round_001/prompts/engineer-1.md", "round_001/attempts/reviewer-1.md", "state_backup_round_0.json"} {
		if !contains(keys, want) {
			t.Errorf("store lacks %s; has %v", want, keys)
		}
	}
	status, _ := cfg.Store.Get(ctx, "status.md")
	if !strings.Contains(string(status), "## Round 1 Validation Log") {
		t.Errorf("status.md lacks the validation log:\n%s", status)
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
