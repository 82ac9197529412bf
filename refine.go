package refine

import (
	"context"
)

// Mediator is the orchestration surface a host drives. *Session implements it.
type Mediator interface {
	// Run plays rounds until the session reaches a terminal outcome or
	// pauses for an answer.
	Run(ctx context.Context) (Outcome, error)
	// Step plays exactly one round (or finishes the one in progress).
	Step(ctx context.Context) (RoundReport, error)
	// Answer records the answer to a pending question; the next Run or Step
	// applies it.
	Answer(ctx context.Context, questionID string, a Answer) error
	// Rollback undoes whole rounds as one atomic commit (GAP-FLOW-007).
	Rollback(ctx context.Context, req RollbackRequest) (RollbackReport, error)
	// Status reports where the session stands.
	Status(ctx context.Context) (Status, error)
}
