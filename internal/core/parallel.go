package core

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/validate"
)

// runParallel drafts each assigned gap in its own Engineer call, at most
// ParallelGaps at a time, each validated and retried on its own, and merges
// the valid outputs into engineer.md in gap order. done is false when every
// call failed: the caller then escalates as for a single call.
//
// The driver makes the calls, all of a Ready's at once; everything else
// (building prompts, journaling, validating, recording, committing)
// happens here, as the results are delivered.
func (s *Engine) runParallel() (done bool, err error) {
	cur := s.st.Current
	rp := &cur.Engineer
	if len(rp.Parts) == 0 {
		for _, id := range rp.Gaps {
			rp.Parts = append(rp.Parts, &state.PartState{Gap: id})
		}
		if err := s.checkpoint(); err != nil {
			return false, err
		}
	}
	if err := s.draftParts(rp); err != nil {
		return false, err
	}

	var texts []string
	for _, p := range rp.Parts {
		if p.Status != state.RoleAccepted {
			continue
		}
		_, respKey := state.AttemptKeys(cur.N, llm.Engineer, string(p.Gap), len(p.Attempts))
		b, err := s.get(respKey)
		if err != nil {
			return false, fmt.Errorf("round %d engineer (%s): read accepted output: %w", cur.N, p.Gap, err)
		}
		// Merged as read: the Reviewer's prompt quotes the canonical form.
		text, _ := validate.Normalize(string(b))
		texts = append(texts, strings.TrimSpace(text))
	}
	rp.ParallelDone = true
	if len(texts) == 0 {
		// Every call failed: escalate once for the whole phase.
		rp.Budget = 0
		return false, s.checkpoint()
	}
	rp.Status = state.RoleAccepted
	if err := applyEngineer(s.st, rp, mergeParts(rp.Parts), s.at); err != nil {
		return false, err
	}
	merged := strings.Join(texts, "\n\n") + "\n"
	return true, s.checkpoint(store.Put(state.OutputKey(cur.N, llm.Engineer), []byte(merged)))
}

// mergeParts is the Engineer's output as the parts make it: the gaps
// their accepted outputs addressed (each once), their new gaps,
// disagreements and warnings in gap order, and a warning for each part
// left without a valid output.
func mergeParts(parts []*state.PartState) *state.AcceptedOutput {
	acc := &state.AcceptedOutput{}
	for _, p := range parts {
		if p.Status != state.RoleAccepted {
			acc.Warnings = append(acc.Warnings, fmt.Sprintf("%s: no valid output after %d attempts; returned to OPEN", p.Gap, len(p.Attempts)))
			continue
		}
		if p.Result == nil {
			continue
		}
		for _, id := range p.Result.GapsAddressed {
			if !containsID(acc.GapsAddressed, id) {
				acc.GapsAddressed = append(acc.GapsAddressed, id)
			}
		}
		acc.NewGaps = append(acc.NewGaps, p.Result.NewGaps...)
		acc.Disagreements = append(acc.Disagreements, p.Result.Disagreements...)
		acc.Warnings = append(acc.Warnings, p.Result.Warnings...)
	}
	return acc
}

// partCall is a part's attempt whose result is in: delivered by the
// driver or journaled before a crash.
type partCall struct {
	part *state.PartState
	plan attemptPlan
}

// draftParts plays every running part's attempts until each is accepted
// or exhausted, or stops for the calls the driver must make
// (errNeedCalls): at most ParallelGaps at a time, asked for together in
// one Ready. The first error stops it.
func (s *Engine) draftParts(rp *state.RolePhase) error {
	d := &partDrafter{s: s, rp: rp}
	d.queueRunning()
	for {
		d.dispatchQueued()
		if len(d.results) == 0 {
			break
		}
		m := d.results[0]
		d.results = d.results[1:]
		d.take(m)
	}
	if d.firstErr == nil && d.needed > 0 {
		return ErrNeedCalls
	}
	return d.firstErr
}

// partDrafter is one run of draftParts, on the session's goroutine: the
// parts waiting for an attempt, the attempts whose result is in (taken in
// the order they were dispatched), the calls left to the driver, and the
// first error.
type partDrafter struct {
	s        *Engine
	rp       *state.RolePhase
	queue    []*state.PartState
	results  []partCall
	needed   int // calls left to the driver
	firstErr error
}

// fail keeps the first error.
func (d *partDrafter) fail(err error) {
	if d.firstErr == nil {
		d.firstErr = err
	}
}

// queueRunning queues the running parts, in gap order.
func (d *partDrafter) queueRunning() {
	s := d.s
	for _, p := range d.rp.Parts {
		if p.Status == state.RoleRunning {
			d.queue = append(d.queue, p)
		}
	}
	// Parts whose response the driver has handed over go first: their
	// results are settled, and journaled with the next Ready, before new
	// calls are asked for. Otherwise a crash after that Ready lost
	// responses already paid for (simulator seed 20700).
	slices.SortStableFunc(d.queue, func(a, b *state.PartState) int {
		return cmp.Compare(s.ext.hasDelivered(s.st, b, len(b.Attempts)+1), s.ext.hasDelivered(s.st, a, len(a.Attempts)+1))
	})
}

// dispatchQueued dispatches queued parts while there is room for a call.
func (d *partDrafter) dispatchQueued() {
	for d.firstErr == nil && len(d.queue) > 0 && len(d.results)+d.needed < d.s.cfg.ParallelGaps {
		p := d.queue[0]
		d.queue = d.queue[1:]
		if err := d.dispatch(p); err != nil {
			d.fail(err)
		}
	}
}

// dispatch plans the next attempt of p: its result is in (queued for
// take), or its call is left to the driver.
func (d *partDrafter) dispatch(p *state.PartState) error {
	s := d.s
	if len(p.Attempts) >= partBudget(p.Attempts, s.cfg.MaxRetries) {
		p.Status = state.PartExhausted
		return s.checkpoint()
	}
	plan, err := s.planAttempt(llm.Engineer, string(p.Gap), len(p.Attempts)+1, d.rp)
	if err != nil {
		return err
	}
	if plan.needed {
		d.needed++ // the Ready asks for it; the part goes on when it is delivered
		return nil
	}
	d.results = append(d.results, partCall{part: p, plan: plan})
	return nil
}

// take settles and commits an attempt's result and queues its part again
// while it runs.
func (d *partDrafter) take(m partCall) {
	s := d.s
	if d.firstErr != nil {
		// Stopping: the result is not recorded, but its scope is closed.
		s.endAttempt(m.plan, attemptOutcome{}, d.firstErr)
		return
	}
	out, err := s.settle(m.plan, m.plan.result(), &m.part.Attempts)
	if err != nil {
		d.fail(err)
		return
	}
	if out.rec.Success {
		m.part.Status = state.RoleAccepted
		m.part.Result = acceptedFrom(llm.Engineer, s.st.Current.N, out.result)
	}
	if err := s.checkpoint(out.ops...); err != nil {
		d.fail(err)
		return
	}
	if m.part.Status == state.RoleRunning {
		d.queue = append(d.queue, m.part)
	}
}

// hasDelivered reports, as 1 or 0, whether Deliver has handed over the
// response to attempt k of part p of the round in progress (x nil: not
// no driver).
func (x *ExternalCalls) hasDelivered(st *state.State, p *state.PartState, k int) int {
	_, respKey := state.AttemptKeys(st.Current.N, llm.Engineer, string(p.Gap), k)
	n, ok := st.Usage.InFlight[respKey]
	if !ok || x == nil {
		return 0
	}
	if _, ok := x.Delivered[CallID{llm.Engineer, n}]; ok {
		return 1
	}
	return 0
}
