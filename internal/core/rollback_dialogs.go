package core

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/refine-spec/refine/conflict"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/internal/core/statedoc"
	"github.com/refine-spec/refine/internal/rollbacktext"
	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/question"
	"github.com/refine-spec/refine/rollback"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/validate"
)

// The Session's side of the rollback dialogs (rollback_flow.go): it binds
// their view to its Store, asks their questions and commits their moves.

// driveRollback runs the rollback flow in state until it executes, is
// cancelled, or pauses at a question (the report's Pending): the dialogs
// (RollbackDialogs) decide, the Session asks and commits.
func (s *Engine) driveRollback() (RollbackReport, error) {
	for {
		f := s.st.RollbackFlow
		if f == nil {
			return RollbackReport{}, nil
		}
		d := RollbackDialogs{St: s.st, View: rollbackStoreView{s: s},
			Policy: RollbackPolicy{Limit: s.cfg.rollbackLimit(), Mode: rollbackModeOf(&s.cfg), Threshold: analysisThresholdOf(&s.cfg), Weights: s.cfg.Weights}}
		m, err := d.Step(f)
		if err != nil {
			return RollbackReport{}, err
		}
		if m.Ask != nil {
			a, paused, err := s.ask(m.Ask.Q)
			if err != nil {
				return RollbackReport{}, err
			}
			if paused {
				return FlowPaused(s.st, d.Policy.Limit, m.Ask)
			}
			m = d.Answer(f, m.Ask, a)
		}
		if rep, done, err := s.applyMove(f, m); done {
			return rep, err
		}
	}
}

// FlowPaused reports a dialog question deferred: it waits for an answer
// among the questions st has pending.
func FlowPaused(st *state.State, limit int, ask *FlowAsk) (RollbackReport, error) {
	rep := ask.Paused
	rep.Pending = slices.Clone(st.Pending)
	if ask.AtLimit {
		return rep, errRollbackLimit(st.Rollbacks.Used(), limit, rep.Decision)
	}
	return rep, nil
}

// applyMove carries out a move of the rollback flow; done is false when
// the flow only moved to another stage.
func (s *Engine) applyMove(f *state.RollbackFlow, m FlowMove) (rep RollbackReport, done bool, err error) {
	switch {
	case m.AtLimit:
		rep, err = s.limitOutcome(f, m)
		return rep, true, err
	case m.Exec != nil:
		rep, err = s.execRollback(flowExecution(f, *m.Exec))
		return rep, true, err
	case m.Pause:
		recordProcedural(s.st, s.at(), f.Current, "", m.Q, m.A, m.Label)
		rep, err = s.pauseAt(m.Q)
		rep.RootCause = m.Report.RootCause
		return rep, true, err
	case m.Cancel:
		return m.Report, true, s.flowCancel(f, m.Label, m.Skip)
	case m.Restore:
		s.flowRestore(f)
		return m.Report, true, nil
	}
	s.stage()
	return RollbackReport{}, false, nil
}

// flowCancel ends the flow without a rollback and lets what triggered it
// go on: the divergence question counts as answered; an escalation is asked
// again (or, with skip, the role is skipped).
func (s *Engine) flowCancel(f *state.RollbackFlow, decision string, skip bool) error {
	for _, d := range f.Decisions {
		recordProcedural(s.st, s.at(), f.Current, d.Issue, d.Question, d.Answer, d.Decision)
	}
	f.Decisions = nil
	s.st.RollbackFlow = nil
	cur := s.st.Current
	if cur != nil && cur.N == f.Current {
		switch {
		case f.Origin == originDivergence:
			cur.DivergenceDone = true
		case strings.HasPrefix(f.Origin, originEscalation):
			role := llm.RoleName(strings.TrimPrefix(f.Origin, originEscalation))
			rp := cur.Role(role)
			rp.Escalated++
			if skip {
				rp.Status, rp.SkipNote = state.RoleSkipped, "skipped by the user instead of a rollback"
				if role == llm.Engineer {
					if err := releaseGaps(s.st, rp.Gaps, "Engineer skipped this round", s.at); err != nil {
						return err
					}
				}
			}
		}
	}
	s.log.Info("rollback not carried out", "round", f.Current, "decision", decision)
	s.stage()
	return nil
}

// flowRestore drops the rollback request f: nothing is recorded, the
// questions it set aside wait again, and a question that asked for the
// rollback (divergence, escalation) is asked again by its step.
func (s *Engine) flowRestore(f *state.RollbackFlow) {
	s.st.RollbackFlow = nil
	s.st.Pending = append(s.st.Pending, f.SetAside...)
	for id, a := range f.SetAsideAnswers {
		if s.st.Answers == nil {
			s.st.Answers = map[string]question.Answer{}
		}
		s.st.Answers[id] = a
	}
	s.log.Info("rollback cancelled: the session is as before the request", "round", f.Current)
	s.stage()
}

// pauseAt keeps q pending (the user chose "pause") and commits.
func (s *Engine) pauseAt(q question.Question) (RollbackReport, error) {
	if !slices.ContainsFunc(s.st.Pending, func(p question.Question) bool { return p.ID == q.ID }) {
		s.st.Pending = append(s.st.Pending, q)
	}
	if err := s.checkpoint(); err != nil {
		return RollbackReport{}, err
	}
	return RollbackReport{Pending: slices.Clone(s.st.Pending)}, nil
}

// limitOutcome applies the answer to the limit question: no rollback
// happens; the session pauses, ends or goes on with its prompts refreshed.
func (s *Engine) limitOutcome(f *state.RollbackFlow, m FlowMove) (RollbackReport, error) {
	used, limit := s.st.Rollbacks.Used(), s.cfg.rollbackLimit()
	rep := m.Report
	if m.Pause {
		recordProcedural(s.st, s.at(), f.Current, "", m.Q, m.A, m.Label)
		r, err := s.pauseAt(m.Q)
		if err != nil {
			return r, err
		}
		rep.Pending = r.Pending
		return rep, errRollbackLimit(used, limit, "paused for human review")
	}
	if m.Effect == rollbacktext.EffectPromptRefresh {
		s.st.Adjustments, s.st.ReviewerAdjustments, s.st.Instructions = nil, nil, nil
	}
	if m.Cancel {
		if err := s.flowCancel(f, m.Label, false); err != nil {
			return rep, err
		}
	}
	var err error
	switch m.Effect {
	case rollbacktext.EffectAccept:
		err = s.acceptAsApproved("accepted at the session rollback limit")
	case rollbacktext.EffectAbandon:
		err = s.finish(StatusAbandoned, "abandoned at the session rollback limit")
	}
	if err != nil {
		return rep, err
	}
	if err := s.checkpoint(); err != nil {
		return rep, err
	}
	if f.Origin == originAPI {
		return rep, errRollbackLimit(used, limit, "you chose: "+m.Label)
	}
	return rep, nil
}

// acceptAsApproved ends the session as USER_APPROVED now, or, while
// unresolved HIGH/CRITICAL conflicts need the termination tree (an
// acknowledgment, or resolution first), leaves that choice standing.
func (s *Engine) acceptAsApproved(reason string) error {
	crit, high := conflict.Blocking(s.st.Conflicts)
	if crit == 0 && (high == 0 || s.st.HighAck) {
		return s.finish(StatusUserApproved, reason)
	}
	s.st.Choice = "force_complete"
	s.stage()
	return nil
}

// rollbackStoreView is the rollback dialogs' view of the session, read
// through the decisions' reads (bound to the driver's context).
type rollbackStoreView struct {
	s *Engine
}

// splitGap is the gap a repeated-rollback split applies to: the round's
// first assigned gap that is not already a sub-gap and that the restored
// ledger holds in a state it can leave for SUPERSEDED; none ("") when no
// gap qualifies, and the analysis then offers no split.
func (v rollbackStoreView) splitGap(round, to int) (gap.ID, string, error) {
	// The split applies to the ledger the rollback restores (round to's
	// backup): a gap the undone rounds added, or one that ledger holds
	// as accepted, cannot be split there.
	key := rollback.StateBackupKey(to)
	b, err := v.s.out.Get(key)
	if errors.Is(err, store.ErrNotFound) {
		return "", "", nil // no backup: the rollback itself will say so
	}
	if err != nil {
		return "", "", fmt.Errorf("rollback analysis: read %s: %w", key, err)
	}
	if b, err = statedoc.ResolveBackup(v.s.out, key, b); err != nil {
		return "", "", fmt.Errorf("rollback analysis: %s: %w", key, err)
	}
	restored, err := state.ParseState(b)
	if err != nil {
		return "", "", fmt.Errorf("rollback analysis: %s: %w", key, err)
	}
	for _, id := range assignedIn(v.s.st, round) {
		g, ok := restored.Ledger.Get(id)
		if id.Suffix() == "" && ok && gap.CheckTransition(g.State, gap.Superseded) == nil {
			return id, g.Title, nil
		}
	}
	return "", "", nil
}

// archivedAttempts are round's earlier rollbacks, with the outputs their
// archives hold.
func (v rollbackStoreView) archivedAttempts(round int) ([]rollback.AttemptInfo, error) {
	var out []rollback.AttemptInfo
	for _, r := range v.s.st.Rollbacks.ForRound(round) {
		ai := rollback.AttemptInfo{Attempt: r.Attempt, Reason: r.Reason, Trigger: r.Trigger, Patterns: r.Patterns}
		if b, err := v.s.out.Get(r.Archive); err == nil {
			if files, _, err := rollback.ReadArchive(b, rollback.Limits{}); err == nil {
				// Archive paths are relative to the archived round folder.
				ai.Engineer, ai.Reviewer = string(files["engineer.md"]), string(files["reviewer.md"])
			}
		} else if !errors.Is(err, store.ErrNotFound) {
			return out, fmt.Errorf("rollback analysis: read %s: %w", r.Archive, err)
		}
		out = append(out, ai)
	}
	return out, nil
}

// RCA gathers the round's rollbacks (archived outputs included) and the
// attempt being rolled back now, for the root-cause heuristics.
func (v rollbackStoreView) RCA(f *state.RollbackFlow, attempt int) (rollbacktext.RCAInput, error) {
	in := rollbacktext.RCAInput{Round: f.Current}
	var err error
	if in.Attempts, err = v.archivedAttempts(f.Current); err != nil {
		return in, err
	}
	now := rollback.AttemptInfo{Attempt: attempt, Reason: f.Reason, Trigger: f.Trigger}
	if b, err := v.s.get(state.OutputKey(f.Current, llm.Engineer)); err == nil {
		now.Engineer = string(b)
	}
	if b, err := v.s.get(state.OutputKey(f.Current, llm.Reviewer)); err == nil {
		now.Reviewer = string(b)
	}
	spec, err := v.s.source()
	if err != nil {
		return in, err
	}
	st := v.s.st
	now.Patterns = rollback.DetectPatterns(rollback.Input{Engineer: now.Engineer, Reviewer: now.Reviewer,
		Assigned: assignedIn(st, f.Current), Known: st.Ledger.IDs(), Context: spec}).Patterns()
	in.Attempts = append(in.Attempts, now)
	in.Diagnosis = rollback.Diagnose(in.Attempts)
	if in.Gap, in.GapTitle, err = v.splitGap(f.Current, f.To); err != nil {
		return in, err
	}
	if in.Gap != "" {
		concerns := rollback.Concerns(in.Attempts, findingsAbout(st, in.Gap, f.Current, in.Attempts))
		for _, t := range rollback.SuggestSplit(in.GapTitle, concerns) {
			in.Split = append(in.Split, rollbacktext.SplitChild{Title: t})
		}
	}
	return in, nil
}

// findingsAbout returns the Reviewer's findings against id across a
// round's rolled-back attempts (their archived reviews) and the attempt
// being rolled back now, oldest first.
func findingsAbout(st *state.State, id gap.ID, round int, attempts []rollback.AttemptInfo) []string {
	var out []string
	for _, a := range attempts {
		if a.Reviewer == "" {
			continue
		}
		for _, is := range validate.Reviewer(a.Reviewer, validate.Options{Round: round}).Issues {
			if is.Gap == id {
				out = append(out, is.Summary)
			}
		}
	}
	for _, is := range st.Issues {
		if is.Round == round && is.Gap == id {
			out = append(out, is.Summary)
		}
	}
	return out
}

// availableTargets lists the rounds a rollback of the current round could
// return to, newest first; a Store that cannot list gives none.
func (v rollbackStoreView) availableTargets() []int {
	current := v.s.st.CurrentRound()
	if current < 1 {
		return nil
	}
	if err := v.s.flush(); err != nil {
		return nil
	}
	keys, err := v.s.out.List("")
	if err != nil {
		return nil
	}
	return rollback.AvailableTargets(current, keys)
}

// limitedTargets are the targets a rollback from round current may reach
// within the backups and the session's remaining rollbacks, newest first.
func (v rollbackStoreView) limitedTargets(current int) []int {
	left := v.s.cfg.rollbackLimit() - v.s.st.Rollbacks.Used()
	var out []int
	for _, t := range v.availableTargets() {
		if current-t <= left {
			out = append(out, t)
		}
	}
	return out
}

// TargetCount is how many targets a rollback from round current may reach.
func (v rollbackStoreView) TargetCount(current int) int { return len(v.limitedTargets(current)) }

// Targets describes the available targets for the targets table.
func (v rollbackStoreView) Targets(current int) ([]rollbacktext.Target, error) {
	var rows []rollbacktext.Target
	for _, t := range v.limitedTargets(current) {
		row := rollbacktext.Target{Round: t}
		b, err := statedoc.ReadStateBackup(statedoc.StoreView{Store: v.s.out, Pending: v.s.staged}, t)
		if err != nil {
			return nil, fmt.Errorf("rollback targets: read %s: %w", state.BackupKeyState(t), err)
		}
		if st, err := state.ParseState(b); err == nil {
			row.OpenGaps = len(st.Ledger.Open())
		}
		row.DecisionsSince = decisionsSince(v.s.st, t)
		rows = append(rows, row)
	}
	return rows, nil
}

// decisionsSince counts the decisions recorded after round t.
func decisionsSince(st *state.State, t int) int {
	n := 0
	for _, d := range st.Decisions {
		if d.Round > t {
			n++
		}
	}
	for _, d := range st.ConflictDecisions {
		if d.Round > t {
			n++
		}
	}
	return n
}

// continueRollback resumes a rollback flow left waiting at a question: it
// waits for an answer again, or the rollback replaced the round, or none
// happened (cancelled, or refused at the limit) and the round goes on.
func (s *Engine) continueRollback() (stop, error) {
	if s.st.RollbackFlow == nil {
		return goOn, nil
	}
	rep, err := s.driveRollback()
	return rollbackStop(rep, err, s.st.Outcome.Terminal())
}

// rollbackStop is how the step that asked for a rollback goes on after
// its flow ran to rep, err; ended says whether the session is over.
func rollbackStop(rep RollbackReport, err error, ended bool) (stop, error) {
	switch {
	case errors.Is(err, ErrRollbackLimit) && len(rep.Pending) > 0:
		return waitForAnswer, nil
	case (err == nil || errors.Is(err, ErrRollbackLimit)) && ended:
		// Ended in the dialog (accepted or abandoned at the limit): what
		// asked for the rollback is not asked again.
		return sessionEnded, nil
	case errors.Is(err, ErrRollbackLimit):
		return goOn, nil // answered: the session goes on
	case err != nil:
		return goOn, err
	case len(rep.Pending) > 0:
		return waitForAnswer, nil
	case len(rep.Undone) > 0:
		return roundReplaced, nil
	}
	return goOn, nil
}
