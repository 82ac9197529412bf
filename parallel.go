package refine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/refine-spec/refine/gap"
)

// Part statuses beyond the role statuses.
const partExhausted = "exhausted"

func (rp *rolePhase) part(id gap.ID) *partState {
	for _, p := range rp.Parts {
		if p.Gap == id {
			return p
		}
	}
	return nil
}

// runParallel drafts each assigned gap in its own Engineer call, at most
// ParallelGaps at a time, each validated and retried on its own, and merges
// the valid outputs into engineer.md in gap order. done is false when every
// call failed: the caller then escalates as for a single call.
func (s *Session) runParallel(ctx context.Context) (done bool, err error) {
	cur := s.st.Current
	rp := &cur.Engineer
	if len(rp.Parts) == 0 {
		for _, id := range rp.Gaps {
			rp.Parts = append(rp.Parts, &partState{Gap: id})
		}
		if err := s.commit(ctx); err != nil {
			return false, err
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.cfg.ParallelGaps)
	for _, p := range rp.Parts {
		if p.Status != roleRunning {
			continue
		}
		g.Go(func() error { return s.runPart(gctx, rp, p) })
	}
	if err := g.Wait(); err != nil {
		return false, err
	}

	var texts []string
	acc := &acceptedOutput{}
	var addressed []gap.ID
	for _, p := range rp.Parts {
		if p.Status != roleAccepted {
			acc.Warnings = append(acc.Warnings, fmt.Sprintf("%s: no valid output after %d attempts; returned to OPEN", p.Gap, len(p.Attempts)))
			continue
		}
		_, respKey := attemptKeys(cur.N, Engineer, string(p.Gap), len(p.Attempts))
		b, err := s.cfg.Store.Get(ctx, respKey)
		if err != nil {
			return false, fmt.Errorf("round %d engineer (%s): read accepted output: %w", cur.N, p.Gap, err)
		}
		texts = append(texts, strings.TrimSpace(string(b)))
		if p.Result != nil {
			addressed = append(addressed, p.Result.GapsAddressed...)
			acc.NewGaps = append(acc.NewGaps, p.Result.NewGaps...)
			acc.Disagreements = append(acc.Disagreements, p.Result.Disagreements...)
			acc.Warnings = append(acc.Warnings, p.Result.Warnings...)
		}
	}
	rp.ParallelDone = true
	if len(texts) == 0 {
		// Every call failed: escalate once for the whole phase.
		rp.Budget = 0
		return false, s.commit(ctx)
	}
	for _, id := range addressed {
		if !containsID(acc.GapsAddressed, id) {
			acc.GapsAddressed = append(acc.GapsAddressed, id)
		}
	}
	rp.Status = roleAccepted
	if err := s.applyEngineer(rp, acc); err != nil {
		return false, err
	}
	merged := strings.Join(texts, "\n\n") + "\n"
	return true, s.commit(ctx, Put(outputKey(cur.N, Engineer), []byte(merged)))
}

// runPart runs one gap's attempts. State changes and commits happen under
// stateMu; the role call itself does not hold it.
func (s *Session) runPart(ctx context.Context, rp *rolePhase, p *partState) error {
	for {
		s.stateMu.Lock()
		if p.Status != roleRunning {
			s.stateMu.Unlock()
			return nil
		}
		if len(p.Attempts) >= 1+s.cfg.MaxRetries {
			p.Status = partExhausted
			err := s.commit(ctx)
			s.stateMu.Unlock()
			return err
		}
		k := len(p.Attempts) + 1
		s.stateMu.Unlock()

		out, err := s.attempt(ctx, Engineer, string(p.Gap), k, rp)
		if err != nil {
			return err
		}
		s.stateMu.Lock()
		s.recordAttempt(ctx, Engineer, string(p.Gap), &p.Attempts, out)
		if out.rec.Success {
			p.Status = roleAccepted
			p.Result = s.acceptedFrom(Engineer, out.result)
		}
		err = s.commit(ctx, out.ops...)
		s.stateMu.Unlock()
		if err != nil {
			return err
		}
	}
}

// lastFailure returns the last failed attempt of the role phase, looking
// into parallel parts when the phase itself made none.
func (rp *rolePhase) lastFailure() (attemptRec, int, error) {
	if n := len(rp.Attempts); n > 0 {
		return rp.Attempts[n-1], n, nil
	}
	total := 0
	var last attemptRec
	for _, p := range rp.Parts {
		total += len(p.Attempts)
		if n := len(p.Attempts); n > 0 {
			last = p.Attempts[n-1]
		}
	}
	if total == 0 {
		return attemptRec{}, 0, errors.New("no attempt to escalate from")
	}
	return last, total, nil
}
