package refine_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
)

// repeatedRollback plays round 1 of a one-gap session, rolls it back
// (reason, with an adjustment: no question), plays it again and rolls it
// back again (reason), the repeated-rollback question answered by a.
// Attempt k of the round writes the extra section sections[k] and draws
// the Reviewer finding findings[k] against the gap.
func repeatedRollback(t *testing.T, a refine.Answer, reasons, sections, findings [2]string) (*refine.Session, *script, refine.RollbackReport) {
	t.Helper()
	ctx := context.Background()
	const id gap.ID = "GAP-HOOK-001"
	var mu sync.Mutex
	calls := map[refine.RoleName]int{}
	next := func(r refine.RoleName) int {
		mu.Lock()
		defer mu.Unlock()
		calls[r]++
		return min(calls[r], 2) - 1
	}
	eng := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		extra := "### " + sections[next(refine.Engineer)] + "\n\nWhat this attempt addressed, in detail.\n\n### Trade-offs"
		return refine.Response{Content: strings.Replace(engineerDoc(req.Gaps...), "### Trade-offs", extra, 1)}, nil
	})
	rev := refinetest.Func(func(_ context.Context, req refine.Request) (refine.Response, error) {
		f := findings[next(refine.Reviewer)]
		return refine.Response{Content: refinetest.ReviewerOutput(req.Round, req.Gaps, refinetest.Issue{Severity: gap.Medium, Gap: id, Summary: f})}, nil
	})
	sc := &script{answers: []scripted{{"REPEATED ROLLBACK DETECTED", a}}}
	cfg := refinetest.Config(eng, rev, sc, gap.Gap{ID: id, Title: "Retry schedule", Severity: gap.High}, gap.Gap{ID: "GAP-HOOK-002", Title: "Signatures", Severity: gap.Medium})
	cfg.GapsPerRound, cfg.MaxRounds = 1, 1
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Step(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Rollback(ctx, refine.RollbackRequest{To: 0, Reason: reasons[0], Adjustments: []string{"Be concrete."}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Step(ctx); err != nil {
		t.Fatal(err)
	}
	rep, err := s.Rollback(ctx, refine.RollbackRequest{To: 0, Reason: reasons[1]})
	if err != nil {
		t.Fatalf("second rollback: %v (asked %v)", err, sc.titles())
	}
	return s, sc, rep
}

// shownSplit returns the sub-gap titles the analysis question shows.
func shownSplit(body string) []string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if _, title, ok := strings.Cut(l, "  - GAP-HOOK-001"); ok && len(title) > 3 {
			out = append(out, strings.Trim(title[3:], `"`))
		}
	}
	return out
}

// The split "as suggested" is offered with its sub-gaps shown, whatever
// the recommendation (#40 item 2b), and each sub-gap comes from a distinct
// concern the analysis found: a section only one attempt wrote, or a
// Reviewer finding, the same finding worded twice counting once (#40 item
// 2c). Answering it creates the sub-gaps shown.
func TestRepeatedRollbackSplitAsShown(t *testing.T) {
	ctx := context.Background()
	s, sc, _ := repeatedRollback(t, refine.Answer{Key: "1"},
		[2]string{"output too abstract", "output too abstract"}, // the same failure: context is recommended
		[2]string{"Backoff schedule", "Dead-letter queue"},
		[2]string{"Retry timing still unclear", "Retry timing unclear again"})
	q, ok := sc.find("REPEATED ROLLBACK DETECTED")
	if !ok {
		t.Fatalf("no repeated-rollback question; asked %v", sc.titles())
	}
	if o, _ := q.Option("1"); o.Label != "Split gap as suggested" || o.Recommended || q.Default == "1" {
		t.Errorf("option 1 = %+v (default %q), want the split as suggested, not recommended", o, q.Default)
	}
	if !strings.Contains(q.Body, "recommended action: Provide additional context") || !strings.Contains(q.Body, "If you split it instead, suggested split:\n") {
		t.Errorf("the analysis does not show the split it offers:\n%s", q.Body)
	}
	shown := shownSplit(q.Body)
	want := []string{"Retry schedule: Backoff schedule", "Retry schedule: Dead-letter queue", "Retry schedule: Retry timing still unclear"}
	if diff := cmp.Diff(want, shown); diff != "" {
		t.Errorf("suggested sub-gaps (-want +got):\n%s\n%s", diff, q.Body)
	}
	st, _ := s.Status(ctx)
	var children []string
	for _, g := range st.Gaps {
		if g.ID.Parent() == "GAP-HOOK-001" && g.ID != "GAP-HOOK-001" {
			children = append(children, g.Title)
		}
	}
	if diff := cmp.Diff(shown, children); diff != "" {
		t.Errorf("the sub-gaps created are not those shown (-shown +created):\n%s", diff)
	}
}

// Concerns that are one (the same finding worded twice, sections every
// attempt wrote) suggest no split: the split is offered only with titles
// given as text, and nothing is shown as suggested (#40 items 2b, 2c).
func TestRepeatedRollbackNoSplitWithoutConcerns(t *testing.T) {
	_, sc, _ := repeatedRollback(t, refine.Answer{Key: "3"},
		[2]string{"output too abstract", "output too abstract"},
		[2]string{"Delivery log", "Delivery log"},
		[2]string{"Retry timing still unclear", "Retry timing unclear again"})
	q, ok := sc.find("REPEATED ROLLBACK DETECTED")
	if !ok {
		t.Fatalf("no repeated-rollback question; asked %v", sc.titles())
	}
	if o, _ := q.Option("1"); o.Label != "Split gap (give sub-gap titles, one per line)" || !slices.Contains(q.TextRequired, "1") {
		t.Errorf("option 1 = %+v (text required: %v), want a split that asks for titles", o, q.TextRequired)
	}
	for _, o := range q.Options {
		if strings.Contains(o.Label, "as suggested") {
			t.Errorf("offers %q with no suggestion shown:\n%s", o.Label, q.Body)
		}
	}
	if strings.Contains(q.Body, "uggested split") || len(shownSplit(q.Body)) != 0 {
		t.Errorf("shows a split from one concern:\n%s", q.Body)
	}
}
