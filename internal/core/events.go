package core

import (
	"time"

	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/question"
	"github.com/refine-spec/refine/validate"
)

// Event is one progress report: what the decisions report, with the
// context of its scope once the driver's telemetry gives it one. Fields
// not relevant to a Kind are zero.
type Event struct {
	Kind  EventKind
	At    time.Time
	Round int
	Phase state.Phase
	Role  llm.RoleName
	// Call is, for an attempt's events, the session-wide index of the
	// role's call (Request.Call): a driver runs the call in the scope it
	// opened for the attempt's start.
	Call    int
	Attempt int
	Gap     string
	// FailureType is set for validation failures and retries.
	FailureType validate.FailureType
	Message     string
	Question    *question.Question
	Answer      *question.Answer
	// Usage is the session's running total after this event.
	Usage llm.Usage
	// AttemptUsage is, for EventAttemptFinished, what this attempt's role
	// call used (estimated with the Tokenizer when the backend said nothing).
	AttemptUsage llm.Usage
	// Elapsed is how long the attempt or phase took.
	Elapsed time.Duration
	Outcome OutcomeStatus
	// Success is, for EventAttemptFinished, whether the output validated.
	Success bool
	// Err is, for EventAttemptFinished and EventRunFinished, the error that
	// stopped the attempt or the run (a role's permanent error, a failed
	// commit, a cancelled context); nil otherwise.
	Err error `json:"-"`
	// Model is the model that answered an attempt, when the Role reported it.
	Model string
	// FinishReason is why the backend stopped generating, when reported.
	FinishReason string
	// ExampleTier is the tier (1-3) of the example attached to a retry's
	// prompt, 0 when none was.
	ExampleTier int
	// PreviousRun is, for EventRunStarted, the link stored for the last run
	// (see RunLinker); empty on the first.
	PreviousRun string
	// SessionID names the session the event belongs to.
	SessionID string
	// Context is the context of the scope the event happened in (a run, a
	// round or an attempt; see refine.SpanObserver): a context.Context,
	// which the driver sets. Nil for plain Observers' events outside any
	// scope.
	Context ScopeContext `json:"-"`
}

// ScopeContext is context.Context's method set, so that an Event carries
// its scope's context.Context although the decisions import no context:
// the two interface types are assignable to each other.
type ScopeContext interface {
	Deadline() (deadline time.Time, ok bool)
	Done() <-chan struct{}
	Err() error
	Value(key any) any
}
