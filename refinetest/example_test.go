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

// A host tests its integration against answers written like real models
// write them: Quirky wraps its roles and, at the given rates, fences
// answers, shifts headings, cuts answers at the token limit and refuses.
// The session reads the same answers and pays exactly one call for each
// cut or refused one.
func ExampleQuirky() {
	ctx := context.Background()
	eng := refinetest.Func(func(ctx context.Context, req refine.Request) (refine.Response, error) {
		return refine.Response{Content: refinetest.EngineerOutput(req.Gaps...)}, nil
	})
	rev := refinetest.Func(func(ctx context.Context, req refine.Request) (refine.Response, error) {
		return refine.Response{Content: refinetest.ReviewerOutput(req.Round, req.Gaps)}, nil
	})
	cfg := refinetest.QuirkConfig{Seed: 3, Rates: refinetest.QuirkRates{Benign: 1}}
	qe, qr := refinetest.Quirky(eng, cfg), refinetest.Quirky(rev, cfg)
	s, err := refine.New(ctx, refinetest.Config(qe, qr, &refinetest.Asker{DefaultAfterScript: true}))
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := s.Run(ctx)
	fmt.Println(out.Status, err, eng.CallCount()+rev.CallCount(), len(qe.Applied())+len(qr.Applied()))
	// Output: COMPLETE <nil> 2 2
}
