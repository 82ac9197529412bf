package refine_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
)

// A session that ends from the rollback-limit question (abandon, or
// accept as approved) while another question is pending asks nothing
// more: the other question can no longer apply, so it must not stay
// pending and keep the finished session PAUSED (found by the session
// simulator, #23: seeds 20 and 270).
func TestFinishFromLimitDialogDropsOtherQuestions(t *testing.T) {
	for _, effect := range []string{"Abandon", "Accept"} {
		t.Run(effect, func(t *testing.T) {
			ctx := context.Background()
			eng := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
				return refine.Response{Content: refinetest.EngineerOutput(req.Gaps...)}, nil
			})
			rev := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
				return refine.Response{Content: refinetest.ReviewerOutput(req.Round, req.Gaps)}, nil
			})
			cfg := refinetest.Config(eng, rev, refine.DeferAsker{},
				gap.Gap{ID: "GAP-TEST-001", Title: "The first gap", Severity: gap.High},
				gap.Gap{ID: "GAP-TEST-002", Title: "The second gap", Severity: gap.Low})
			cfg.GapsPerRound, cfg.RollbackLimit = 1, 1
			s, err := refine.New(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			pausedAt := func() refine.Outcome {
				t.Helper()
				o, err := s.Run(ctx)
				if err != nil || o.Status != refine.StatusPaused || len(o.Pending) == 0 {
					t.Fatalf("Run = %+v, %v; want a pause at a question", o, err)
				}
				return o
			}
			first := pausedAt()
			if _, err := s.Rollback(ctx, refine.RollbackRequest{To: 0, Reason: "retry", Adjustments: []string{"be concrete"}}); err != nil {
				t.Fatalf("first rollback: %v", err)
			}
			for o := pausedAt(); !slices.ContainsFunc(o.Pending, func(q refine.Question) bool { return q.ID == first.Pending[0].ID }); o = pausedAt() {
				q := o.Pending[0]
				if err := s.Answer(ctx, q.ID, refine.Answer{Key: q.Default}); err != nil {
					t.Fatal(err)
				}
			}
			// The second rollback hits the limit: its question waits (next to
			// the other, before a rollback dropped the questions waiting).
			if _, err := s.Rollback(ctx, refine.RollbackRequest{To: 0, Reason: "again"}); !errors.Is(err, refine.ErrRollbackLimit) {
				t.Fatalf("second rollback = %v, want ErrRollbackLimit", err)
			}
			st, _ := s.Status(ctx)
			i := slices.IndexFunc(st.Pending, func(q refine.Question) bool { return strings.Contains(q.ID, "rollback-limit") })
			if i < 0 {
				t.Fatalf("pending %v, want the limit question", st.Pending)
			}
			limit := st.Pending[i]
			k := slices.IndexFunc(limit.Options, func(o refine.Option) bool { return strings.HasPrefix(o.Label, effect) })
			if k < 0 {
				t.Fatalf("the limit question offers no %q option: %+v", effect, limit.Options)
			}
			if err := s.Answer(ctx, limit.ID, refine.Answer{Key: limit.Options[k].Key}); err != nil {
				t.Fatal(err)
			}
			o, err := s.Run(ctx)
			if err != nil {
				t.Fatal(err)
			}
			st, _ = s.Status(ctx)
			var left []string
			for _, q := range st.Pending {
				if q.Title != "ARCHIVE CLEANUP" {
					left = append(left, q.ID)
				}
			}
			if !st.Outcome.Terminal() || !o.Status.Terminal() || len(left) > 0 {
				t.Errorf("after %q at the limit: Run %s, status %s, pending %v; want a finished session with no question but the archive cleanup", limit.Options[k].Label, o.Status, st.Outcome, left)
			}
		})
	}
}
