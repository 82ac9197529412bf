package refine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/refinetest"
)

// A fatal error leaves the session FAILED (resumable) wherever it is
// read, never RUNNING, and the next run takes it up again (issue #23).
func TestFatalErrorGivesFailedThenResumes(t *testing.T) {
	ctx := context.Background()
	broken := errors.New("backend refused the key")
	fail := true
	eng := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		if fail {
			return refine.Response{}, broken
		}
		return refine.Response{Content: refinetest.EngineerOutput(req.Gaps...)}, nil
	})
	_, rev := approvingRoles()
	cfg := refinetest.Config(eng, rev, refine.DeferAsker{})
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if !errors.Is(err, broken) || out.Status != refine.StatusFailed {
		t.Fatalf("Run: %s, %v; want FAILED wrapping the role's error", out.Status, err)
	}
	// Another process reads it.
	st, err := refine.Inspect(ctx, cfg.Store)
	if err != nil {
		t.Fatal(err)
	}
	if st.Outcome != refine.StatusFailed || !strings.Contains(st.Reason, "backend refused the key") {
		t.Errorf("Inspect: %s (%q), want FAILED with the error", st.Outcome, st.Reason)
	}
	md, err := cfg.Store.Get(ctx, "status.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "FAILED") {
		t.Errorf("status.md does not say FAILED:\n%s", md)
	}
	fail = false
	s, err = refine.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err = s.Run(ctx)
	if err != nil || out.Status != refine.StatusComplete {
		t.Fatalf("resumed run: %s, %v; want COMPLETE", out.Status, err)
	}
	if st, _ := refine.Inspect(ctx, cfg.Store); st.Outcome != refine.StatusComplete || st.Reason == "" || strings.Contains(st.Reason, "refused") {
		t.Errorf("after the resumed run: %s (%q)", st.Outcome, st.Reason)
	}
}
