package core

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/refine-spec/refine/conflict"
	"github.com/refine-spec/refine/convergence"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/core/render"
	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/question"
	"github.com/refine-spec/refine/validate"
)

// The decisions of convergence and termination (FLOW-002, FLOW-005) as
// functions of the state and the values they need: the round's row, what
// an answer to the divergence or early-termination question changes, the
// questions themselves. The Session asks, stages and commits (converge.go).

// convergenceSettings are the tracker's settings from Config.
func convergenceSettings(cfg *Params) convergence.Settings {
	set := convergence.DefaultSettings()
	set.StallRounds = cfg.StallRounds
	set.Weights = cfg.Weights
	return set
}

// Tracker returns the session's convergence tracker, creating it with the
// configured settings on first use.
func Tracker(st *state.State, cfg *Params) *convergence.Tracker {
	if st.Tracker == nil {
		t, err := convergence.NewTracker(convergenceSettings(cfg))
		if err != nil {
			// Settings come from a validated Config; fall back to defaults.
			t, _ = convergence.NewTracker(convergence.DefaultSettings())
		}
		st.Tracker = t
	}
	return st.Tracker
}

// ledgerBefore is the ledger as the round in progress found it.
func ledgerBefore(st *state.State) *gap.Ledger {
	if st.PrevLedger == nil {
		return &gap.Ledger{}
	}
	return st.PrevLedger
}

// logLine is a line for the session's log, which the Session writes.
type logLine struct {
	Msg  string
	Args []any
}

// recordConvergence observes the round's ledger once it is reviewed: the
// Reviewer's gapless HIGH/CRITICAL issues become gaps, the tracker gets
// the round's row, the retries of a rolled-back round get their outcome,
// and the warnings of the round's valid outputs go into the validation
// log. It returns the lines to log: the review gaps the ledger refused and
// the warnings.
func recordConvergence(st *state.State, cur *state.RoundState, t *convergence.Tracker, now func() time.Time) []logLine {
	before := ledgerBefore(st)
	wasConverging := t.Current() == convergence.Converging
	logs := AddReviewGaps(st, PlanReviewGaps(st, cur.N))
	t.Observe(cur.N, before, &st.Ledger)
	if wasConverging && t.Current() != convergence.Converging {
		// Progress stopped: an early-termination offer declined while
		// the loop converged is worth making again.
		st.OfferedOpenSet = ""
	}
	cur.Converged = true
	RecordRetryOutcome(st, cur)
	return append(logs, recordWarnings(st, cur, now)...)
}

// recordWarnings puts the warnings of the round's valid outputs
// (THIN_CONTENT, a missing Trade-offs section, a repeated rejected
// position) into the validation log, where status.md and the round
// summary show them, and returns them as lines to log.
func recordWarnings(st *state.State, cur *state.RoundState, now func() time.Time) []logLine {
	var logs []logLine
	for _, role := range []llm.RoleName{llm.Engineer, llm.Reviewer} {
		rp := cur.Role(role)
		if rp.Result == nil {
			continue
		}
		attempt := len(rp.Attempts)
		for _, w := range rp.Result.Warnings {
			st.Warnings = append(st.Warnings, state.WarningFact{Round: cur.N, At: now(), Role: role, Attempt: attempt, Message: render.OneLine(w)})
			logs = append(logs, logLine{Msg: "validation warning", Args: []any{"round", cur.N, "role", role, "warning", w}})
		}
	}
	return logs
}

// ReviewGap is a gap made of a Reviewer issue (st.Issues[Issue]).
type ReviewGap struct {
	Issue int
	Gap   gap.Gap
}

// PlanReviewGaps turns each HIGH/CRITICAL Reviewer issue of round n that
// names no gap into a new gap GAP-REVIEW-NNN with the issue's severity and
// summary, counted as New, so the loop can act on it instead of waiting
// for a review that never approves.
func PlanReviewGaps(st *state.State, n int) []ReviewGap {
	next := 1
	for _, g := range st.Ledger.Gaps {
		if strings.HasPrefix(string(g.ID), "GAP-REVIEW-") && g.ID.Number() >= next {
			next = g.ID.Number() + 1
		}
	}
	var out []ReviewGap
	for i, is := range st.Issues {
		if is.Round != n || is.Gap != "" || !is.Severity.AtLeastHigh() {
			continue
		}
		id := gap.ID(fmt.Sprintf("GAP-REVIEW-%03d", next))
		next++
		title := strings.TrimSpace(render.OneLine(is.Summary))
		if title == "" {
			title = "Reviewer issue " + is.ID
		}
		out = append(out, ReviewGap{Issue: i, Gap: gap.Gap{ID: id, Title: title + " (from " + is.ID + ")", Severity: is.Severity, Round: n}})
	}
	return out
}

// AddReviewGaps adds the planned review gaps to the ledger and links each
// issue to its gap; it returns a line to log for each the ledger refused.
func AddReviewGaps(st *state.State, plan []ReviewGap) []logLine {
	var failed []logLine
	for _, rg := range plan {
		is := &st.Issues[rg.Issue]
		if err := st.Ledger.Add(rg.Gap); err != nil {
			failed = append(failed, logLine{Msg: "review gap not added", Args: []any{"issue", is.ID, "err", err}})
			continue
		}
		is.Gap = rg.Gap.ID
	}
	return failed
}

// RecordRetryOutcome records, when a round that was rolled back finishes
// again, how its retry went (round-06 "Outcome" of the rollback history
// and the auto-retry block): successful when the Engineer's output was
// accepted, failed otherwise. A later rollback of the same round marks it
// failed instead (see execRollback).
func RecordRetryOutcome(st *state.State, cur *state.RoundState) {
	ok := cur.Engineer.Status == state.RoleAccepted
	for i := range st.Rollbacks.Records {
		r := &st.Rollbacks.Records[i]
		if r.Round != cur.N || r.Outcome != "" {
			continue
		}
		switch {
		case ok && r.Split != nil:
			r.Outcome, r.Succeeded = "Proceeded with split gaps", true
		case ok:
			r.Outcome, r.Succeeded = "Retry successful", true
		default:
			r.Outcome = "Retry failed (" + RoleSummary(llm.Engineer, &cur.Engineer) + ")"
		}
	}
	for i := range st.AutoRetries {
		if a := &st.AutoRetries[i]; a.Round == cur.N && a.Outcome == "" {
			a.Outcome = "Successful on retry"
			if !ok {
				a.Outcome = "Failed on retry"
			}
		}
	}
}

// DivergenceAnswer is what an answer to the divergence question changes.
type DivergenceAnswer struct {
	// Decision is the decision filed in decisions.md.
	Decision string
	// Defer are the gaps deferred to narrow the scope; Narrow is set when
	// the scope was narrowed (the round's row is measured again).
	Defer  []gap.ID
	Narrow bool
	// AcceptComplexity and ResetStall act on the tracker.
	AcceptComplexity, ResetStall bool
	// Adjustment is standing guidance for the Engineer ("" for none).
	Adjustment string
	// Choice is the termination choice made ("" leaves it).
	Choice string
}

// DecideDivergence decides what the chosen option (key, label) of the
// divergence question does with the user's text; l is the ledger the
// gaps to defer are picked from. A rollback is not decided here: it opens
// the rollback dialogs.
func DecideDivergence(l *gap.Ledger, key, label, text string) DivergenceAnswer {
	da := DivergenceAnswer{Decision: label}
	switch key {
	case convergence.KeyNarrowScope:
		ids, err := convergence.ScopeFromAnswer(l, text)
		if err != nil {
			ids = convergence.NarrowScopeDefault(l)
			da.Decision += fmt.Sprintf(" (%v; deferred the default set instead)", err)
		}
		da.Decision += ": deferred " + render.Dash(render.JoinIDs(ids))
		da.Defer, da.Narrow, da.ResetStall = ids, true, true
	case convergence.KeyAcceptComplexity:
		da.AcceptComplexity = true
	case convergence.KeyPauseForInput:
		da.Adjustment = strings.TrimSpace(text)
		da.ResetStall = true
	case convergence.KeyForceComplete:
		da.Choice = string(convergence.ChoiceForceComplete)
	case convergence.KeyStop:
		da.Choice = string(convergence.ChoiceStop)
	}
	return da
}

// ApplyDivergence applies a divergence answer to the state and the tracker
// in round n.
func ApplyDivergence(st *state.State, t *convergence.Tracker, n int, da DivergenceAnswer, now func() time.Time) error {
	for _, id := range da.Defer {
		if err := st.Ledger.Transition(id, gap.Deferred, n, now(), "deferred by the user to narrow scope (divergence)"); err != nil {
			return fmt.Errorf("round %d narrow scope: %w", n, err)
		}
	}
	if da.Narrow {
		// The round's row counts them in its Deferred column.
		t.Amend(convergence.Measure(n, ledgerBefore(st), &st.Ledger, t.Settings().Weights))
	}
	if da.AcceptComplexity {
		t.AcceptComplexity()
	}
	if da.Adjustment != "" {
		st.Adjustments = append(st.Adjustments, da.Adjustment)
	}
	if da.ResetStall {
		t.ResetStall()
	}
	if da.Choice != "" {
		st.Choice = da.Choice
	}
	return nil
}

// terminationInput is what the termination tree decides on between rounds.
func terminationInput(st *state.State, maxRounds int) convergence.Input {
	return convergence.Input{
		Round: st.Round, MaxRounds: maxRounds, Ledger: &st.Ledger,
		LastReviewApproved: LastReviewApproved(st), Conflicts: conflictBlock(st),
		Choice: convergence.Choice(st.Choice), HighConflictsAcknowledged: st.HighAck,
		OfferedOpenSet: st.OfferedOpenSet,
	}
}

// LastReviewApproved: the last review's verdict was APPROVE. A REVISE
// review never completes a session, whatever was decided or deferred
// after it (DESIGN §7): the session goes on, or ends GOOD_ENOUGH or
// USER_APPROVED. A session that never had a review completes only when it
// never had a gap either.
func LastReviewApproved(st *state.State) bool {
	for i := len(st.Rounds) - 1; i >= 0; i-- {
		if v := st.Rounds[i].Verdict; v != "" {
			return v == string(validate.Approve)
		}
	}
	return len(st.Ledger.Gaps) == 0
}

// BlockedWithoutDecisions is the error of a session whose every open gap
// is BLOCKED with no conflict pending to unblock one; nil otherwise.
func BlockedWithoutDecisions(st *state.State) error {
	if len(conflict.Pending(st.Conflicts)) == 0 {
		return fmt.Errorf("round %d: every open gap is BLOCKED and no conflict is pending: unblock a gap or abandon the session", st.Round+1)
	}
	return nil
}

// choiceBetweenRounds is what is left of a termination choice once the
// session goes on to another round: only "continue" outlives the check.
func choiceBetweenRounds(choice string) string {
	if choice != "" && choice != string(convergence.ChoiceContinue) {
		return ""
	}
	return choice
}

// DropPendingAtEnd drops the questions a finished session no longer
// asks, with their waiting answers: a finished session asks nothing but
// its archive cleanup, and a question still pending (one asked before a
// rollback's limit question ended the session) can no longer apply and
// would keep it PAUSED.
func DropPendingAtEnd(st *state.State) {
	st.Pending = slices.DeleteFunc(st.Pending, func(q question.Question) bool {
		if state.IsCleanupQuestion(q) {
			return false
		}
		delete(st.Answers, q.ID)
		return true
	})
}

// highAckQuestion asks the user to acknowledge the unresolved HIGH
// conflicts before the session ends.
func highAckQuestion(st *state.State) question.Question {
	q := convergence.HighConflictQuestion(conflictBlock(st).UnresolvedHigh)
	q.ID, q.Round = fmt.Sprintf("r%d-high-conflict-ack", st.Round), st.Round
	return q
}

// EarlyTerminationQuestion offers to end the session early; converging
// makes "continue" the automated policy's default.
func EarlyTerminationQuestion(st *state.State, maxRounds int, converging bool) question.Question {
	q := convergence.EarlyTerminationQuestion(convergence.EarlyTerminationInput{Round: st.Round, MaxRounds: maxRounds, Ledger: &st.Ledger})
	q.ID = fmt.Sprintf("r%d-early-termination", st.Round)
	// Automated policy: keep refining while the loop converges;
	// accept as good enough once progress stops.
	if converging {
		q.Default = convergence.KeyContinue
	}
	return q
}

// EarlyTerminationAnswer is what an answer to the early-termination offer
// changes.
type EarlyTerminationAnswer struct {
	// Record files the answer in decisions.md.
	Record bool
	// Pause keeps the question pending and pauses the session.
	Pause bool
	// SetChoice sets the termination choice to Choice.
	SetChoice bool
	Choice    string
}

// DecideEarlyTermination decides what the chosen option key does; auto
// tells the automated policy's answer from a person's.
func DecideEarlyTermination(key string, auto bool) EarlyTerminationAnswer {
	// "Continue" changes nothing: it stays in the question log, and
	// decisions.md and the prompts' decision list keep the choices that
	// steer the session.
	ea := EarlyTerminationAnswer{Record: key != convergence.KeyContinue}
	switch key {
	case convergence.KeyPause:
		ea.Pause = true
	case convergence.KeyContinue:
	case convergence.KeyAccept:
		// A person's "Accept as complete" is USER_APPROVED; the
		// automated policy's default acceptance is GOOD_ENOUGH.
		ea.SetChoice, ea.Choice = true, string(convergence.ChoiceForceComplete)
		if auto {
			ea.Choice = string(convergence.ChoiceAccept)
		}
	default:
		ea.SetChoice, ea.Choice = true, key
	}
	return ea
}

// lastAnswerAuto reports whether the last question asked was answered by
// the automated policy.
func lastAnswerAuto(st *state.State) bool {
	n := len(st.Asked)
	return n > 0 && st.Asked[n-1].Auto
}
