package refine

import "time"

// EventKind names what happened.
type EventKind string

// The events an Observer receives, in the order a round produces them.
const (
	EventRoundStarted     EventKind = "round_started"
	EventRoundFinished    EventKind = "round_finished"
	EventPhaseStarted     EventKind = "phase_started"
	EventPhaseFinished    EventKind = "phase_finished"
	EventAttemptStarted   EventKind = "attempt_started"
	EventAttemptFinished  EventKind = "attempt_finished"
	EventValidationFailed EventKind = "validation_failed"
	EventRetry            EventKind = "retry"
	EventTransportRetry   EventKind = "transport_retry"
	EventEscalation       EventKind = "escalation"
	EventQuestionAsked    EventKind = "question_asked"
	EventQuestionAnswered EventKind = "question_answered"
	EventCommitted        EventKind = "committed"
	EventSessionFinished  EventKind = "session_finished"
)

// Event is one progress report. Fields not relevant to a Kind are zero.
type Event struct {
	Kind    EventKind
	At      time.Time
	Round   int
	Phase   Phase
	Role    RoleName
	Attempt int
	Gap     string
	// FailureType is set for validation failures and retries.
	FailureType string
	Message     string
	Question    *Question
	Answer      *Answer
	// Usage is the session's running total after this event.
	Usage Usage
	// Elapsed is how long the attempt or phase took.
	Elapsed time.Duration
	Outcome OutcomeStatus
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
