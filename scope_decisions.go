package refine

import "github.com/refine-spec/refine/internal/core"

// The telemetry as the decisions see it (Telemetry): their events are
// Events without a context, which the driver's scopes give them.

// publicEvent is the Event a decision reported, without its context yet.
func publicEvent(e core.Event) Event {
	return Event{
		Kind:         e.Kind,
		At:           e.At,
		Round:        e.Round,
		Phase:        e.Phase,
		Role:         e.Role,
		Attempt:      e.Attempt,
		Gap:          e.Gap,
		FailureType:  e.FailureType,
		Message:      e.Message,
		Question:     e.Question,
		Answer:       e.Answer,
		Usage:        e.Usage,
		AttemptUsage: e.AttemptUsage,
		Elapsed:      e.Elapsed,
		Outcome:      e.Outcome,
		Success:      e.Success,
		Err:          e.Err,
		Model:        e.Model,
		FinishReason: e.FinishReason,
		ExampleTier:  e.ExampleTier,
		PreviousRun:  e.PreviousRun,
		SessionID:    e.SessionID,
	}
}

// Emit reports a decision's event.
func (t *telemetry) Emit(e core.Event) { t.emit(publicEvent(e)) }

// BeginAttempt reports e (an attempt's start) and opens its scope in the
// driver's context.
func (t *telemetry) BeginAttempt(e core.Event) core.AttemptScope {
	return spanScope{t.beginScope(t.ctx, publicEvent(e))}
}

// EndAttempt reports e (the attempt's end) and closes its scope.
func (t *telemetry) EndAttempt(sc core.AttemptScope, e core.Event) {
	s, _ := sc.(spanScope)
	t.endScope(s.ctx, publicEvent(e))
}

// OpenRound makes sure the round in progress has an open scope, in the
// driver's context (openRoundScope).
func (t *telemetry) OpenRound(started *core.Event) {
	if started == nil {
		t.openRoundScope(t.ctx, nil)
		return
	}
	e := publicEvent(*started)
	t.openRoundScope(t.ctx, &e)
}

// EndRound closes the round's scope with e.
func (t *telemetry) EndRound(e core.Event) { t.endRoundScope(publicEvent(e)) }
