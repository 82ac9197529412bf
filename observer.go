package refine

import (
	"context"

	"github.com/refine-spec/refine/internal/core"
)

// Event is one progress report. Fields not relevant to a Kind are zero;
// Context is the scope's context.Context (see SpanObserver).
type Event = core.Event

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
