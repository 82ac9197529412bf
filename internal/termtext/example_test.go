package termtext_test

import (
	"fmt"

	"github.com/refine-spec/refine/internal/termtext"
)

func ExampleEscape() {
	title := "Pick one\x1b]0;owned\a\x1b[2J"
	fmt.Println(termtext.Escape(title))
	// Output: Pick one\x1b]0;owned\x07\x1b[2J
}
