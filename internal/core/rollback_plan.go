package core

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/refine-spec/refine/exemplar"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/internal/core/statedoc"
	"github.com/refine-spec/refine/internal/rollbacktext"
	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/rollback"
	"github.com/refine-spec/refine/store"
)

// A rollback is decided apart from its commit: execRollback reads what the
// checked plan needs (rollbackInputs), planRollback turns the state and
// those values into a rollbackCommit without any I/O, and execRollback
// puts the restored state in place and commits the ops at once.

// RollbackInputs are the values a rollback is planned from besides the
// state: the checked plan, the bytes it reads, the spec and the session's
// rollback settings.
type RollbackInputs struct {
	Plan rollback.Plan
	// Files holds every key of Plan.Reads(), state backups resolved
	// into whole states.
	Files map[string][]byte
	// Current is the round being rolled back; Spec the spec refined.
	Current int
	Spec    string
	Now     time.Time
	Mode    rollback.Mode
	// Threshold is the rollback number from which the repeated-rollback
	// question is asked (recorded with an AUTO_RETRY).
	Threshold int
}

// rollbackCommit is a planned rollback: the state to put in place, the
// ops to commit with it and the report (Remaining left to the commit).
type rollbackCommit struct {
	State  *state.State
	Ops    []store.Op
	Report RollbackReport
	// AutoLog is the AUTO_RETRY log line ("" when the rollback was asked).
	AutoLog string
}

// undoneFacts are what the undone rounds' outputs tell about them.
type undoneFacts struct {
	exec rollback.Execution
	// autoAdj are the recommended adjustments' summaries (for the records),
	// autoPrompts their instructions (for the prompts).
	autoAdj, autoPrompts []string
	failure              map[int]string
}

// PlanRollback plans the rollback x of old from in: it archives the undone
// rounds, restores the target's state and carries over what outlives the
// rounds. It does no I/O and leaves old as it was.
func PlanRollback(old *state.State, x RollbackExec, in RollbackInputs) (rollbackCommit, error) {
	mode := in.Mode
	if mode == rollback.ModeAutoRetry && !x.Auto {
		mode = rollback.ModeInteractive // a prompted rollback in AUTO_RETRY mode
	}
	facts := undoneFacts{
		exec: rollback.Execution{Files: in.Files, At: in.Now, Reason: x.Reason, Mode: mode, Trigger: x.Trigger,
			Adjustments: slices.Clone(x.Adjustments), Decisions: map[int][]rollback.RoundDecision{}, Analyses: map[int]string{}, Patterns: map[int][]rollback.Pattern{}},
		failure: map[int]string{},
	}
	report := RollbackReport{Round: x.To, RootCause: x.RootCause, Decision: x.Decision}
	for _, rp := range in.Plan.Rounds {
		report.Undone = append(report.Undone, rp.Round)
		report.Archives = append(report.Archives, rp.Archive)
		facts.undo(old, rp, x.Reason, in)
		if report.Analysis == "" {
			report.Analysis = facts.exec.Analyses[rp.Round]
		}
	}
	if x.Auto {
		facts.exec.Adjustments = append(facts.exec.Adjustments, facts.autoAdj...)
	}
	res, err := in.Plan.Execute(facts.exec)
	if err != nil {
		return rollbackCommit{}, err
	}
	restored, err := state.ParseState(res.State)
	if err != nil {
		return rollbackCommit{}, fmt.Errorf("rollback: restore %s: %w", rollback.StateBackupKey(x.To), err)
	}
	carrySessionFacts(restored, old)
	markRetriesFailed(restored, report.Undone)
	addRecords(restored, res.Records, x, facts.exec.Adjustments)
	c := rollbackCommit{State: restored, Ops: commitOps(res.Ops()), Report: report}
	restored.Adjustments = append(slices.Clone(old.Adjustments), x.Adjustments...)
	if x.Auto {
		// AUTO_RETRY: the first rollback of a round retries with the
		// adjustments the detected patterns call for, without asking.
		restored.Adjustments = append(restored.Adjustments, facts.autoPrompts...)
		restored.AutoRetries = append(restored.AutoRetries, rollbacktext.AutoRetry{Round: in.Current, Attempt: 1,
			Threshold: in.Threshold, FailurePattern: facts.failure[in.Current], Adjustments: facts.autoAdj})
		c.AutoLog = rollbacktext.AutoRetryLog(in.Current, facts.autoAdj)
	}
	keepRounds(restored, old, x.To)
	restored.Recover, restored.RecoverConflicts = nil, nil
	for _, rp := range in.Plan.Rounds {
		restored.Recover = append(restored.Recover, facts.exec.Decisions[rp.Round]...)
		for _, d := range old.ConflictDecisions {
			if d.Round == rp.Round {
				restored.RecoverConflicts = append(restored.RecoverConflicts, d)
			}
		}
	}
	reopen(restored, x.Next)
	c.Report.Adjustments = facts.autoAdj
	c.Report.AutoApplied = x.Auto
	return c, nil
}

// addRecords adds this rollback's history records to st, the first one
// with the dialogs' analysis and decision.
func addRecords(st *state.State, recs []rollback.Record, x RollbackExec, adjustments []string) {
	for i, r := range recs {
		if i == 0 {
			r.Analysis = x.Analysis
			r.UserDecision = x.Decision
		}
		if x.Auto {
			r.Adjustments = slices.Clone(adjustments)
		}
		st.Rollbacks.Records = append(st.Rollbacks.Records, r)
	}
}

// reopen makes the restored st a session in progress with no question
// pending, its next round steered by next: a rollback reopens a finished
// session.
func reopen(st *state.State, next *state.NextRoundPlan) {
	st.Outcome, st.OutcomeReason, st.FinishedAt = "", "", time.Time{}
	st.CleanupDone = false
	st.Pending, st.Answers = nil, nil
	st.RollbackFlow = nil
	st.NextRound = next
}

// undo adds what undone round rp's outputs and records say to the
// execution: its patterns, its analysis report and its decisions.
func (u *undoneFacts) undo(old *state.State, rp rollback.RoundPlan, reason string, in RollbackInputs) {
	det := rollback.DetectPatterns(rollback.Input{
		Engineer: string(in.Files[state.OutputKey(rp.Round, llm.Engineer)]), Reviewer: string(in.Files[state.OutputKey(rp.Round, llm.Reviewer)]),
		Assigned: assignedIn(old, rp.Round), Known: old.Ledger.IDs(), Context: in.Spec,
	})
	u.exec.Patterns[rp.Round] = det.Patterns()
	u.failure[rp.Round] = det.FailurePattern()
	for _, a := range rollback.AutoAdjustments(det) {
		if !slices.Contains(u.autoAdj, a.Summary) {
			u.autoAdj = append(u.autoAdj, a.Summary)
		}
		if a.Prompt != "" && !slices.Contains(u.autoPrompts, a.Prompt) {
			u.autoPrompts = append(u.autoPrompts, a.Prompt)
		}
	}
	// The analysis report is written after every rollback (round-06
	// "Generated automatically after each rollback").
	var prev [][]rollback.Pattern
	for _, r := range old.Rollbacks.ForRound(rp.Round) {
		prev = append(prev, r.Patterns)
	}
	u.exec.Analyses[rp.Round] = rollbacktext.AnalysisReport(rollbacktext.ReportInput{Round: rp.Round, Attempt: rp.Attempt, Reason: reason, At: in.Now, Detection: det, Previous: prev})
	for _, d := range old.Decisions {
		// The round's own decisions: not an earlier rollback's dialog
		// answers filed under it, nor the session's end.
		if d.Round == rp.Round && !d.Procedural {
			u.exec.Decisions[rp.Round] = append(u.exec.Decisions[rp.Round], rollback.RoundDecision{ID: d.ID, Issue: d.Issue, Summary: d.Question, Option: d.Option, Choice: d.Decision, Rationale: d.Text})
		}
	}
	for _, d := range old.ConflictDecisions {
		if d.Round == rp.Round {
			u.exec.Decisions[rp.Round] = append(u.exec.Decisions[rp.Round], conflictRecoverable(d))
		}
	}
}

// carrySessionFacts keeps in restored what outlives the rounds it happened
// in: tokens were spent, the rollbacks happened, the questions were asked,
// settings set, damaged files repaired.
func carrySessionFacts(restored, old *state.State) {
	restored.SessionID, restored.CreatedAt = old.SessionID, old.CreatedAt
	restored.Usage = old.Usage
	restored.Asked = old.Asked
	// The records are amended and added to: copies, so that old keeps its own.
	restored.Rollbacks = rollback.History{Records: slices.Clone(old.Rollbacks.Records)}
	restored.Settings, restored.SettingsLog = old.Settings, old.SettingsLog
	restored.AutoRetries = slices.Clone(old.AutoRetries)
	restored.RunLink = old.RunLink
	restored.Repairs = slices.Clone(old.Repairs)
	restored.RateHistory.Alerted = max(restored.RateHistory.Alerted, old.RateHistory.Alerted)
}

// markRetriesFailed marks the retries of the undone rounds as failed: a
// round rolled back again means its previous retry failed.
func markRetriesFailed(st *state.State, undone []int) {
	for i := range st.Rollbacks.Records {
		r := &st.Rollbacks.Records[i]
		if slices.Contains(undone, r.Round) && !strings.HasPrefix(r.Outcome, "Retry failed") {
			r.Outcome, r.Succeeded = "Retry failed (rolled back again)", false
		}
	}
	for i := range st.AutoRetries {
		if a := &st.AutoRetries[i]; slices.Contains(undone, a.Round) && a.Outcome == "" {
			a.Outcome = "Failed on retry (rolled back again)"
		}
	}
}

// keepRounds keeps in restored old's per-round logs up to round to.
func keepRounds(restored, old *state.State, to int) {
	keepRound := func(n int) bool { return n <= to }
	restored.AttemptLog = slices.DeleteFunc(slices.Clone(old.AttemptLog), func(f state.AttemptFact) bool { return !keepRound(f.Round) })
	restored.Warnings = slices.DeleteFunc(slices.Clone(old.Warnings), func(w state.WarningFact) bool { return !keepRound(w.Round) })
	restored.LegacyValidation = slices.DeleteFunc(slices.Clone(old.LegacyValidation), func(v state.ValidationEntry) bool { return !keepRound(v.Round) })
	restored.LegacyRetries = slices.DeleteFunc(slices.Clone(old.LegacyRetries), func(v state.RetryDetail) bool { return !keepRound(v.Round) })
	restored.Logged = slices.DeleteFunc(slices.Clone(old.Logged), func(v state.LoggedEvent) bool { return !keepRound(v.Round) })
	restored.LegacyErrors = slices.DeleteFunc(slices.Clone(old.LegacyErrors), func(v state.ErrorEntry) bool { return !keepRound(v.Round) })
	restored.ExampleLog = slices.DeleteFunc(slices.Clone(old.ExampleLog), func(e exemplar.LogEntry) bool { return !keepRound(e.Round) })
}

// commitOps are a rollback's writes as Store ops, without the three live
// files the commit re-renders from the restored state.
func commitOps(rops []rollback.Op) []store.Op {
	var ops []store.Op
	for _, op := range rops {
		switch op.Key {
		case rollback.StateKey, rollback.StatusKey, rollback.DecisionsKey:
			continue // re-rendered from the restored state by commit
		}
		if op.Delete {
			ops = append(ops, store.Delete(op.Key))
		} else {
			ops = append(ops, store.Put(op.Key, op.Value))
		}
	}
	return ops
}

// readRollbackFiles reads every key plan needs from store, state backups
// rebuilt into whole states.
func readRollbackFiles(sv view, plan rollback.Plan) (map[string][]byte, error) {
	files := map[string][]byte{}
	for _, k := range plan.Reads() {
		b, err := sv.Get(k)
		if err != nil {
			return nil, fmt.Errorf("rollback: read %s: %w", k, err)
		}
		if kind, _, ok := rollback.ParseBackupKey(k); ok && kind == rollback.StateBackup {
			// A state backup refers to the session's journal: rebuild it.
			if b, err = statedoc.ResolveBackup(sv, k, b); err != nil {
				return nil, fmt.Errorf("rollback: %s: %w", k, err)
			}
		}
		files[k] = b
	}
	return files, nil
}

// applySplit splits a gap of st's ledger and records it on the newest
// rollback record (the summary counts "Gaps Split" from it).
func applySplit(st *state.State, p *state.SplitPlan, now time.Time) error {
	ids, err := rollback.ApplySplit(&st.Ledger, p.Gap, p.Titles, st.Round, now, "split after repeated rollbacks")
	if err != nil {
		return fmt.Errorf("rollback: %w", err)
	}
	if n := len(st.Rollbacks.Records); n > 0 {
		r := &st.Rollbacks.Records[n-1]
		r.Split = &rollback.SplitRecord{Parent: p.Gap, Children: ids}
		r.UserDecision = rollbacktext.SplitDecision(ids)
	}
	// The split is neither progress nor regress: the next convergence row
	// compares against a ledger that already has it.
	st.PrevLedger = SnapshotLedger(&st.Ledger)
	return nil
}

// assignedIn returns the gaps round n was assigned, from its record or the
// round in progress.
func assignedIn(st *state.State, n int) []gap.ID {
	if st.Current != nil && st.Current.N == n {
		return st.Current.Assigned
	}
	for _, r := range st.Rounds {
		if r.N == n {
			return r.Assigned
		}
	}
	return nil
}
