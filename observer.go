package refine

import (
	"context"
	"time"

	"github.com/refine-spec/refine/validate"
)

// Event is one progress report. Fields not relevant to a Kind are zero.
type Event struct {
	Kind  EventKind
	At    time.Time
	Round int
	Phase Phase
	Role  RoleName
	// Call is, for an attempt's events, the session-wide index of the
	// role's call (Request.Call).
	Call    int
	Attempt int
	Gap     string
	// FailureType is set for validation failures and retries.
	FailureType validate.FailureType
	Message     string
	Question    *Question
	Answer      *Answer
	// Usage is the session's running total after this event.
	Usage Usage
	// AttemptUsage is, for EventAttemptFinished, what this attempt's role
	// call used (estimated with the Tokenizer when the backend said nothing).
	AttemptUsage Usage
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
	// round or an attempt; see SpanObserver). Nil for plain Observers' events
	// outside any scope.
	Context context.Context `json:"-"`
}

// Observer receives progress events synchronously from the goroutine doing
// the work; it must return quickly and must not call back into the Mediator.
type Observer interface {
	Observe(Event)
}

// ObserverFunc adapts a function to an Observer.
type ObserverFunc func(Event)

// Observe calls f.
func (f ObserverFunc) Observe(e Event) { f(e) }

// SpanObserver is an Observer that also scopes work, so a host can open and
// close its own spans (OpenTelemetry, a profiler) around a run, a round and
// each role attempt. The session checks for it by type assertion.
//
// Begin is called for EventRunStarted, EventRoundStarted and
// EventAttemptStarted, before the work; the context it returns is the one
// that work runs in (an attempt's context is the one Role.Respond gets).
// End is called with that context for the matching EventRunFinished,
// EventRoundFinished and EventAttemptFinished. Observe still receives every
// event, the Begin/End ones included. Other events that happen inside a
// scope (retries, questions, escalations) arrive through Observe; the
// scope's context is in Event.Context.
//
// For EventRunStarted, Event.PreviousRun is the link the session stored
// for its last run (empty on the first); RunLinker lets the observer supply
// the link to store for this run.
type SpanObserver interface {
	Observer
	Begin(ctx context.Context, e Event) context.Context
	End(ctx context.Context, e Event)
}

// RunLinker is implemented by a SpanObserver that links a resumed run to
// the one before it: RunLink returns an opaque, printable string (a W3C
// traceparent, say) naming the run whose context Begin returned. The
// session stores it with its state and hands it back as Event.PreviousRun
// when it next runs, in this process or another.
type RunLinker interface {
	RunLink(ctx context.Context) string
}
