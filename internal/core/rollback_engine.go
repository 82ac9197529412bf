package core

import (
	"fmt"
	"slices"
	"strings"

	"github.com/refine-spec/refine/conflict"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/question"
	"github.com/refine-spec/refine/rollback"
)

// EventRolledBack reports a rollback that was carried out; Message names
// the undone rounds and the archives.
const EventRolledBack EventKind = "rolled_back"

// RollbackRequest asks to undo rounds To+1 … current, restoring the session
// as it was after round To (0: before round 1).
type RollbackRequest struct {
	To     int
	Reason string
	// Adjustments are instructions for the retried rounds; they are recorded
	// in the archive metadata and carried into later prompts. In
	// INTERACTIVE mode a rollback without adjustments asks the user for
	// them (the rollback options question).
	Adjustments []string
	// Trigger says what asked for the rollback (default: the user).
	Trigger rollback.Trigger
}

// RollbackReport says what a rollback did.
type RollbackReport struct {
	// Undone are the rounds rolled back, newest first.
	Undone []int
	// Archives are the archive keys written, one per undone round.
	Archives []string
	// Round is the last completed round after the rollback (= To).
	Round int
	// Analysis is the "Rollback Analysis" report of the newest undone round
	// (also archived as analysis.md in every archive).
	Analysis string
	// RootCause is the root-cause analysis shown in the repeated-rollback
	// question, when that question was asked ("" otherwise).
	RootCause string
	// Adjustments are the adjustments the detected patterns recommend;
	// AutoApplied says whether they were carried into later prompts
	// (AUTO_RETRY's first rollback of a round) or left to the user.
	Adjustments []string
	AutoApplied bool
	// Remaining is how many rollbacks the session has left.
	Remaining int
	// Pending holds the rollback question waiting for an answer when the
	// Asker deferred it: nothing was rolled back yet; answer it with
	// Answer (or `refine resume --answer`) and Run finishes the rollback.
	Pending []question.Question
	// Decision is what the user chose in the rollback dialogs, in words
	// ("" when nothing was asked). When no rollback happened (the user
	// cancelled, forced proceeding, or the limit was reached) Undone is
	// empty and Decision says why.
	Decision string
	// Cancelled says the user chose "cancel" in a rollback dialog: the
	// request was dropped and the session is as it was before it.
	Cancelled bool
}

// PendingRollbackError refuses a rollback request while another rollback
// waits in its dialog: it names that one. It wraps ErrRollbackPending.
type PendingRollbackError struct {
	// Round is the round the waiting rollback undoes, To its target,
	// Reason and Adjustments what it was asked with.
	Round, To   int
	Reason      string
	Adjustments []string
	// Question is the ID of the question it waits at.
	Question string
}

func (e *PendingRollbackError) Error() string {
	return fmt.Sprintf("%v: the rollback of round %d to round %d (reason %q) waits for an answer to %s; answer it, or cancel it with the answer %q, before asking for another",
		ErrRollbackPending, e.Round, e.To, e.Reason, e.Question, KeyCancelRollback)
}

// Unwrap makes errors.Is(err, ErrRollbackPending) hold.
func (e *PendingRollbackError) Unwrap() error { return ErrRollbackPending }

// startRollback checks the target of a requested rollback and plays its
// dialogs until they execute it, cancel it or wait for an answer.
func (s *Engine) startRollback(req RollbackRequest, current int) (RollbackReport, error) {
	if err := s.flush(); err != nil {
		return RollbackReport{}, fmt.Errorf("rollback: %w", err)
	}
	keys, err := s.out.List("")
	if err != nil {
		return RollbackReport{}, fmt.Errorf("rollback: list session: %w", err)
	}
	// Target checks first: a wrong target is the caller's mistake, not a dialog.
	if _, err := rollback.PlanRollback(rollback.Request{Current: current, To: req.To, Keys: keys, Limit: 1 << 30, Retention: s.cfg.BackupRetention}); err != nil {
		return RollbackReport{}, err
	}
	s.st.RollbackFlow = &state.RollbackFlow{Trigger: req.Trigger, Reason: req.Reason, Current: current, To: req.To, Explicit: true,
		Adjustments: slices.Clone(req.Adjustments), Origin: originAPI, SetAside: s.st.Pending, SetAsideAnswers: s.st.Answers}
	// The questions waiting give way: the rollback's dialog is the one an
	// answer must reach (it runs first, and a pending question behind it
	// could be answered but never taken). Each is asked again by its own
	// step if it still applies once the rollback is done or cancelled (an
	// escalation whose budget is still spent, the good-enough offer, the
	// archive cleanup when the session ends again).
	s.st.Pending, s.st.Answers = nil, nil
	rep, err := s.driveRollback()
	if err == nil {
		err = s.flush()
	}
	return rep, err
}

// RollbackExec is one rollback to carry out, as the dialogs settled it.
type RollbackExec struct {
	To          int
	Reason      string
	Trigger     rollback.Trigger
	Adjustments []string // the user's
	Auto        bool     // AUTO_RETRY: apply the recommended adjustments
	Analysis    *rollback.AnalysisRecord
	Decision    string
	Split       *state.SplitPlan
	Next        *state.NextRoundPlan
	// Attempt is the rollback number of the newest undone round (for the
	// RCA text shown, if any).
	RootCause string
	// File are the dialogs' decisions, recorded under round FileIn in the
	// restored state, so that they are durable with the rollback, in its
	// one commit: a crash cannot keep the rollback and lose what the
	// dialogs decided.
	File   []state.FlowDecision
	FileIn int
}

// planAssignment applies the retried round's steering (narrowed scope or
// reassignment chosen in a rollback dialog) to the ordered candidates, once.
func planAssignment(st *state.State, cands []gap.Gap) []gap.Gap {
	p := st.NextRound
	if p == nil {
		return cands
	}
	st.NextRound = nil
	if len(p.Only) > 0 {
		only := slices.DeleteFunc(slices.Clone(cands), func(g gap.Gap) bool { return !slices.Contains(p.Only, g.ID) })
		if len(only) > 0 {
			return only
		}
		return cands
	}
	other := slices.DeleteFunc(slices.Clone(cands), func(g gap.Gap) bool { return slices.Contains(p.Avoid, g.ID) })
	if len(other) > 0 {
		return other
	}
	return cands
}

// execRollback carries out a rollback as one atomic commit: it reads what
// the checked plan needs, plans the rollback (planRollback) and commits it.
func (s *Engine) execRollback(x RollbackExec) (RollbackReport, error) {
	if x.Trigger == "" {
		x.Trigger = rollback.TriggerUser
	}
	current := s.st.CurrentRound()
	if err := s.flush(); err != nil {
		return RollbackReport{}, fmt.Errorf("rollback: %w", err)
	}
	keys, err := s.out.List("")
	if err != nil {
		return RollbackReport{}, fmt.Errorf("rollback: list session: %w", err)
	}
	plan, err := rollback.PlanRollback(rollback.Request{Current: current, To: x.To, Keys: keys, History: s.st.Rollbacks,
		Limit: s.cfg.rollbackLimit(), Retention: s.cfg.BackupRetention})
	if err != nil {
		return RollbackReport{}, err
	}
	files, err := readRollbackFiles(s.out, plan)
	if err != nil {
		return RollbackReport{}, err
	}
	in := RollbackInputs{Plan: plan, Files: files, Current: current, Now: s.at(), Mode: rollbackModeOf(&s.cfg), Threshold: analysisThresholdOf(&s.cfg)}
	if in.Spec, err = s.source(); err != nil {
		return RollbackReport{}, fmt.Errorf("rollback: %w", err)
	}
	c, err := PlanRollback(s.st, x, in)
	if err != nil {
		return RollbackReport{}, err
	}
	if c.AutoLog != "" {
		s.log.Info(c.AutoLog)
	}
	s.st = c.State
	s.journal.SnapshotNext = true // the state was replaced wholesale
	if x.Split != nil {
		if err := applySplit(s.st, x.Split, s.at()); err != nil {
			return RollbackReport{}, err
		}
	}
	for _, d := range x.File {
		recordProcedural(s.st, s.at(), x.FileIn, d.Issue, d.Question, d.Answer, d.Decision)
	}
	if err := s.checkpoint(append(c.Ops, convergenceOps(Tracker(s.st, &s.cfg))...)...); err != nil {
		return RollbackReport{}, fmt.Errorf("rollback: %w", err)
	}
	report := c.Report
	s.log.Info("rolled back", "to", x.To, "undone", report.Undone, "archives", report.Archives)
	s.emit(Event{Kind: EventRolledBack, Round: x.To, Message: fmt.Sprintf("rolled back round(s) %s to round %d: %s", joinInts(report.Undone), x.To, strings.Join(report.Archives, ", "))})
	report.Remaining = max(0, s.cfg.rollbackLimit()-s.st.Rollbacks.Used())
	return report, nil
}

// conflictRecoverable is a conflict decision as the archive and the
// decision-recovery question show it.
func conflictRecoverable(d conflict.Ruling) rollback.RoundDecision {
	return rollback.RoundDecision{ID: d.ID, Issue: d.IssueID, Summary: "Conflict " + d.IssueID + ": " + d.Subject,
		Option: d.ChosenOption, Choice: d.Decision, Rationale: d.Rationale}
}

// rollbackLimit is the session's rollback limit: RollbackLimit, or the
// spec's default when it is not set.
func (c *Params) rollbackLimit() int {
	if c.RollbackLimit <= 0 {
		return rollback.DefaultLimit
	}
	return c.RollbackLimit
}

// rollbackModeOf is the session's rollback mode: the one recorded with the
// session (SetRollbackMode, `--rollback-mode`), else Config.RollbackMode.
func rollbackModeOf(c *Params) rollback.Mode {
	if c.RollbackMode.Valid() {
		return c.RollbackMode
	}
	return rollback.DefaultMode
}

// analysisThresholdOf is the rollback number of a round from which the
// repeated-rollback question (root-cause analysis) is asked.
func analysisThresholdOf(c *Params) int {
	if rollbackModeOf(c) == rollback.ModeStrict {
		return 1
	}
	return max(1, c.RollbackAnalysisThreshold)
}

// rollbackAvailable reports whether "roll back" may be offered: the round
// before the current one can be restored. At the session limit the option
// still leads to the limit question: the session limit is checked first, for
// every trigger (docs/workflow.md#rollback-dialogs).
func (s *Engine) rollbackAvailable() bool {
	return slices.Contains(rollbackStoreView{s: s}.availableTargets(), s.st.CurrentRound()-1)
}

// startRollbackFromQuestion carries out "roll back" chosen in a question:
// the answer's text is the reason (never parsed for a round number); the
// target is the round before the current one unless the user picks
// several rounds in the rollback options question. It reports whether the
// session paused at a rollback question.
func (s *Engine) startRollbackFromQuestion(a question.Answer, trigger rollback.Trigger, reason, origin string, first ...state.FlowDecision) (stop, error) {
	text := strings.TrimSpace(a.Text)
	if text != "" {
		reason = text
	}
	current := s.st.CurrentRound()
	s.st.RollbackFlow = &state.RollbackFlow{Trigger: trigger, Reason: reason, Text: text, Current: current, To: current - 1, Origin: origin, Decisions: first}
	return s.continueRollback()
}

func joinInts(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = fmt.Sprint(n)
	}
	return strings.Join(parts, ", ")
}

// errRollbackLimit wraps ErrRollbackLimit with what the user chose.
func errRollbackLimit(used, limit int, decision string) error {
	return fmt.Errorf("rollback: %w (used %d of %d); %s", ErrRollbackLimit, used, limit, decision)
}
