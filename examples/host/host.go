// Package refinehost is a host program's use of refine, kept as its own
// module (with a replace directive pointing at this repository) to prove
// that refine builds, runs and is tested from outside: it drives a session
// with its own Roles, polls its status from another goroutine while it
// runs, and answers its questions.
package refinehost

import (
	"context"
	"errors"
	"fmt"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/store/memory"
)

// Refiner runs one refinement for a host: the host's roles, an in-memory
// store, and questions answered by a policy function.
type Refiner struct {
	Engineer, Reviewer refine.Role
	// Decide answers a question; nil takes each question's default.
	Decide func(refine.Question) refine.Answer
	// MaxRounds bounds the session (0: refine's default).
	MaxRounds int
	// Started, when set, receives the session before it runs, so the host
	// can watch it (Status) from another goroutine.
	Started func(*refine.Session)
}

// Refine runs spec with gaps to a terminal outcome, answering questions
// with Decide, and returns the outcome and the session.
func (r Refiner) Refine(ctx context.Context, spec string, gaps []gap.Gap) (refine.Outcome, *refine.Session, error) {
	cfg := refine.DefaultConfig()
	cfg.Store = memory.New()
	cfg.Engineer, cfg.Reviewer = r.Engineer, r.Reviewer
	cfg.Asker = refine.DeferAsker{} // questions come back to us in the Outcome
	cfg.Spec, cfg.Gaps = spec, gaps
	cfg.GapsPerRound = 1
	if r.MaxRounds > 0 {
		cfg.MaxRounds = r.MaxRounds
	}
	s, err := refine.New(ctx, cfg)
	if err != nil {
		return refine.Outcome{}, nil, fmt.Errorf("start refinement: %w", err)
	}
	if r.Started != nil {
		r.Started(s)
	}
	out, err := s.Run(ctx)
	for err == nil && out.Status == refine.StatusPaused && len(out.Pending) > 0 {
		q := out.Pending[0]
		a := refine.Answer{Key: q.Default}
		if r.Decide != nil {
			a = r.Decide(q)
		}
		if err := s.Answer(ctx, q.ID, a); err != nil {
			return out, s, fmt.Errorf("answer %s: %w", q.ID, err)
		}
		out, err = s.Run(ctx)
	}
	if err != nil {
		return out, s, fmt.Errorf("refine: %w", err)
	}
	if !out.Status.Terminal() {
		return out, s, errors.New("refine: stopped without a terminal outcome: " + string(out.Status))
	}
	return out, s, nil
}
