package refine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
)

// A session may run past round 99: issue and decision IDs carry up to
// three round digits, round folders sort (issue #30, DESIGN §4).
func TestSessionPastRound99(t *testing.T) {
	if testing.Short() {
		t.Skip("a 105-round session")
	}
	ctx := context.Background()
	id := gap.ID("GAP-TEST-001")
	eng, rev := revisingRoles(id)
	cfg := refinetest.Config(eng, rev, refine.DefaultAsker{})
	cfg.MaxRounds = 105
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil || out.Status != refine.StatusMaxRounds || out.Round != 105 {
		t.Fatalf("Run: %+v, %v; want MAX_ROUNDS after round 105", out, err)
	}
	rev105, err := cfg.Store.Get(ctx, "round_105/reviewer.md")
	if err != nil || !strings.Contains(string(rev105), "ISSUE-R105-001") {
		t.Fatalf("round_105/reviewer.md: %v", err)
	}
	st, _ := s.Status(ctx)
	var late bool
	for _, d := range st.Decisions {
		late = late || strings.HasPrefix(d.ID, "DECISION-R10") && len(d.ID) == len("DECISION-R100-001")
	}
	if !late {
		t.Errorf("no decision numbered in a round past 99: %+v", st.Decisions)
	}
	keys, _ := cfg.Store.List(ctx, "round_")
	if len(keys) == 0 || !strings.HasPrefix(keys[len(keys)-1], "round_105/") {
		t.Errorf("round folders do not sort: last key %q", keys[len(keys)-1])
	}
}
