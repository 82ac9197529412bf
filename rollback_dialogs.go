package refine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/refine-spec/refine/conflict"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/rollbacktext"
	"github.com/refine-spec/refine/rollback"
	"github.com/refine-spec/refine/validate"
)

// A rollback goes through the dialogs of round-06 in one order, whatever
// triggered it (a "roll back" answer, Session.Rollback, `refine rollback`):
//
//  1. the session limit is reached → the limit question;
//  2. AUTO_RETRY and the round's first rollback → no question;
//  3. the round's second or later rollback, or STRICT → the repeated-
//     rollback question with its root-cause analysis;
//  4. otherwise, unless the caller gave adjustments, the rollback options
//     question (and, for "multiple rounds", the target question and its
//     confirmation);
//  5. execute; decision recovery follows before the next round.
//
// The progress is state (rollbackFlow), so a deferred question resumes at
// the same dialog after a restart.

// Origins of a rollback flow: what resumes when no rollback happens.
const (
	originAPI        = "api"
	originDivergence = "divergence"
	originEscalation = "escalation:" // + role name
)

// Stages of a rollback flow.
const (
	stageDecide   = ""
	stageLimit    = "limit"
	stageAnalysis = "analysis"
	stageOptions  = "options"
	stageTargets  = "targets"
	stageConfirm  = "confirm"
)

// rollbackFlow is a rollback in progress through its dialogs.
type rollbackFlow struct {
	Trigger rollback.Trigger `json:"trigger"`
	// Reason is why (the user's text given with "rollback", or the
	// situation); Text is that user text alone ("" when none was given).
	Reason string `json:"reason,omitempty"`
	Text   string `json:"text,omitempty"`
	// Current is the round being rolled back; To the target round.
	Current int `json:"current"`
	To      int `json:"to"`
	// Explicit: the caller chose the target (Session.Rollback, `refine
	// rollback --to`), so the "multiple rounds" option is not offered.
	Explicit    bool     `json:"explicit,omitempty"`
	Adjustments []string `json:"adjustments,omitempty"`
	Origin      string   `json:"origin,omitempty"`
	Stage       string   `json:"stage,omitempty"`
	// Seq numbers repeated target questions ("choose different target").
	Seq int `json:"seq,omitempty"`
	// Decisions are the answered dialog questions, filed under round
	// Current once the rollback is done (or cancelled), so the rollback's
	// archive does not swallow the decision that caused it.
	Decisions []flowDecision `json:"decisions,omitempty"`
	// Analysis and RootCause are kept from the repeated-rollback question.
	Analysis  *rollback.AnalysisRecord `json:"analysis,omitempty"`
	RootCause string                   `json:"root_cause,omitempty"`
}

// flowDecision is one answered question of a rollback flow.
type flowDecision struct {
	Issue    string   `json:"issue,omitempty"`
	Question Question `json:"question"`
	Answer   Answer   `json:"answer"`
	Decision string   `json:"decision"`
}

func (f *rollbackFlow) note(q Question, a Answer, decision string) {
	f.Decisions = append(f.Decisions, flowDecision{Question: Question{ID: q.ID, Kind: q.Kind, Round: q.Round, Title: q.Title}, Answer: a, Decision: decision})
}

// flowPending is the questions a paused rollback waits on.
func (s *Session) flowPending() []Question { return slices.Clone(s.st.Pending) }

// fileFlowDecisions records a flow's decisions under the round they were made in.
func (s *Session) fileFlowDecisions(f *rollbackFlow) {
	for _, d := range f.Decisions {
		s.recordProcedural(f.Current, d.Issue, d.Question, d.Answer, d.Decision)
	}
	f.Decisions = nil
}

// driveRollback runs the rollback flow in state until it executes, is
// cancelled, or pauses at a question (the report's Pending).
func (s *Session) driveRollback(ctx context.Context) (RollbackReport, error) {
	for {
		f := s.st.RollbackFlow
		if f == nil {
			return RollbackReport{}, nil
		}
		attempt := s.st.Rollbacks.Attempts(f.Current) + 1
		switch f.Stage {
		case stageDecide:
			needed := max(1, f.Current-f.To)
			multi := f.To < f.Current-1
			switch {
			case s.st.Rollbacks.Used()+needed > s.rollbackLimit():
				f.Stage = stageLimit
			case rollbackModeOf(&s.cfg) == rollback.ModeAutoRetry && attempt == 1 && !multi && analysisThresholdOf(&s.cfg) > 1:
				return s.flowExecute(ctx, f, rollbackExec{Auto: true})
			case attempt >= analysisThresholdOf(&s.cfg):
				f.Stage = stageAnalysis
			case len(f.Adjustments) > 0:
				return s.flowExecute(ctx, f, rollbackExec{})
			default:
				f.Stage = stageOptions
			}
			s.stage()
		case stageLimit:
			return s.limitDialog(ctx, f)
		case stageAnalysis:
			rep, done, err := s.analysisDialog(ctx, f, attempt)
			if err != nil || done {
				return rep, err
			}
		case stageOptions:
			rep, done, err := s.optionsDialog(ctx, f, attempt)
			if err != nil || done {
				return rep, err
			}
		case stageTargets:
			rep, done, err := s.targetsDialog(ctx, f, attempt)
			if err != nil || done {
				return rep, err
			}
		case stageConfirm:
			rep, done, err := s.confirmDialog(ctx, f, attempt)
			if err != nil || done {
				return rep, err
			}
		default:
			return RollbackReport{}, fmt.Errorf("rollback: unknown dialog stage %q", f.Stage)
		}
	}
}

// flowExecute carries out the flow's rollback with the dialogs' choices.
func (s *Session) flowExecute(ctx context.Context, f *rollbackFlow, x rollbackExec) (RollbackReport, error) {
	x.To, x.Reason, x.Trigger = f.To, f.Reason, f.Trigger
	if x.Reason == "" {
		x.Reason = "rollback requested"
	}
	x.Adjustments = append(slices.Clone(f.Adjustments), x.Adjustments...)
	if x.Analysis == nil {
		x.Analysis = f.Analysis
	}
	x.RootCause = f.RootCause
	decisions := f.Decisions
	if len(decisions) > 0 {
		// Filed in the rollback's commit: a crash cannot keep the
		// rollback and lose what the dialogs decided.
		x.File = func() {
			f.Decisions = decisions
			s.fileFlowDecisions(f)
		}
	}
	return s.execRollback(ctx, x)
}

// flowCancel ends the flow without a rollback and lets what triggered it
// go on: the divergence question counts as answered; an escalation is asked
// again (or, with skip, the role is skipped).
func (s *Session) flowCancel(f *rollbackFlow, decision string, skip bool) error {
	s.fileFlowDecisions(f)
	s.st.RollbackFlow = nil
	cur := s.st.Current
	if cur != nil && cur.N == f.Current {
		switch {
		case f.Origin == originDivergence:
			cur.DivergenceDone = true
		case strings.HasPrefix(f.Origin, originEscalation):
			role := RoleName(strings.TrimPrefix(f.Origin, originEscalation))
			rp := cur.role(role)
			rp.Escalated++
			if skip {
				rp.Status, rp.SkipNote = roleSkipped, "skipped by the user instead of a rollback"
				if role == Engineer {
					if err := s.releaseGaps(rp.Gaps, "Engineer skipped this round"); err != nil {
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

// pauseAt keeps q pending (the user chose "pause") and commits.
func (s *Session) pauseAt(ctx context.Context, q Question) (RollbackReport, error) {
	if !slices.ContainsFunc(s.st.Pending, func(p Question) bool { return p.ID == q.ID }) {
		s.st.Pending = append(s.st.Pending, q)
	}
	if err := s.commit(ctx); err != nil {
		return RollbackReport{}, err
	}
	return RollbackReport{Pending: s.flowPending()}, nil
}

// limitDialog asks the SESSION ROLLBACK LIMIT REACHED question and applies it.
func (s *Session) limitDialog(ctx context.Context, f *rollbackFlow) (RollbackReport, error) {
	// The round asked to be rolled back again is failing whatever its last
	// retry's outcome said (spec Example 4: "Round 7: 2 rollbacks (still failing)").
	h := rollback.History{Records: slices.Clone(s.st.Rollbacks.Records)}
	for i := len(h.Records) - 1; i >= 0; i-- {
		if h.Records[i].Round == f.Current {
			h.Records[i].Outcome = "still failing"
			break
		}
	}
	q := rollbacktext.LimitQuestion(h, s.rollbackLimit())
	q.Round = f.Current
	q.ID = fmt.Sprintf("r%d-rollback-limit-%d", f.Current, s.st.Rollbacks.Used())
	q.Body = "This session has used all " + fmt.Sprint(s.rollbackLimit()) + " rollback attempts.\nThis suggests systematic issues beyond individual round problems.\n\n" +
		"Possible causes:\n1. Source spec fundamentally ambiguous\n2. Session scope too broad\n3. Prompt engineering issues\n4. Domain expertise mismatch\n\n" + q.Body
	a, paused, err := s.ask(ctx, q)
	if err != nil {
		return RollbackReport{}, err
	}
	used, limit := s.st.Rollbacks.Used(), s.rollbackLimit()
	if paused {
		rep := RollbackReport{Pending: s.flowPending(), Decision: "the limit question waits for an answer"}
		return rep, errRollbackLimit(used, limit, "the limit question waits for an answer")
	}
	opt, _ := q.Option(a.Key)
	rep := RollbackReport{Decision: opt.Label, Remaining: 0}
	switch opt.Effect {
	case rollbacktext.EffectPause:
		s.recordProcedural(f.Current, "", q, a, opt.Label)
		r, err := s.pauseAt(ctx, q)
		if err != nil {
			return r, err
		}
		rep.Pending = r.Pending
		return rep, errRollbackLimit(used, limit, "paused for human review")
	case rollbacktext.EffectAccept:
		f.note(q, a, opt.Label)
		if err := s.flowCancel(f, opt.Label, false); err != nil {
			return rep, err
		}
		if err := s.acceptAsApproved(ctx, "accepted at the session rollback limit"); err != nil {
			return rep, err
		}
	case rollbacktext.EffectAbandon:
		f.note(q, a, opt.Label)
		if err := s.flowCancel(f, opt.Label, false); err != nil {
			return rep, err
		}
		if err := s.finish(ctx, StatusAbandoned, "abandoned at the session rollback limit"); err != nil {
			return rep, err
		}
	case rollbacktext.EffectPromptRefresh:
		f.note(q, a, opt.Label+": older adjustments and instructions dropped from the next prompts")
		s.st.Adjustments, s.st.ReviewerAdjustments, s.st.Instructions = nil, nil, nil
		if err := s.flowCancel(f, opt.Label, false); err != nil {
			return rep, err
		}
	}
	if err := s.commit(ctx); err != nil {
		return rep, err
	}
	if f.Origin == originAPI {
		return rep, errRollbackLimit(used, limit, "you chose: "+opt.Label)
	}
	return rep, nil
}

// acceptAsApproved ends the session as USER_APPROVED now, or, while
// unresolved HIGH/CRITICAL conflicts need the termination tree (an
// acknowledgment, or resolution first), leaves that choice standing.
func (s *Session) acceptAsApproved(ctx context.Context, reason string) error {
	crit, high := conflict.Blocking(s.st.Conflicts)
	if crit == 0 && (high == 0 || s.st.HighAck) {
		return s.finish(ctx, StatusUserApproved, reason)
	}
	s.st.Choice = "force_complete"
	s.stage()
	return nil
}

// splitGap is the gap a repeated-rollback split applies to: the round's
// first assigned gap that is not already a sub-gap and that the restored
// ledger holds in a state it can leave for SUPERSEDED; none ("") when no
// gap qualifies, and the analysis then offers no split.
func (s *Session) splitGap(ctx context.Context, round, to int) (gap.ID, string, error) {
	// The split applies to the ledger the rollback restores (round to's
	// backup): a gap the undone rounds added, or one that ledger holds
	// as accepted, cannot be split there.
	key := rollback.StateBackupKey(to)
	b, err := s.cfg.Store.Get(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return "", "", nil // no backup: the rollback itself will say so
	}
	if err != nil {
		return "", "", fmt.Errorf("rollback analysis: read %s: %w", key, err)
	}
	if b, err = s.resolveBackup(ctx, key, b); err != nil {
		return "", "", fmt.Errorf("rollback analysis: %s: %w", key, err)
	}
	restored, err := parseState(b)
	if err != nil {
		return "", "", fmt.Errorf("rollback analysis: %s: %w", key, err)
	}
	for _, id := range assignedIn(s.st, round) {
		g, ok := restored.Ledger.Get(id)
		if id.Suffix() == "" && ok && gap.CheckTransition(g.State, gap.Superseded) == nil {
			return id, g.Title, nil
		}
	}
	return "", "", nil
}

// rcaInput gathers the round's rollbacks (archived outputs included) and
// the attempt being rolled back now, for the root-cause heuristics.
func (s *Session) rcaInput(ctx context.Context, f *rollbackFlow, attempt int) (rollbacktext.RCAInput, error) {
	in := rollbacktext.RCAInput{Round: f.Current}
	for _, r := range s.st.Rollbacks.ForRound(f.Current) {
		ai := rollback.AttemptInfo{Attempt: r.Attempt, Reason: r.Reason, Trigger: r.Trigger, Patterns: r.Patterns}
		if b, err := s.cfg.Store.Get(ctx, r.Archive); err == nil {
			if files, _, err := rollback.ReadArchive(b, rollback.Limits{}); err == nil {
				// Archive paths are relative to the archived round folder.
				ai.Engineer, ai.Reviewer = string(files["engineer.md"]), string(files["reviewer.md"])
			}
		} else if !errors.Is(err, ErrNotFound) {
			return in, fmt.Errorf("rollback analysis: read %s: %w", r.Archive, err)
		}
		in.Attempts = append(in.Attempts, ai)
	}
	now := rollback.AttemptInfo{Attempt: attempt, Reason: f.Reason, Trigger: f.Trigger}
	if b, err := s.get(ctx, outputKey(f.Current, Engineer)); err == nil {
		now.Engineer = string(b)
	}
	if b, err := s.get(ctx, outputKey(f.Current, Reviewer)); err == nil {
		now.Reviewer = string(b)
	}
	spec, err := s.source(ctx)
	if err != nil {
		return in, err
	}
	now.Patterns = rollback.DetectPatterns(rollback.Input{Engineer: now.Engineer, Reviewer: now.Reviewer,
		Assigned: assignedIn(s.st, f.Current), Known: s.st.Ledger.IDs(), Context: spec}).Patterns()
	in.Attempts = append(in.Attempts, now)
	in.Diagnosis = rollback.Diagnose(in.Attempts)
	if in.Gap, in.GapTitle, err = s.splitGap(ctx, f.Current, f.To); err != nil {
		return in, err
	}
	if in.Gap != "" {
		for _, t := range rollback.SuggestSplit(in.GapTitle, s.concernsAbout(in.Gap, f.Current, in.Attempts)) {
			in.Split = append(in.Split, rollbacktext.SplitChild{Title: t})
		}
	}
	return in, nil
}

// concernsAbout returns the Reviewer's findings against id across a
// round's rolled-back attempts (their archived reviews) and the attempt
// being rolled back now, oldest first.
func (s *Session) concernsAbout(id gap.ID, round int, attempts []rollback.AttemptInfo) []string {
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
	for _, is := range s.st.Issues {
		if is.Round == round && is.Gap == id {
			out = append(out, is.Summary)
		}
	}
	return out
}

// analysisDialog asks the REPEATED ROLLBACK DETECTED question.
func (s *Session) analysisDialog(ctx context.Context, f *rollbackFlow, attempt int) (RollbackReport, bool, error) {
	in, err := s.rcaInput(ctx, f, attempt)
	if err != nil {
		return RollbackReport{}, true, err
	}
	q := rollbacktext.AnalysisQuestion(in)
	q.Round = f.Current
	q.ID = fmt.Sprintf("r%d-rollback-analysis-%d", f.Current, attempt)
	if _, ok := q.Option("1"); ok && len(in.Split) < 2 {
		q.TextRequired = append(q.TextRequired, "1") // sub-gap titles
	}
	q.TextRequired = append(q.TextRequired, "2") // the context
	f.RootCause = q.Body
	f.Analysis = in.Diagnosis.Record()
	a, paused, err := s.ask(ctx, q)
	if err != nil {
		return RollbackReport{}, true, err
	}
	if paused {
		return RollbackReport{Pending: s.flowPending(), RootCause: q.Body}, true, nil
	}
	opt, _ := q.Option(a.Key)
	text := strings.TrimSpace(a.Text)
	x := rollbackExec{}
	decision := opt.Label
	switch rollback.Action(opt.Effect) {
	case rollback.ActionSplit:
		titles := rollback.ParseSplitTitles(text)
		if text == "" {
			for _, c := range in.Split { // "as suggested"
				titles = append(titles, c.Title)
			}
		}
		if len(titles) < 2 {
			// One title is no split: keep the user's words as context.
			decision = "Split needs at least two sub-gap titles; the text was used as context for the retry instead"
			x.Adjustments = append(x.Adjustments, text)
			break
		}
		x.Split = &splitPlan{Gap: in.Gap, Titles: titles}
		x.Next = &nextRoundPlan{Only: []gap.ID{in.Gap.Child('a')}}
		decision = fmt.Sprintf("%s: %s into %d sub-gaps", opt.Label, in.Gap, len(titles))
	case rollback.ActionContext:
		x.Adjustments = append(x.Adjustments, text)
	case rollback.ActionReassign:
		x.Next = &nextRoundPlan{Avoid: slices.Clone(assignedIn(s.st, f.Current))}
	case rollback.ActionForce:
		f.note(q, a, opt.Label+": round kept, no rollback")
		if f.Analysis != nil {
			f.Analysis.Recommendation += " (user forced proceeding)"
		}
		return RollbackReport{RootCause: q.Body, Decision: opt.Label}, true, s.flowCancel(f, opt.Label, false)
	case rollback.ActionPause:
		s.recordProcedural(f.Current, "", q, a, opt.Label)
		rep, err := s.pauseAt(ctx, q)
		rep.RootCause = q.Body
		return rep, true, err
	}
	f.note(q, a, decision)
	x.Decision = decision
	rep, err := s.flowExecute(ctx, f, x)
	return rep, true, err
}

// optionsDialog asks the rollback options question (1-5).
func (s *Session) optionsDialog(ctx context.Context, f *rollbackFlow, attempt int) (RollbackReport, bool, error) {
	targets := 0
	if !f.Explicit {
		targets = len(s.limitedTargets(ctx, f.Current))
	}
	q := rollbacktext.OptionsQuestion(f.Current, attempt, f.Reason, targets)
	q.Round = f.Current
	q.ID = fmt.Sprintf("r%d-rollback-options-%d", f.Current, attempt)
	if f.Explicit && f.To < f.Current-1 {
		q.Body += fmt.Sprintf("Target: Round %d (undo %d rounds)\n", f.To, f.Current-f.To)
	}
	if f.Text == "" {
		q.TextRequired = append(q.TextRequired, "3")
	} else {
		q.Body += fmt.Sprintf("\nOption 3 without text uses your words: %q\n", f.Text)
	}
	a, paused, err := s.ask(ctx, q)
	if err != nil {
		return RollbackReport{}, true, err
	}
	if paused {
		return RollbackReport{Pending: s.flowPending()}, true, nil
	}
	opt, _ := q.Option(a.Key)
	text := strings.TrimSpace(a.Text)
	x := rollbackExec{}
	decision := opt.Label
	switch opt.Effect {
	case rollbacktext.EffectRetrySame:
		if text != "" {
			x.Adjustments = append(x.Adjustments, text)
		}
	case rollbacktext.EffectRetryNarrow:
		assigned := assignedIn(s.st, f.Current)
		if len(assigned) > 0 {
			g := s.simplest(&rolePhase{Gaps: assigned})
			x.Next = &nextRoundPlan{Only: []gap.ID{g}}
			decision += ": " + string(g)
		}
	case rollbacktext.EffectRetryContext:
		if text == "" {
			text = f.Text
		}
		x.Adjustments = append(x.Adjustments, text)
	case rollbacktext.EffectMultiRound:
		f.note(q, a, decision)
		f.Stage = stageTargets
		s.stage()
		return RollbackReport{}, false, nil
	case rollbacktext.EffectSkip:
		f.note(q, a, opt.Label+": round kept, no rollback")
		return RollbackReport{Decision: opt.Label}, true, s.flowCancel(f, opt.Label, true)
	}
	f.note(q, a, decision)
	x.Decision = decision
	rep, err := s.flowExecute(ctx, f, x)
	return rep, true, err
}

// limitedTargets are the targets a rollback from round current may reach
// within the backups and the session's remaining rollbacks, newest first.
func (s *Session) limitedTargets(ctx context.Context, current int) []int {
	left := s.rollbackLimit() - s.st.Rollbacks.Used()
	var out []int
	for _, t := range s.availableTargets(ctx) {
		if current-t <= left {
			out = append(out, t)
		}
	}
	return out
}

// targetRows describes the available targets for the targets table.
func (s *Session) targetRows(ctx context.Context, current int) ([]rollbacktext.Target, error) {
	var rows []rollbacktext.Target
	for _, t := range s.limitedTargets(ctx, current) {
		row := rollbacktext.Target{Round: t}
		b, err := s.readStateBackup(ctx, t)
		if err != nil {
			return nil, fmt.Errorf("rollback targets: read %s: %w", backupKeyState(t), err)
		}
		if st, err := parseState(b); err == nil {
			row.OpenGaps = len(st.Ledger.Open())
		}
		for _, d := range s.st.Decisions {
			if d.Round > t {
				row.DecisionsSince++
			}
		}
		for _, d := range s.st.ConflictDecisions {
			if d.Round > t {
				row.DecisionsSince++
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// targetsDialog asks which round to return to; the option keys are the
// round numbers, as `refine rollback --to N` takes them.
func (s *Session) targetsDialog(ctx context.Context, f *rollbackFlow, attempt int) (RollbackReport, bool, error) {
	rows, err := s.targetRows(ctx, f.Current)
	if err != nil {
		return RollbackReport{}, true, err
	}
	q := rollbacktext.TargetsQuestion(f.Current, rows)
	for i := range q.Options {
		if n, ok := rollbacktext.TargetOf(q.Options[i].Effect); ok {
			q.Options[i].Key = fmt.Sprint(n)
		} else {
			q.Options[i].Key = "cancel"
		}
	}
	q.Default = q.Options[0].Key
	q.Round = f.Current
	q.ID = fmt.Sprintf("r%d-rollback-targets-%d-%d", f.Current, attempt, f.Seq)
	q.Body = "MULTI-ROUND ROLLBACK\n\n" + q.Body
	a, paused, err := s.ask(ctx, q)
	if err != nil {
		return RollbackReport{}, true, err
	}
	if paused {
		return RollbackReport{Pending: s.flowPending()}, true, nil
	}
	opt, _ := q.Option(a.Key)
	f.note(q, a, opt.Label)
	if n, ok := rollbacktext.TargetOf(opt.Effect); ok {
		f.To = n
		f.Stage = stageConfirm
		s.stage()
		return RollbackReport{}, false, nil
	}
	return RollbackReport{Decision: opt.Label}, true, s.flowCancel(f, opt.Label, false)
}

// confirmDialog confirms a multi-round rollback (spec Example 2).
func (s *Session) confirmDialog(ctx context.Context, f *rollbackFlow, attempt int) (RollbackReport, bool, error) {
	rows, err := s.targetRows(ctx, f.Current)
	if err != nil {
		return RollbackReport{}, true, err
	}
	i := slices.IndexFunc(rows, func(t rollbacktext.Target) bool { return t.Round == f.To })
	if i < 0 {
		f.Stage, f.Seq = stageTargets, f.Seq+1
		s.stage()
		return RollbackReport{}, false, nil
	}
	q := rollbacktext.ConfirmQuestion(f.Current, rows[i], rows, len(s.st.Ledger.Open()))
	q.Round = f.Current
	q.ID = fmt.Sprintf("r%d-rollback-confirm-%d-to%d-%d", f.Current, attempt, f.To, f.Seq)
	a, paused, err := s.ask(ctx, q)
	if err != nil {
		return RollbackReport{}, true, err
	}
	if paused {
		return RollbackReport{Pending: s.flowPending()}, true, nil
	}
	opt, _ := q.Option(a.Key)
	f.note(q, a, opt.Label)
	switch opt.Effect {
	case rollbacktext.EffectChooseOther:
		f.Stage, f.Seq = stageTargets, f.Seq+1
		s.stage()
		return RollbackReport{}, false, nil
	case rollbacktext.EffectCancel:
		return RollbackReport{Decision: opt.Label}, true, s.flowCancel(f, opt.Label, false)
	}
	rep, err := s.flowExecute(ctx, f, rollbackExec{Decision: opt.Label})
	return rep, true, err
}

// continueRollback resumes a rollback flow left waiting at a question: it
// waits for an answer again, or the rollback replaced the round, or none
// happened (cancelled, or refused at the limit) and the round goes on.
func (s *Session) continueRollback(ctx context.Context) (stop, error) {
	if s.st.RollbackFlow == nil {
		return goOn, nil
	}
	rep, err := s.driveRollback(ctx)
	switch {
	case errors.Is(err, ErrRollbackLimit) && len(rep.Pending) > 0:
		return waitForAnswer, nil
	case (err == nil || errors.Is(err, ErrRollbackLimit)) && s.st.Outcome.Terminal():
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
