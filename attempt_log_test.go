package refine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/refinetest"
)

// The validation summary of a round is derived from its attempt facts, so
// it reads the same while the round waits at the escalation question and
// after the round is over (it used to fall back to the tier,
// "Structure", once the round's attempts had left the state).
func TestValidationSummaryStaysTheSameAfterTheRound(t *testing.T) {
	ctx := context.Background()
	eng := refinetest.Script("not a proposal", "still not", "nope", engineerDoc("GAP-TEST-001"))
	rev := refinetest.Script(reviewerDoc(1, "GAP-TEST-001"))
	cfg := refinetest.Config(eng, rev, refine.DeferAsker{})
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil || len(out.Pending) != 1 {
		t.Fatalf("Run: %v, pending %v", err, out.Pending)
	}
	const want = "| Engineer | FAILED | 3 | WRONG_FORMAT |"
	paused := section(get(t, cfg, "status.md"), "## Round 1 Validation Log")
	if !strings.Contains(paused, want) {
		t.Fatalf("while paused, the summary lacks %q:\n%s", want, paused)
	}
	// Skip the Engineer: the round ends without a valid Engineer output.
	if err := s.Answer(ctx, out.Pending[0].ID, refine.Answer{Key: "1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Step(ctx); err != nil {
		t.Fatal(err)
	}
	after := section(get(t, cfg, "status.md"), "## Round 1 Validation Log")
	if !strings.Contains(after, want) {
		t.Errorf("after the round, the summary lacks %q:\n%s", want, after)
	}
	if !strings.Contains(after, "#### Engineer Retry 2") || !strings.Contains(after, "- **Outcome:** Failed again (WRONG_FORMAT)") {
		t.Errorf("retry details are not derived from the attempts:\n%s", after)
	}
	errs := section(get(t, cfg, "status.md"), "## Round 1 Errors")
	for _, want := range []string{"| Engineer | WRONG_FORMAT | Retry 1 initiated |", "| Engineer | WRONG_FORMAT | Retries exhausted: escalating |"} {
		if !strings.Contains(errs, want) {
			t.Errorf("the error table lacks %q:\n%s", want, errs)
		}
	}
}
