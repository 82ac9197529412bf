package llm_test

import (
	"context"
	"fmt"

	"github.com/refine-spec/refine/llm"
)

// One limit shared by both roles of every session in this process.
func ExampleLimiter() {
	backend := llm.RoleFunc(func(ctx context.Context, req llm.Request) (llm.Response, error) {
		return llm.Response{Content: string(req.Role) + " answer"}, nil
	})
	limiter := llm.NewLimiter(4)
	engineer, reviewer := limiter.Wrap(backend), limiter.Wrap(backend)

	e, _ := engineer.Respond(context.Background(), llm.Request{Role: llm.Engineer})
	r, _ := reviewer.Respond(context.Background(), llm.Request{Role: llm.Reviewer})
	fmt.Println(e.Content, "/", r.Content, "/ limit", limiter.Limit())
	// Output: engineer answer / reviewer answer / limit 4
}
