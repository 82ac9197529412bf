package llm_test

import (
	"context"
	"fmt"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/llm"
)

// One limit shared by both roles of every session in this process.
func ExampleLimiter() {
	backend := refine.RoleFunc(func(ctx context.Context, req refine.Request) (refine.Response, error) {
		return refine.Response{Content: string(req.Role) + " answer"}, nil
	})
	limiter := llm.NewLimiter(4)
	engineer, reviewer := limiter.Wrap(backend), limiter.Wrap(backend)

	e, _ := engineer.Respond(context.Background(), refine.Request{Role: refine.Engineer})
	r, _ := reviewer.Respond(context.Background(), refine.Request{Role: refine.Reviewer})
	fmt.Println(e.Content, "/", r.Content, "/ limit", limiter.Limit())
	// Output: engineer answer / reviewer answer / limit 4
}
