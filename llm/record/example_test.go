package record_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/llm/record"
	"github.com/refine-spec/refine/llm/replay"
)

// Record a live Role, then replay the recording.
func ExampleNew() {
	dir, err := os.MkdirTemp("", "refine-record")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	live := llm.RoleFunc(func(ctx context.Context, req llm.Request) (llm.Response, error) {
		return llm.Response{Content: fmt.Sprintf("%s answer for round %d", req.Role, req.Round)}, nil
	})
	rec, err := record.New(live, filepath.Join(dir, "rec"))
	if err != nil {
		fmt.Println(err)
		return
	}
	for round := 1; round <= 2; round++ {
		rec.Respond(context.Background(), llm.Request{Role: llm.Engineer, Round: round, Attempt: 1})
	}
	rec.Respond(context.Background(), llm.Request{Role: llm.Reviewer, Round: 1, Attempt: 1})

	entries, _ := os.ReadDir(rec.Dir())
	for _, e := range entries {
		fmt.Println(e.Name())
	}
	resp, _ := replay.Dir(rec.Dir()).Respond(context.Background(), llm.Request{Role: llm.Engineer})
	fmt.Println(resp.Content)
	// Output:
	// engineer-001.md
	// engineer-002.md
	// reviewer-001.md
	// engineer answer for round 1
}
