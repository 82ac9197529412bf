package refine_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/store/memory"
)

// A rollback carried out after its options question is one commit with
// the decision the question recorded: a crash at any commit of that run,
// then a reopen, never keeps the rollback and loses the decision (found
// by the session simulator, #23: seeds 194, 818, 1218, where the decision
// had a commit of its own).
func TestRollbackDialogDecisionsAreDurableWithTheRollback(t *testing.T) {
	ctx := context.Background()
	roles := func() (refine.Role, refine.Role) {
		eng := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
			return refine.Response{Content: refinetest.EngineerOutput(req.Gaps...)}, nil
		})
		rev := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
			return refine.Response{Content: refinetest.ReviewerOutput(req.Round, req.Gaps)}, nil
		})
		return eng, rev
	}
	for failAt := 1; failAt <= 6; failAt++ {
		mem := memory.New()
		eng, rev := roles()
		cfg := refinetest.Config(eng, rev, refine.DeferAsker{},
			gap.Gap{ID: "GAP-TEST-001", Title: "The first gap", Severity: gap.High},
			gap.Gap{ID: "GAP-TEST-002", Title: "The second gap", Severity: gap.High},
			gap.Gap{ID: "GAP-TEST-003", Title: "The third gap", Severity: gap.High})
		cfg.GapsPerRound = 1
		cfg.Store = mem
		s, err := refine.New(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		for st, _ := s.Status(ctx); st.Round < 2; st, _ = s.Status(ctx) {
			if _, err := s.Step(ctx); err != nil {
				t.Fatal(err)
			}
		}
		rep, err := s.Rollback(ctx, refine.RollbackRequest{To: 1, Reason: "retry round 2"})
		if err != nil || len(rep.Pending) != 1 {
			t.Fatalf("Rollback = %+v, %v; want the options question", rep, err)
		}
		q := rep.Pending[0]
		key := q.Default
		a := refine.Answer{Key: key}
		if slices.Contains(q.TextRequired, key) {
			a.Text = "be concrete"
		}
		if err := s.Answer(ctx, q.ID, a); err != nil {
			t.Fatal(err)
		}
		// The run that carries the rollback out crashes at its failAt-th commit.
		cfg.Store = &crashingStore{Store: mem, failAt: failAt}
		crashing, err := refine.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := crashing.Run(ctx); err != nil && !errors.Is(err, errCrash) {
			t.Fatalf("failAt %d: Run = %v", failAt, err)
		}
		cfg.Store = mem
		reopened, err := refine.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := reopened.Status(ctx)
		if len(st.Rollbacks) == 0 {
			continue // crashed before the rollback: nothing to lose
		}
		if !slices.ContainsFunc(st.Decisions, func(d refine.DecisionStatus) bool { return d.Option == key }) {
			t.Errorf("failAt %d: the rollback is durable but the options question's decision (%q) is not: decisions %+v", failAt, key, st.Decisions)
		}
	}
}
