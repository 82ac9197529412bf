package refine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/store/memory"
)

// noCopies hides a Store's Copier capability.
type noCopies struct{ refine.Store }

func (n noCopies) Appends() bool { return true }

// status.md and decisions.md are rewritten between rounds, even when no
// question waits there (the Asker answers at once): when round 3's
// Engineer is called, status.md shows round 2 completed, and the backup of
// round 2 holds the same text — copied where the Store copies, written
// again where it does not.
func TestStatusCurrentBetweenRounds(t *testing.T) {
	for _, tc := range []struct {
		name  string
		store func() refine.Store
	}{
		{"copier", func() refine.Store { return memory.New() }},
		{"no copier", func() refine.Store { return noCopies{memory.New()} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			st := tc.store()
			var seen, backup string
			eng := refinetest.Func(func(ctx context.Context, req refine.Request) (refine.Response, error) {
				if req.Round == 3 && seen == "" {
					b, _ := st.Get(ctx, "status.md")
					seen = string(b)
					b, _ = st.Get(ctx, "status_backup_round_2.md")
					backup = string(b)
				}
				return refine.Response{Content: refinetest.EngineerOutput(req.Gaps...)}, nil
			})
			rev := refinetest.Func(func(ctx context.Context, req refine.Request) (refine.Response, error) {
				return refine.Response{Content: refinetest.ReviewerOutput(req.Round, req.Gaps)}, nil
			})
			cfg := refinetest.Config(eng, rev, refine.DefaultAsker{}, benchGaps(4)...)
			cfg.GapsPerRound, cfg.Store = 1, st
			s, err := refine.New(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if out, err := s.Run(ctx); err != nil || out.Status != refine.StatusComplete {
				t.Fatalf("Run = %+v, %v", out, err)
			}
			if !strings.Contains(seen, "**Round:** 2 completed") {
				t.Errorf("status.md when round 3 started:\n%.300s", seen)
			}
			if backup != seen {
				t.Errorf("status_backup_round_2.md differs from status.md as round 2 ended:\n%.300s", backup)
			}
			for _, k := range []string{"round_002/engineer.md", "round_002/reviewer.md"} {
				attempt := strings.Replace(k, "/", "/attempts/", 1)
				attempt = strings.Replace(attempt, ".md", "-1.md", 1)
				a, _ := st.Get(ctx, k)
				b, _ := st.Get(ctx, attempt)
				if len(a) == 0 || string(a) != string(b) {
					t.Errorf("%s (%d bytes) is not the response %s journaled (%d bytes)", k, len(a), attempt, len(b))
				}
			}
		})
	}
}
