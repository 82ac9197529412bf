package question_test

import (
	"fmt"

	"github.com/refine-spec/refine/question"
)

// A package words a question, lists its options in the body with Menu, and
// checks the user's answer before acting on the chosen option's Effect.
func Example() {
	opts := []question.Option{
		{Key: "1", Label: "Continue - Start the next round", Effect: "Gaps stay as they are", Recommended: true},
		{Key: "2", Label: "Pause session - Save state for later", Effect: "Session saved"},
	}
	q := question.Question{
		ID: "r4-round-failed", Kind: question.KindRoundFailed, Round: 4,
		Title:   "Round 4: neither role produced valid output",
		Body:    "Both roles failed validation in round 4.\n\n=== Options ===\n" + question.Menu(opts),
		Options: opts,
		Default: "1",
	}
	fmt.Println(q.Body)

	if err := q.Check(question.Answer{Key: "3"}); err != nil {
		fmt.Println(err)
	}
	a := question.Answer{Key: "2"}
	if err := q.Check(a); err == nil {
		o, _ := q.Option(a.Key)
		fmt.Println("chosen:", o.Effect)
	}
	// Output:
	// Both roles failed validation in round 4.
	//
	// === Options ===
	// 1. Continue - Start the next round
	//    Effect: Gaps stay as they are
	//
	// 2. Pause session - Save state for later
	//    Effect: Session saved
	//
	// Choose an option (1-2): ___
	// invalid answer: question r4-round-failed offers 1, 2, not "3"
	// chosen: Session saved
}
