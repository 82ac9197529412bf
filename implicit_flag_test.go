package refine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/refinetest"
)

// An implicit flag raised only by "no reference" (H1) while the gap's
// section changed does not discard the Engineer's fix: no question, the
// gap is reviewed, the Reviewer's prompt asks it to check the issue, and
// the flag is logged in status.md.
func TestH1OnlyFlagKeepsTheFix(t *testing.T) {
	ctx := context.Background()
	fix := strings.ReplaceAll(revisedDoc("GAP-TEST-001", "ISSUE-R1-001"), "ISSUE-R1-001", "The reviewer")
	eng := refinetest.Script(engineerDoc("GAP-TEST-001"), fix)
	rev := refinetest.Script(reviewerDoc(1, "GAP-TEST-001", "HIGH: retry bound unspecified"), reviewerDoc(2, "GAP-TEST-001"))
	asker := &refinetest.Asker{}
	cfg := refinetest.Config(eng, rev, asker)
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil {
		t.Fatalf("run: %v (asked %v)", err, asker.Asked())
	}
	if len(asker.Asked()) != 0 {
		t.Errorf("questions asked: %v", asker.Asked())
	}
	if out.Status != refine.StatusComplete || out.Round != 2 {
		t.Errorf("outcome %+v, want COMPLETE in round 2 (the fix reviewed and accepted)", out)
	}
	if rev.CallCount() != 2 || !strings.Contains(rev.Prompt(1), "Check explicitly whether this round's Engineer output resolves ISSUE-R1-001") {
		t.Errorf("round 2 Reviewer prompt does not ask to check ISSUE-R1-001 (%d calls):\n%s", rev.CallCount(), rev.Prompt(1))
	}
	status := get(t, cfg, "status.md")
	for _, want := range []string{"Implicit disagreement (logged)", "ISSUE-R1-001"} {
		if !strings.Contains(status, want) {
			t.Errorf("status.md lacks %q", want)
		}
	}
}
