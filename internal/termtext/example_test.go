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

// Overrides and isolates are made visible; the marks right-to-left text
// needs stay.
func ExampleEscape_bidi() {
	fmt.Println(termtext.Escape("Offset \u202eDETAVITCA\u202c"))
	fmt.Println(termtext.Escape("שלום\u200f!") == "שלום\u200f!")
	// Output:
	// Offset <U+202E>DETAVITCA<U+202C>
	// true
}
