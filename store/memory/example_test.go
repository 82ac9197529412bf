package memory_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/store/memory"
)

func Example() {
	ctx := context.Background()
	s := memory.New()

	// One commit writes a round's outputs and the state together.
	err := s.Commit(ctx,
		refine.Put("round_001/engineer.md", []byte("## Gap Resolution: GAP-FLOW-001\n")),
		refine.Put("round_001/reviewer.md", []byte("NO_ISSUES_FOUND\n")),
		refine.Put("state.json", []byte(`{"schema": 1, "round": 1}`)),
	)
	if err != nil {
		fmt.Println(err)
		return
	}

	keys, _ := s.List(ctx, "round_001/")
	fmt.Println(keys)

	state, _ := s.Get(ctx, "state.json")
	fmt.Println(string(state))

	_, err = s.Get(ctx, "final_spec.md")
	fmt.Println(errors.Is(err, refine.ErrNotFound))

	err = s.Commit(ctx, refine.Put("../escape.md", nil))
	fmt.Println(errors.Is(err, refine.ErrInvalidKey))
	// Output:
	// [round_001/engineer.md round_001/reviewer.md]
	// {"schema": 1, "round": 1}
	// true
	// true
}
