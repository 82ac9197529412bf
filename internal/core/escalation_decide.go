package core

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/core/render"
	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/question"
	"github.com/refine-spec/refine/retry"
	"github.com/refine-spec/refine/validate"
)

// The decisions of an escalation (FLOW-001 §5): what the user's answer,
// after a role spent its attempts, does to the round, as a plan decided
// from the state and applied to it. The Session asks and stages
// (escalation.go).

// EscalationPlan is what an answer to an escalation question changes in
// the round in progress, for the role that escalated.
type EscalationPlan struct {
	// Decision is the decision filed in decisions.md.
	Decision string
	// SkipNote, when set, skips the role with this note.
	SkipNote string
	// Release are gaps to return to OPEN (those IN_PROGRESS), with why.
	Release    []gap.ID
	ReleaseWhy string
	// Take are gaps reassigned to this round (to IN_PROGRESS).
	Take []gap.ID
	// SetGaps gives the role Gaps; SetAssigned gives the round Assigned.
	SetGaps     bool
	Gaps        []gap.ID
	SetAssigned bool
	Assigned    []gap.ID
	// Context is text added to the role's prompt ("" for none).
	Context string
	// SetBudget gives the role a new attempt budget, Budget.
	SetBudget bool
	Budget    int
}

// EscalationAnswer is the answer an escalation plan is decided on: the
// chosen option, the user's text, and the failure that escalated.
type EscalationAnswer struct {
	Key, Label, Text string
	FailureType      validate.FailureType
}

// DecideEscalation decides what the answer to role's escalation does;
// assignable are the gaps a round may take on, maxRetries and
// gapsPerRound and weights come from Config. Rollback and pause are not
// decided here: they leave the round as it is.
func DecideEscalation(st *state.State, role llm.RoleName, a EscalationAnswer, assignable []gap.Gap, cfg *Params) EscalationPlan {
	rp := st.Current.Role(role)
	p := EscalationPlan{Decision: a.Label}
	switch a.Key {
	case retry.OptionSkip:
		p.skip(role, rp, "skipped by user after "+string(a.FailureType))
	case retry.OptionReassign:
		picked := reassignPick(st.Current, role, a.Text, assignable, cfg.GapsPerRound)
		if role == llm.Reviewer {
			p.SetGaps, p.Gaps = true, picked
		}
		if len(picked) == 0 {
			p.skip(role, rp, "no other gap to reassign to")
			p.Decision += " (no other gap available: skipped)"
			break
		}
		if role == llm.Engineer {
			p.reassignEngineer(rp, picked)
		}
		p.Decision += ": " + render.JoinIDs(picked)
		p.SetBudget, p.Budget = true, len(rp.Attempts)+1+cfg.MaxRetries
	case retry.OptionContext:
		p.Context = strings.TrimSpace(a.Text)
		if p.Context == "" {
			p.Context = "(the user chose to provide context but gave no text)"
		}
		p.SetBudget, p.Budget = true, rp.Budget+1
	case retry.OptionNarrow:
		g := SimplestGap(&st.Ledger, rp, cfg.Weights)
		p.Decision += ": " + string(g)
		if role == llm.Engineer {
			p.Release = slices.DeleteFunc(slices.Clone(rp.Gaps), func(id gap.ID) bool { return id == g })
			p.ReleaseWhy = "scope narrowed to " + string(g)
			p.SetAssigned, p.Assigned = true, []gap.ID{g}
		}
		p.SetGaps, p.Gaps = true, []gap.ID{g}
		p.SetBudget, p.Budget = true, rp.Budget+1
	}
	return p
}

// skip skips the role; a skipped Engineer releases its gaps.
func (p *EscalationPlan) skip(role llm.RoleName, rp *state.RolePhase, note string) {
	p.SkipNote = note
	if role == llm.Engineer {
		p.Release, p.ReleaseWhy = rp.Gaps, "Engineer skipped this round"
	}
}

// reassignEngineer moves the Engineer from its gaps to picked.
func (p *EscalationPlan) reassignEngineer(rp *state.RolePhase, picked []gap.ID) {
	for _, id := range rp.Gaps {
		if !slices.Contains(picked, id) {
			p.Release = append(p.Release, id)
		}
	}
	p.ReleaseWhy = "reassigned away by the user"
	for _, id := range picked {
		if !slices.Contains(rp.Gaps, id) {
			p.Take = append(p.Take, id)
		}
	}
	p.SetGaps, p.Gaps = true, picked
	p.SetAssigned, p.Assigned = true, picked
}

// ApplyEscalation applies an escalation plan to role's phase of the round
// in progress.
func ApplyEscalation(st *state.State, role llm.RoleName, p EscalationPlan, now func() time.Time) error {
	cur := st.Current
	rp := cur.Role(role)
	if p.SkipNote != "" {
		rp.Status, rp.SkipNote = state.RoleSkipped, p.SkipNote
	}
	if err := releaseGaps(st, p.Release, p.ReleaseWhy, now); err != nil {
		return err
	}
	for _, id := range p.Take {
		if err := st.Ledger.Transition(id, gap.InProgress, cur.N, now(), "reassigned to this round by the user"); err != nil {
			return err
		}
	}
	if p.SetGaps {
		rp.Gaps = p.Gaps
	}
	if p.SetAssigned {
		cur.Assigned = p.Assigned
	}
	if p.Context != "" {
		rp.Context = append(rp.Context, p.Context)
	}
	if p.SetBudget {
		rp.Budget = p.Budget
	}
	return nil
}

// releaseGaps returns assigned gaps to OPEN.
func releaseGaps(st *state.State, ids []gap.ID, why string, now func() time.Time) error {
	for _, id := range ids {
		if g, ok := st.Ledger.Get(id); ok && g.State == gap.InProgress {
			if err := st.Ledger.Transition(id, gap.Open, st.Current.N, now(), why); err != nil {
				return err
			}
		}
	}
	return nil
}

// reassignPick picks role's new gaps in round cur: the IDs named in text
// when they are assignable, else the next ones in assignment order (at
// most gapsPerRound). A Reviewer picks among the gaps it was given, all of
// them when text names none.
func reassignPick(cur *state.RoundState, role llm.RoleName, text string, assignable []gap.Gap, gapsPerRound int) []gap.ID {
	var picked []gap.ID
	if role == llm.Reviewer {
		for _, id := range gap.FindIDs(text) {
			if slices.Contains(cur.Reviewed, id) {
				picked = append(picked, id)
			}
		}
		if len(picked) == 0 {
			picked = slices.Clone(cur.Reviewed)
		}
		return picked
	}
	rp := cur.Role(role)
	gap.AssignmentOrder(assignable)
	// Named gaps may be any assignable gap or one of the current ones.
	for _, id := range gap.FindIDs(text) {
		if slices.Contains(rp.Gaps, id) || slices.ContainsFunc(assignable, func(g gap.Gap) bool { return g.ID == id }) {
			picked = append(picked, id)
		}
	}
	if len(picked) == 0 {
		// No usable IDs named: take the next gaps in assignment order.
		for _, g := range assignable {
			if len(picked) < gapsPerRound {
				picked = append(picked, g.ID)
			}
		}
	}
	return picked
}

// SimplestGap picks the gap "narrow scope" keeps among rp's: lowest
// severity weight, then fewest failed attempts, then ID.
func SimplestGap(l *gap.Ledger, rp *state.RolePhase, weights gap.Weights) gap.ID {
	var gs []gap.Gap
	for _, id := range rp.Gaps {
		if g, ok := l.Get(id); ok {
			gs = append(gs, g)
		}
	}
	if len(gs) == 0 {
		return rp.Gaps[0]
	}
	failures := map[gap.ID]int{}
	for _, p := range rp.Parts {
		for _, a := range p.Attempts {
			if !a.Success {
				failures[p.Gap]++
			}
		}
	}
	gap.SimplestOrder(gs, weights, failures)
	return gs[0].ID
}

// roundFailedQuestion asks what to do after round n, in which both roles
// were skipped.
func roundFailedQuestion(n int) question.Question {
	opts := []question.Option{
		{Key: "1", Label: "Continue - Start the next round", Effect: "Gaps stay as they are; the next round reassigns them", Recommended: true},
		{Key: "2", Label: "Pause session - Save state for later", Effect: "Session saved, can resume with fresh context"},
		{Key: "3", Label: "Abandon - End the session", Effect: "Session ends as ABANDONED"},
	}
	return question.Question{
		ID: fmt.Sprintf("r%d-round-failed", n), Kind: question.KindRoundFailed, Round: n,
		Title: fmt.Sprintf("Round %d: neither role produced valid output", n),
		Body: fmt.Sprintf("Both the Engineer and the Reviewer failed validation in round %d and were skipped.\n\n"+
			"=== Options ===\n", n) + question.Menu(opts),
		Options: opts,
		Default: "1",
	}
}
