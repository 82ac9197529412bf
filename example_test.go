package refine_test

import (
	"context"
	"fmt"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/memory"
)

// A complete scripted session: the Engineer resolves the gap, the Reviewer
// approves, and the session completes after one round.
func Example() {
	ctx := context.Background()
	cfg := refine.DefaultConfig()
	cfg.Store = memory.New()
	cfg.Engineer = refinetest.Script(engineerDoc("GAP-API-001"))
	cfg.Reviewer = refinetest.Script(reviewerDoc(1, "GAP-API-001"))
	cfg.Asker = refine.DefaultAsker{} // automated mode: every question takes its default
	cfg.Spec = "# Orders API\n\nPagination is unspecified (GAP-API-001).\n"
	cfg.Gaps = []gap.Gap{{ID: "GAP-API-001", Title: "Pagination is unspecified", Severity: gap.High}}

	s, err := refine.New(ctx, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := s.Run(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	st, _ := s.Status(ctx)
	fmt.Println(out.Status, "after round", out.Round)
	fmt.Println(st.Gaps[0].ID, st.Gaps[0].State)
	// Output:
	// COMPLETE after round 1
	// GAP-API-001 ACCEPTED
}

// A question the host cannot answer now is deferred: Run returns Paused
// with the question, the host stores nothing itself, and a later process
// opens the session, answers, and runs on from exactly where it stopped.
func Example_deferredAnswer() {
	ctx := context.Background()
	store := memory.New() // in a real host: store/fs.Open(dir)
	cfg := refinetest.Config(
		refinetest.Script("not a proposal", "still not", "nope", engineerDoc("GAP-TEST-001")),
		refinetest.Script(reviewerDoc(1, "GAP-TEST-001")),
		refine.DeferAsker{}, // e.g. a web UI that answers later
	)
	cfg.Store = store

	s, _ := refine.New(ctx, cfg)
	out, _ := s.Run(ctx)
	fmt.Println(out.Status, out.Pending[0].ID)

	// Later, maybe in another process.
	s2, _ := refine.Open(ctx, cfg)
	_ = s2.Answer(ctx, out.Pending[0].ID, refine.Answer{Key: "3", Text: "Start each gap with '## Gap Resolution:'."})
	out, _ = s2.Run(ctx)
	fmt.Println(out.Status)
	// Output:
	// PAUSED r1-engineer-escalation-1
	// COMPLETE
}

// A custom Store only needs Get, List and Commit; storetest checks it.
// Here an existing Store is wrapped to count commits.
type countingStore struct {
	refine.Store
	commits int
}

func (c *countingStore) Commit(ctx context.Context, ops ...store.Op) error {
	c.commits++
	return c.Store.Commit(ctx, ops...)
}

func Example_customStore() {
	ctx := context.Background()
	cs := &countingStore{Store: memory.New()}
	cfg := refinetest.Config(refinetest.Script(engineerDoc("GAP-TEST-001")), refinetest.Script(reviewerDoc(1, "GAP-TEST-001")), refine.DefaultAsker{})
	cfg.Store = cs
	s, _ := refine.New(ctx, cfg)
	out, _ := s.Run(ctx)
	fmt.Println(out.Status, cs.commits > 0)
	// Output: COMPLETE true
}

// A host that makes the role calls itself (a queue, a batch API, a
// durable-execution engine) drives the session with Next: it gets the
// calls the session needs, makes them, delivers the responses and asks
// again; the session never calls a Role or the Asker.
func ExampleSession_Next() {
	ctx := context.Background()
	cfg := refinetest.Config(nil, nil, refine.DeferAsker{})
	cfg.Engineer, cfg.Reviewer = refine.RoleFunc(nil), refine.RoleFunc(nil) // never called by Next
	s, err := refine.New(ctx, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	for {
		ready, err := s.Next(ctx, refine.Play{})
		if err != nil {
			fmt.Println(err)
			return
		}
		// Persist what Next decided, then tell the session.
		if err := cfg.Store.Commit(ctx, ready.Persist...); err != nil {
			fmt.Println(err)
			return
		}
		if err := s.Advance(ctx); err != nil {
			fmt.Println(err)
			return
		}
		if len(ready.Calls) == 0 {
			fmt.Println(ready.Outcome.Status, "after round", ready.Outcome.Round)
			return
		}
		for _, req := range ready.Calls {
			// Elsewhere, the model answers; here, a fixed response.
			content := engineerDoc(req.Gaps...)
			if req.Role == refine.Reviewer {
				content = reviewerDoc(req.Round, req.Gaps[0])
			}
			fmt.Println("call", req.Role, req.Call)
			if err := s.Deliver(ctx, req, refine.Response{Content: content}); err != nil {
				fmt.Println(err)
				return
			}
		}
	}
	// Output:
	// call engineer 1
	// call reviewer 1
	// COMPLETE after round 1
}
