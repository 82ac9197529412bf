package refine

import "github.com/refine-spec/refine/internal/core"

// The decisions' events are Events without a context, which the
// driver's scopes give them.

// publicEvent is the Event a decision reported, without its context yet.
func publicEvent(e core.Event) Event {
	return Event{
		Kind:         e.Kind,
		At:           e.At,
		Round:        e.Round,
		Phase:        e.Phase,
		Role:         e.Role,
		Call:         e.Call,
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
