package gap

import (
	"errors"
	"fmt"
)

// State is a gap's lifecycle state (GAP-FLOW-010). The allowed transitions
// are CanTransition's; docs/workflow.md#gap-states lists them with when each
// happens.
type State string

// The eight lifecycle states. The first five are open, the last three closed.
const (
	Open          State = "OPEN"
	InProgress    State = "IN_PROGRESS"
	Proposed      State = "PROPOSED"
	NeedsRevision State = "NEEDS_REVISION"
	Blocked       State = "BLOCKED"
	Accepted      State = "ACCEPTED"
	Deferred      State = "DEFERRED"
	Superseded    State = "SUPERSEDED"
)

// ErrInvalidTransition is returned for a state change the lifecycle table
// does not allow. Match it with errors.Is.
var ErrInvalidTransition = errors.New("invalid gap state transition")

// Valid reports whether s is one of the eight states.
func (s State) Valid() bool {
	switch s {
	case Open, InProgress, Proposed, NeedsRevision, Blocked, Accepted, Deferred, Superseded:
		return true
	}
	return false
}

// IsOpen reports whether a gap in state s still needs work.
func (s State) IsOpen() bool {
	switch s {
	case Open, InProgress, Proposed, NeedsRevision, Blocked:
		return true
	}
	return false
}

// IsClosed reports whether s is ACCEPTED, DEFERRED or SUPERSEDED.
func (s State) IsClosed() bool { return s.Valid() && !s.IsOpen() }

// CanTransition reports whether the lifecycle allows from → to.
func CanTransition(from, to State) bool {
	if !from.Valid() || !to.Valid() || from == to {
		return false
	}
	switch to {
	case Blocked:
		// Any open state may block (conflict or waiting on the user), except
		// BLOCKED itself, excluded above.
		return from.IsOpen()
	case Deferred, Superseded:
		return from.IsOpen()
	}
	switch from {
	case Open:
		return to == InProgress
	case InProgress:
		return to == Proposed || to == Open
	case Proposed:
		return to == Accepted || to == NeedsRevision
	case NeedsRevision:
		return to == InProgress
	case Blocked:
		return to == InProgress || to == Open || to == Accepted
	case Accepted:
		return to == NeedsRevision
	case Deferred:
		return to == Open
	}
	return false
}

// CheckTransition returns nil when from → to is allowed and an error
// wrapping ErrInvalidTransition otherwise.
func CheckTransition(from, to State) error {
	if CanTransition(from, to) {
		return nil
	}
	return fmt.Errorf("%w: %s → %s is not in the lifecycle table", ErrInvalidTransition, from, to)
}
