package state

import (
	"fmt"

	"github.com/refine-spec/refine/gap"
)

// The discovery step's steps (DESIGN §19).
const (
	// DiscoverCall: the Reviewer's discovery call, retried until an
	// answer reads as a gap list or the attempts are spent.
	DiscoverCall = "call"
	// DiscoverConfirm: the list waits for the person's confirmation.
	DiscoverConfirm = "confirm"
	// DiscoverEscalate: every attempt failed; the person decides.
	DiscoverEscalate = "escalate"
	// DiscoverDone: the list is the session's gaps.
	DiscoverDone = "done"
)

// DiscoveryState is the discovery step's progress, in state.json: the
// session's first step when it starts from a draft alone (or with a list
// and the request to propose additions).
type DiscoveryState struct {
	Step string `json:"step"`
	// Given are the gaps the session started with (run --gaps G
	// --discover): discovery proposes additions to them.
	Given []gap.ID `json:"given,omitempty"`
	// MaxGaps caps the session's gaps (Config.MaxGaps; 0: the default).
	MaxGaps int `json:"max_gaps,omitempty"`

	Attempts []AttemptRec `json:"attempts,omitempty"`
	Budget   int          `json:"budget"`
	// From is where the current run of attempts started (a retry notice
	// answers an attempt of the same run).
	From int `json:"from,omitempty"`
	// Guidance is the person's text when they asked to discover again.
	Guidance string `json:"guidance,omitempty"`

	// Proposed is the list the last valid answer proposed, with each gap's
	// Location and Why; NoGaps says it said NO_GAPS_FOUND, with what it
	// checked (Checklist).
	Proposed  []gap.Gap `json:"proposed,omitempty"`
	NoGaps    bool      `json:"no_gaps,omitempty"`
	Checklist []string  `json:"checklist,omitempty"`
	// Asked counts the questions answered (their IDs).
	Asked int `json:"asked,omitempty"`
	// Confirmed says how the list became the session's: "accepted",
	// "edited", "dropped …", once Step is done.
	Confirmed string `json:"confirmed,omitempty"`
}

// RunAttempts are the attempts of the current run (since the budget was
// last set).
func (d *DiscoveryState) RunAttempts() []AttemptRec {
	return d.Attempts[min(d.From, len(d.Attempts)):]
}

// DiscoveryAttemptKeys are the journal keys of discovery attempt k.
func DiscoveryAttemptKeys(k int) (prompt, response string) {
	return fmt.Sprintf("discovery/prompts/reviewer-%d.md", k), fmt.Sprintf("discovery/attempts/reviewer-%d.md", k)
}

// The discovery step's files: the accepted answer as read, and the list
// the person confirmed (a gap list `refine run --gaps` takes).
const (
	KeyDiscoveryAnswer = "discovery/reviewer.md"
	KeyDiscoveryGaps   = "discovery/gaps.md"
)
