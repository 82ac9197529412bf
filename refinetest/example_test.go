package refinetest_test

import (
	"context"
	"fmt"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
)

// A host's test scripts both roles with valid outputs built for the gaps
// they are given, answers every question with its default, and checks the
// outcome: no model, no network, a fixed clock.
func Example() {
	ctx := context.Background()
	eng := refinetest.Func(func(ctx context.Context, req refine.Request) (refine.Response, error) {
		return refine.Response{Content: refinetest.EngineerOutput(req.Gaps...)}, nil
	})
	rev := refinetest.Func(func(ctx context.Context, req refine.Request) (refine.Response, error) {
		return refine.Response{Content: refinetest.ReviewerOutput(req.Round, req.Gaps)}, nil // no issues
	})
	cfg := refinetest.Config(eng, rev, &refinetest.Asker{DefaultAfterScript: true},
		gap.Gap{ID: "GAP-HOST-001", Title: "Retries are unbounded", Severity: gap.High})
	s, err := refine.New(ctx, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := s.Run(ctx)
	fmt.Println(out.Status, out.Round, err, eng.CallCount(), rev.CallCount())
	// Output: COMPLETE 1 <nil> 1 1
}

// ReviewerOutput numbers the issues of a round as the Mediator expects.
func ExampleReviewerOutput() {
	out := refinetest.ReviewerOutput(3, []gap.ID{"GAP-HOST-001"},
		refinetest.Issue{Severity: gap.High, Summary: "the bound is missing"})
	fmt.Println(refinetest.IssueID(3, 1), len(out) > 0)
	// Output: ISSUE-R3-001 true
}
