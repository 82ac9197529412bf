package refine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/refinetest"
)

// A retry's prompt attaches the very example the Example Attachment Log
// names for that retry: it is selected once, when the failure is recorded.
func TestRetryAttachesTheLoggedExample(t *testing.T) {
	ctx := context.Background()
	eng := refinetest.Script("not a proposal at all", engineerDoc("GAP-TEST-001"))
	rev := refinetest.Script(reviewerDoc(1, "GAP-TEST-001"))
	cfg := refinetest.Config(eng, rev, auto())
	tier := -1
	cfg.Observer = refine.ObserverFunc(func(e refine.Event) {
		if e.Kind == refine.EventAttemptStarted && e.Role == refine.Engineer && e.Attempt == 2 {
			tier = e.ExampleTier
		}
	})
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := s.Run(ctx); err != nil || out.Status != refine.StatusComplete {
		t.Fatalf("Run = %+v, %v", out, err)
	}
	prompt := get(t, cfg, "round_001/prompts/engineer-2.md")
	status := get(t, cfg, "status.md")
	i := strings.Index(status, "- **Example Source:** ")
	if i < 0 {
		t.Fatalf("status.md has no example log entry:\n%s", status)
	}
	source := strings.TrimSpace(strings.SplitN(status[i+len("- **Example Source:** "):], "\n", 2)[0])
	if !strings.HasPrefix(source, fmt.Sprintf("Tier %d ", tier)) {
		t.Errorf("the retry prompt attached a tier %d example; the log says %q", tier, source)
	}
	if !strings.Contains(prompt, "Source: ") {
		t.Errorf("the retry prompt attaches no example:\n%s", prompt)
	}
}
