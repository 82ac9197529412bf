package replay_test

import (
	"context"
	"fmt"
	"testing/fstest"

	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/llm/replay"
)

func ExampleNew() {
	rec := fstest.MapFS{ // replay.Dir("testdata/session") reads a directory
		"engineer-001.md": {Data: []byte("first proposal")},
		"engineer-002.md": {Data: []byte("second proposal")},
	}
	role := replay.New(rec, replay.WithLabel("testdata/session"))
	for attempt := 1; attempt <= 3; attempt++ {
		resp, err := role.Respond(context.Background(), llm.Request{Role: llm.Engineer, Round: 1, Attempt: attempt})
		fmt.Printf("%q %v\n", resp.Content, err)
	}
	// Output:
	// "first proposal" <nil>
	// "second proposal" <nil>
	// "" replay: no file engineer-003.md in testdata/session for round 1 attempt 3: the recording has 2 engineer responses; record more or start a live run: open engineer-003.md: file does not exist (the role has no response for this call)
}

// A resumed session continues where the previous process stopped.
func ExampleWithStart() {
	rec := fstest.MapFS{
		"reviewer-001.md": {Data: []byte("review of round 1")},
		"reviewer-002.md": {Data: []byte("review of round 2")},
	}
	role := replay.New(rec, replay.WithStart(llm.Reviewer, 1))
	resp, _ := role.Respond(context.Background(), llm.Request{Role: llm.Reviewer, Round: 2, Attempt: 1})
	fmt.Println(resp.Content)
	// Output: review of round 2
}
