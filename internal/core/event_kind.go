package core

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

// Run lifecycle events, sent by Run and Step around the work they do.
const (
	EventRunStarted  EventKind = "run_started"
	EventRunFinished EventKind = "run_finished"
)

// EventRoundResumed tells the driver that the decisions play on in a round
// whose start an earlier run reported: a SpanObserver gets a scope for it.
// It is the driver's, not an Observer's: it is never observed.
const EventRoundResumed EventKind = "round_resumed"
