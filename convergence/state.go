package convergence

import (
	"fmt"
	"strconv"
	"strings"
)

// State is a round's convergence state in its canonical string form:
// "CONVERGING", "STALLED(k)" with k ≥ 1, or "DIVERGENCE_WARNING". The same
// form is used in JSON, status.md and final_summary.md.
type State string

// The fixed states; STALLED(k) is built with Stalled.
const (
	// Converging: the round made weighted progress.
	Converging State = "CONVERGING"
	// DivergenceWarning: the session stalled for StallRounds rounds or one
	// round's Net fell below the divergence threshold; the user is asked.
	DivergenceWarning State = "DIVERGENCE_WARNING"
)

const stalledPrefix = "STALLED("

// Stalled returns STALLED(k): the k-th consecutive round without weighted
// progress. k < 1 gives a State that is not Valid.
func Stalled(k int) State { return State(stalledPrefix + strconv.Itoa(k) + ")") }

// StallCount returns k for STALLED(k) and 0 for every other state.
func (s State) StallCount() int {
	rest, ok := strings.CutPrefix(string(s), stalledPrefix)
	if !ok {
		return 0
	}
	digits, ok := strings.CutSuffix(rest, ")")
	// Reject "STALLED(01)" and "STALLED(+1)" so each k has one spelling.
	if !ok || digits == "" || digits[0] < '1' || digits[0] > '9' {
		return 0
	}
	k, err := strconv.Atoi(digits)
	if err != nil || strconv.Itoa(k) != digits {
		return 0
	}
	return k
}

// Valid reports whether s is one of the three state forms.
func (s State) Valid() bool {
	return s == Converging || s == DivergenceWarning || s.StallCount() > 0
}

// ParseState checks that text is a valid state form.
func ParseState(text string) (State, error) {
	s := State(text)
	if !s.Valid() {
		return "", fmt.Errorf("convergence: %q is not a state: want CONVERGING, STALLED(k) with k >= 1, or DIVERGENCE_WARNING", text)
	}
	return s, nil
}

// Note is what the Mediator says about the state in a round summary
// (GAP-FLOW-002 "Mediator Actions by State"); "" for CONVERGING.
func (s State) Note() string {
	switch {
	case s == DivergenceWarning:
		return "Divergence warning: the session is not converging; the user decides how to proceed"
	case s.StallCount() > 0:
		return "No net progress this round"
	}
	return ""
}
