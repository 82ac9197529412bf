package refine_test

import (
	"strings"
	"testing"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
)

// Known limitations (DESIGN §16, turn 4): the LOW issue the last approved
// review left open is known before the integration call, so an integrated
// spec that does not list it fails INTEGRATION_MISSING and is retried; the
// LOW issue of the consistency review is appended by the Mediator to both
// final_spec.md and final_summary.md.
func TestIntegrationKnownLimitations(t *testing.T) {
	low := refinetest.Issue{Severity: gap.Low, Gap: "GAP-HOOK-002", Summary: "say which header carries the signature's key ID"}
	withIssue := strings.Replace(integrated(integratedOpts{}), "## Known Limitations\n\n",
		"## Known Limitations\n\n- ISSUE-R1-001 (LOW): the header carrying the signature's key ID is left to implementations.\n", 1)
	nit := refinetest.Issue{Severity: gap.Low, Gap: "GAP-HOOK-001", Summary: "the retry table repeats the 5-minute step"}

	eng := refinetest.Script(refinetest.EngineerOutput("GAP-HOOK-001", "GAP-HOOK-002"), integrated(integratedOpts{}), withIssue)
	rev := refinetest.Script(refinetest.ReviewerOutput(1, []gap.ID{"GAP-HOOK-001", "GAP-HOOK-002"}, low), consistencyReview(nit))
	cfg := refinetest.Config(eng, rev, auto(), hooksGaps...)
	cfg.Spec, cfg.Integrate, cfg.MaxRounds, cfg.GapsPerRound = hooksSpec, true, 1, 2
	run(t, cfg)

	if eng.CallCount() != 3 {
		t.Fatalf("engineer calls %d, want 3 (round 1, an integration without ISSUE-R1-001, its retry)", eng.CallCount())
	}
	if p := wholePrompt(eng, 1); !strings.Contains(p, "- ISSUE-R1-001 (LOW): say which header carries the signature's key ID (GAP-HOOK-002) [open issue of the round 1 review]") {
		t.Errorf("the integration prompt does not list ISSUE-R1-001 as a known limitation:\n%s", p)
	}
	if p := wholePrompt(eng, 2); !strings.Contains(p, "the open issue ISSUE-R1-001 is not listed under \"## Known Limitations\"") {
		t.Errorf("the retry prompt does not answer the INTEGRATION_MISSING of ISSUE-R1-001:\n%s", p)
	}
	spec := getKey(t, cfg.Store, "final_spec.md")
	_, limits, _ := strings.Cut(spec, "## Known Limitations\n")
	limits, _, _ = strings.Cut(limits, "## Resolution Log")
	for _, want := range []string{"ISSUE-R1-001 (LOW)", "- ISSUE-R2-001 (LOW, consistency review): the retry table repeats the 5-minute step (GAP-HOOK-001)"} {
		if !strings.Contains(limits, want) {
			t.Errorf("final_spec.md's Known Limitations lack %q:\n%s", want, limits)
		}
	}
	sum := getKey(t, cfg.Store, "final_summary.md")
	_, slimits, _ := strings.Cut(sum, "### Known Limitations\n")
	slimits, _, _ = strings.Cut(slimits, "###")
	for _, want := range []string{
		"- GAP-HOOK-003: Ordering guarantees are unspecified (LOW, open)\n",
		"- ISSUE-R1-001: say which header carries the signature's key ID (GAP-HOOK-002) (LOW, open issue of the round 1 review)\n",
		"- ISSUE-R2-001: the retry table repeats the 5-minute step (GAP-HOOK-001) (LOW, consistency review)\n",
	} {
		if !strings.Contains(slimits, want) {
			t.Errorf("final_summary.md's Known Limitations lack %q:\n%s", want, slimits)
		}
	}
	if strings.Contains(slimits, "None") {
		t.Errorf("final_summary.md's Known Limitations still say None:\n%s", slimits)
	}
	if tr := trace(t, cfg.Store); len(tr.KnownIssues) != 1 || tr.KnownIssues[0].ID != "ISSUE-R2-001" {
		t.Errorf("trace known issues %+v, want ISSUE-R2-001", tr.KnownIssues)
	}
}

// wholePrompt is the text of every message of a role's call i.
func wholePrompt(r *refinetest.Role, i int) string {
	var b strings.Builder
	for _, m := range r.Calls()[i].Messages {
		b.WriteString(m.Content + "\n")
	}
	return b.String()
}
