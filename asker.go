package refine

import (
	"context"
)

// Asker asks the user a question and returns the chosen option. An Asker
// that cannot answer now (no terminal, a web UI waiting for a click) returns
// an error wrapping ErrDeferred: the Mediator persists the question and Run
// returns an Outcome with Status Paused and the question in Pending. The host
// later calls Mediator.Answer and Run again, in the same process or after Open.
type Asker interface {
	Ask(ctx context.Context, q Question) (Answer, error)
}

// AskerFunc adapts a function to an Asker.
type AskerFunc func(ctx context.Context, q Question) (Answer, error)

// Ask calls f.
func (f AskerFunc) Ask(ctx context.Context, q Question) (Answer, error) { return f(ctx, q) }

// Immediate is implemented by Askers that answer at once, with no person
// in the loop (automated policies). Run and Step then ask before they
// commit the decisions that led to the question, which saves a Store
// commit, and record the answers as automatic; any other Asker is asked
// once the question is durable.
type Immediate interface {
	Immediate() bool
}

// DefaultAsker answers every question with its Default option: the
// documented policy of automated mode (refine run --auto).
type DefaultAsker struct{}

// Immediate reports true: DefaultAsker never waits.
func (DefaultAsker) Immediate() bool { return true }

// Ask returns q's default.
func (DefaultAsker) Ask(_ context.Context, q Question) (Answer, error) {
	if q.Default == "" && len(q.Options) > 0 {
		return Answer{Key: q.Options[0].Key}, nil
	}
	return Answer{Key: q.Default}, nil
}

// DeferAsker defers every question, so Run pauses at the first one. Use it
// for hosts that collect answers out of band.
type DeferAsker struct{}

// Ask returns ErrDeferred.
func (DeferAsker) Ask(context.Context, Question) (Answer, error) { return Answer{}, ErrDeferred }
