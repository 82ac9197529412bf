package memory_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/memory"
)

func Example() {
	ctx := context.Background()
	s := memory.New()

	// One commit writes a round's outputs and the state together.
	err := s.Commit(ctx,
		store.Put("round_001/engineer.md", []byte("## Gap Resolution: GAP-FLOW-001\n")),
		store.Put("round_001/reviewer.md", []byte("NO_ISSUES_FOUND\n")),
		store.Put("state.json", []byte(`{"schema": 1, "round": 1}`)),
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
	fmt.Println(errors.Is(err, store.ErrNotFound))

	err = s.Commit(ctx, store.Put("../escape.md", nil))
	fmt.Println(errors.Is(err, store.ErrInvalidKey))
	// Output:
	// [round_001/engineer.md round_001/reviewer.md]
	// {"schema": 1, "round": 1}
	// true
	// true
}
