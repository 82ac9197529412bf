package refine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/refinetest"
)

// A session ended in the middle of a round (abandoned at an escalation
// question) renders status.md and decisions.md with its end: the end
// decision and the outcome (found by the session simulator, #23: seed 17,
// where Run's decisions.md missed the abandon decision and the archive
// cleanup's).
func TestEndMidRoundRendersDecisionsAndStatus(t *testing.T) {
	ctx := context.Background()
	eng := refinetest.Func(func(context.Context, refine.Request) (refine.Response, error) {
		return refine.Response{Content: "not a proposal"}, nil
	})
	rev := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		return refine.Response{Content: refinetest.ReviewerOutput(req.Round, req.Gaps)}, nil
	})
	cfg := refinetest.Config(eng, rev, refine.DeferAsker{})
	cfg.MaxRetries = 0
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	o, err := s.Run(ctx)
	if err != nil || o.Status != refine.StatusPaused || len(o.Pending) == 0 || o.Pending[0].Kind != refine.KindEscalation {
		t.Fatalf("Run = %+v, %v; want a pause at the Engineer's escalation", o, err)
	}
	if err := s.Abandon(ctx, "enough"); err != nil {
		t.Fatal(err)
	}
	if o, err := s.Run(ctx); err != nil || o.Status != refine.StatusAbandoned {
		t.Fatalf("Run after Abandon = %+v, %v", o, err)
	}
	for key, want := range map[string]string{"decisions.md": "Abandon the session", "status.md": "ABANDONED"} {
		b, err := cfg.Store.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), want) {
			t.Errorf("%s after abandoning mid-round lacks %q:\n%s", key, want, b)
		}
	}
}
