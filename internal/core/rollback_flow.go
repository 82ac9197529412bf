package core

import (
	"fmt"
	"slices"
	"strings"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/internal/rollbacktext"
	"github.com/refine-spec/refine/question"
	"github.com/refine-spec/refine/rollback"
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
// the same dialog after a restart. The dialogs are a pure transition
// (RollbackDialogs): from the flow and, once its question is answered, the
// answer, it says which question to ask or what to do next; the Session
// asks and commits (rollback_dialogs.go).

// Origins of a rollback flow: what resumes when no rollback happens.
const (
	originAPI        = "api"
	originDivergence = "divergence"
	originEscalation = "escalation:" // + role name
)

// Execution completes x, the rollback the dialogs chose, with what the
// flow holds: its target, reason and adjustments, its analysis, and its
// answered questions to file with the rollback.
func flowExecution(f *state.RollbackFlow, x RollbackExec) RollbackExec {
	x.To, x.Reason, x.Trigger = f.To, f.Reason, f.Trigger
	if x.Reason == "" {
		x.Reason = "rollback requested"
	}
	x.Adjustments = append(slices.Clone(f.Adjustments), x.Adjustments...)
	if x.Analysis == nil {
		x.Analysis = f.Analysis
	}
	x.RootCause = f.RootCause
	x.File, x.FileIn = f.Decisions, f.Current
	return x
}

// RollbackPolicy is the session's rollback settings as the dialogs use
// them: the session limit, the mode and the analysis threshold, and the
// severity weights "narrow scope" picks the simplest gap by.
type RollbackPolicy struct {
	Limit     int
	Mode      rollback.Mode
	Threshold int
	Weights   gap.Weights
}

// rollbackView is what the rollback dialogs read besides the state; the
// Session binds it to its Store (rollbackStoreView).
type rollbackView interface {
	// RCA is the root-cause input for rolling back f's round now, its
	// rollback number attempt.
	RCA(f *state.RollbackFlow, attempt int) (rollbacktext.RCAInput, error)
	// Targets are the rows of the targets table for a rollback from
	// round current; TargetCount is how many there are, without reading
	// the backups.
	Targets(current int) ([]rollbacktext.Target, error)
	TargetCount(current int) int
}

// RollbackDialogs is the rollback flow's transition: a pure function of
// the flow, the state (read only), the policy and the view. It changes
// only the flow (its stage, target, notes, analysis).
type RollbackDialogs struct {
	St     *state.State
	Policy RollbackPolicy
	View   rollbackView
}

// FlowAsk is a dialog question to ask.
type FlowAsk struct {
	Q question.Question
	// Paused is the report when the question is deferred (the Session
	// adds the questions pending); AtLimit reports it as ErrRollbackLimit
	// with Paused.Decision.
	Paused  RollbackReport
	AtLimit bool
	// rca is the root-cause input the analysis question was built from.
	rca rollbacktext.RCAInput
}

// FlowMove is one step of the rollback flow. With none of Ask, Exec,
// Pause, Cancel, Restore and AtLimit set, the flow moved to another stage.
type FlowMove struct {
	// Ask is the question to ask; its answer goes to answer.
	Ask *FlowAsk
	// Exec is the rollback to carry out.
	Exec *RollbackExec
	// Pause keeps Q pending (the user chose "pause"), the answer A
	// recorded; Cancel ends the flow without a rollback (Skip: the role
	// that escalated is skipped); Restore drops the request: the session
	// is as before it ("cancel").
	Pause, Cancel, Skip, Restore bool
	// AtLimit: the limit question was answered with the option Effect.
	AtLimit bool
	Effect  string
	Q       question.Question
	A       question.Answer
	// Label is the option chosen; Report what to report when no rollback
	// is carried out.
	Label  string
	Report RollbackReport
}

// Step is the flow's move at its stage before any answer: the question to
// ask or, where none is, the next stage or the rollback to carry out.
func (d RollbackDialogs) Step(f *state.RollbackFlow) (FlowMove, error) {
	attempt := d.St.Rollbacks.Attempts(f.Current) + 1
	switch f.Stage {
	case state.StageDecide:
		return d.decide(f, attempt), nil
	case state.StageLimit:
		return FlowMove{Ask: d.limitQuestion(f)}, nil
	case state.StageAnalysis:
		return d.analysisQuestion(f, attempt)
	case state.StageOptions:
		return FlowMove{Ask: d.optionsQuestion(f, attempt)}, nil
	case state.StageTargets:
		return d.targetsQuestion(f, attempt)
	case state.StageConfirm:
		return d.confirmQuestion(f, attempt)
	}
	return FlowMove{}, fmt.Errorf("rollback: unknown dialog stage %q", f.Stage)
}

// Answer is the flow's move once ask, asked by step, was answered with a.
func (d RollbackDialogs) Answer(f *state.RollbackFlow, ask *FlowAsk, a question.Answer) FlowMove {
	opt, _ := ask.Q.Option(a.Key)
	if opt.Key == KeyCancelRollback {
		return FlowMove{Restore: true, Label: opt.Label, Report: RollbackReport{Decision: opt.Label, Cancelled: true}}
	}
	switch f.Stage {
	case state.StageLimit:
		return limitAnswer(f, ask.Q, a, opt)
	case state.StageAnalysis:
		return analysisAnswer(d.St, f, ask, a, opt)
	case state.StageOptions:
		return d.optionsAnswer(f, ask.Q, a, opt)
	case state.StageTargets:
		return targetsAnswer(f, ask.Q, a, opt)
	}
	return confirmAnswer(f, ask.Q, a, opt)
}

// decide picks the first dialog, or carries out the rollback at once.
func (d RollbackDialogs) decide(f *state.RollbackFlow, attempt int) FlowMove {
	needed := max(1, f.Current-f.To)
	multi := f.To < f.Current-1
	switch {
	case d.St.Rollbacks.Used()+needed > d.Policy.Limit:
		f.Stage = state.StageLimit
	case d.Policy.Mode == rollback.ModeAutoRetry && attempt == 1 && !multi && d.Policy.Threshold > 1:
		return FlowMove{Exec: &RollbackExec{Auto: true}}
	case attempt >= d.Policy.Threshold:
		f.Stage = state.StageAnalysis
	case len(f.Adjustments) > 0:
		return FlowMove{Exec: &RollbackExec{}}
	default:
		f.Stage = state.StageOptions
	}
	return FlowMove{}
}

// execMove carries out x, the answer noted as decision.
func execMove(f *state.RollbackFlow, q question.Question, a question.Answer, x RollbackExec, decision string) FlowMove {
	f.Note(q, a, decision)
	x.Decision = decision
	return FlowMove{Exec: &x}
}

// cancelMove ends the flow without a rollback, label chosen.
func cancelMove(label string, skip bool, rep RollbackReport) FlowMove {
	rep.Decision = label
	return FlowMove{Cancel: true, Skip: skip, Label: label, Report: rep}
}

// limitQuestion is the SESSION ROLLBACK LIMIT REACHED question.
func (d RollbackDialogs) limitQuestion(f *state.RollbackFlow) *FlowAsk {
	// The round asked to be rolled back again is failing whatever its last
	// retry's outcome said (spec Example 4: "Round 7: 2 rollbacks (still failing)").
	h := rollback.History{Records: slices.Clone(d.St.Rollbacks.Records)}
	for i := len(h.Records) - 1; i >= 0; i-- {
		if h.Records[i].Round == f.Current {
			h.Records[i].Outcome = "still failing"
			break
		}
	}
	q := rollbacktext.LimitQuestion(h, d.Policy.Limit)
	q.Round = f.Current
	q.ID = fmt.Sprintf("r%d-rollback-limit-%d", f.Current, d.St.Rollbacks.Used())
	q.Body = "This session has used all " + fmt.Sprint(d.Policy.Limit) + " rollback attempts.\nThis suggests systematic issues beyond individual round problems.\n\n" +
		"Possible causes:\n1. Source spec fundamentally ambiguous\n2. Session scope too broad\n3. Prompt engineering issues\n4. Domain expertise mismatch\n\n" + q.Body
	offerCancel(&q, f)
	return &FlowAsk{Q: q, AtLimit: true, Paused: RollbackReport{Decision: "the limit question waits for an answer"}}
}

// limitAnswer notes the limit question's answer; the Session applies its
// effect (limitOutcome).
func limitAnswer(f *state.RollbackFlow, q question.Question, a question.Answer, opt question.Option) FlowMove {
	m := FlowMove{AtLimit: true, Effect: opt.Effect, Q: q, A: a, Label: opt.Label, Report: RollbackReport{Decision: opt.Label}}
	switch opt.Effect {
	case rollbacktext.EffectPause:
		m.Pause = true
	case rollbacktext.EffectAccept, rollbacktext.EffectAbandon:
		f.Note(q, a, opt.Label)
		m.Cancel = true
	case rollbacktext.EffectPromptRefresh:
		f.Note(q, a, opt.Label+": older adjustments and instructions dropped from the next prompts")
		m.Cancel = true
	}
	return m
}

// analysisQuestion is the REPEATED ROLLBACK DETECTED question; the flow
// keeps its root-cause analysis.
func (d RollbackDialogs) analysisQuestion(f *state.RollbackFlow, attempt int) (FlowMove, error) {
	in, err := d.View.RCA(f, attempt)
	if err != nil {
		return FlowMove{}, err
	}
	q := rollbacktext.AnalysisQuestion(in)
	q.Round = f.Current
	q.ID = fmt.Sprintf("r%d-rollback-analysis-%d", f.Current, attempt)
	if _, ok := q.Option("1"); ok && len(in.Split) < 2 {
		q.TextRequired = append(q.TextRequired, "1") // sub-gap titles
	}
	q.TextRequired = append(q.TextRequired, "2") // the context
	offerCancel(&q, f)
	f.RootCause = q.Body
	f.Analysis = in.Diagnosis.Record()
	return FlowMove{Ask: &FlowAsk{Q: q, Paused: RollbackReport{RootCause: q.Body}, rca: in}}, nil
}

// analysisAnswer applies the repeated-rollback question's answer.
func analysisAnswer(st *state.State, f *state.RollbackFlow, ask *FlowAsk, a question.Answer, opt question.Option) FlowMove {
	q := ask.Q
	text := strings.TrimSpace(a.Text)
	x := RollbackExec{}
	decision := opt.Label
	switch rollback.Action(opt.Effect) {
	case rollback.ActionSplit:
		x, decision = splitChoice(ask.rca, opt.Label, text)
	case rollback.ActionContext:
		x.Adjustments = append(x.Adjustments, text)
	case rollback.ActionReassign:
		x.Next = &state.NextRoundPlan{Avoid: slices.Clone(assignedIn(st, f.Current))}
	case rollback.ActionForce:
		f.Note(q, a, opt.Label+": round kept, no rollback")
		if f.Analysis != nil {
			f.Analysis.Recommendation += " (user forced proceeding)"
		}
		return cancelMove(opt.Label, false, RollbackReport{RootCause: q.Body})
	case rollback.ActionPause:
		return FlowMove{Pause: true, Q: q, A: a, Label: opt.Label, Report: RollbackReport{RootCause: q.Body}}
	}
	return execMove(f, q, a, x, decision)
}

// splitChoice is the rollback a "split the gap" answer asks for: the
// user's titles (none: the suggested ones), the retry narrowed to the
// first sub-gap; one title is no split and becomes context for the retry.
func splitChoice(in rollbacktext.RCAInput, label, text string) (RollbackExec, string) {
	titles := rollback.ParseSplitTitles(text)
	if text == "" {
		for _, c := range in.Split { // "as suggested"
			titles = append(titles, c.Title)
		}
	}
	if len(titles) < 2 {
		// One title is no split: keep the user's words as context.
		return RollbackExec{Adjustments: []string{text}}, "Split needs at least two sub-gap titles; the text was used as context for the retry instead"
	}
	x := RollbackExec{Split: &state.SplitPlan{Gap: in.Gap, Titles: titles}, Next: &state.NextRoundPlan{Only: []gap.ID{in.Gap.Child('a')}}}
	return x, fmt.Sprintf("%s: %s into %d sub-gaps", label, in.Gap, len(titles))
}

// optionsQuestion is the rollback options question (1-5).
func (d RollbackDialogs) optionsQuestion(f *state.RollbackFlow, attempt int) *FlowAsk {
	targets := 0
	if !f.Explicit {
		targets = d.View.TargetCount(f.Current)
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
	offerCancel(&q, f)
	return &FlowAsk{Q: q}
}

// optionsAnswer applies the rollback options question's answer.
func (d RollbackDialogs) optionsAnswer(f *state.RollbackFlow, q question.Question, a question.Answer, opt question.Option) FlowMove {
	text := strings.TrimSpace(a.Text)
	x := RollbackExec{}
	decision := opt.Label
	switch opt.Effect {
	case rollbacktext.EffectRetrySame:
		if text != "" {
			x.Adjustments = append(x.Adjustments, text)
		}
	case rollbacktext.EffectRetryNarrow:
		if assigned := assignedIn(d.St, f.Current); len(assigned) > 0 {
			g := SimplestGap(&d.St.Ledger, &state.RolePhase{Gaps: assigned}, d.Policy.Weights)
			x.Next = &state.NextRoundPlan{Only: []gap.ID{g}}
			decision += ": " + string(g)
		}
	case rollbacktext.EffectRetryContext:
		if text == "" {
			text = f.Text
		}
		x.Adjustments = append(x.Adjustments, text)
	case rollbacktext.EffectMultiRound:
		f.Note(q, a, decision)
		f.Stage = state.StageTargets
		return FlowMove{}
	case rollbacktext.EffectSkip:
		f.Note(q, a, opt.Label+": round kept, no rollback")
		return cancelMove(opt.Label, true, RollbackReport{})
	}
	return execMove(f, q, a, x, decision)
}

// targetsQuestion asks which round to return to; the option keys are the
// round numbers, as `refine rollback --to N` takes them.
func (d RollbackDialogs) targetsQuestion(f *state.RollbackFlow, attempt int) (FlowMove, error) {
	rows, err := d.View.Targets(f.Current)
	if err != nil {
		return FlowMove{}, err
	}
	q := rollbacktext.TargetsQuestion(f.Current, rows)
	for i := range q.Options {
		if n, ok := rollbacktext.TargetOf(q.Options[i].Effect); ok {
			q.Options[i].Key = fmt.Sprint(n)
		}
	}
	q.Default = q.Options[0].Key
	offerCancel(&q, f)
	q.Round = f.Current
	q.ID = fmt.Sprintf("r%d-rollback-targets-%d-%d", f.Current, attempt, f.Seq)
	q.Body = "MULTI-ROUND ROLLBACK\n\n" + q.Body
	return FlowMove{Ask: &FlowAsk{Q: q}}, nil
}

// targetsAnswer moves to the confirmation of the chosen target ("cancel"
// is Answer's).
func targetsAnswer(f *state.RollbackFlow, q question.Question, a question.Answer, opt question.Option) FlowMove {
	f.Note(q, a, opt.Label)
	if n, ok := rollbacktext.TargetOf(opt.Effect); ok {
		f.To = n
	}
	f.Stage = state.StageConfirm
	return FlowMove{}
}

// confirmQuestion confirms a multi-round rollback (spec Example 2); a
// target no longer available is asked for again.
func (d RollbackDialogs) confirmQuestion(f *state.RollbackFlow, attempt int) (FlowMove, error) {
	rows, err := d.View.Targets(f.Current)
	if err != nil {
		return FlowMove{}, err
	}
	i := slices.IndexFunc(rows, func(t rollbacktext.Target) bool { return t.Round == f.To })
	if i < 0 {
		f.Stage, f.Seq = state.StageTargets, f.Seq+1
		return FlowMove{}, nil
	}
	q := rollbacktext.ConfirmQuestion(f.Current, rows[i], rows, len(d.St.Ledger.Open()))
	offerCancel(&q, f)
	q.Round = f.Current
	q.ID = fmt.Sprintf("r%d-rollback-confirm-%d-to%d-%d", f.Current, attempt, f.To, f.Seq)
	return FlowMove{Ask: &FlowAsk{Q: q}}, nil
}

// confirmAnswer carries out the confirmed rollback or asks for another
// target ("cancel" is Answer's).
func confirmAnswer(f *state.RollbackFlow, q question.Question, a question.Answer, opt question.Option) FlowMove {
	f.Note(q, a, opt.Label)
	if opt.Effect == rollbacktext.EffectChooseOther {
		f.Stage, f.Seq = state.StageTargets, f.Seq+1
		return FlowMove{}
	}
	return FlowMove{Exec: &RollbackExec{Decision: opt.Label}}
}

// KeyCancelRollback is the option every rollback dialog offers to drop
// the rollback request: the session is as it was before it (DESIGN §12).
const KeyCancelRollback = "cancel"

// offerCancel gives q, a question of f's dialogs, the "cancel" option: the
// cancel option a dialog has of its own (targets, confirmation) takes the
// key, else one is added.
func offerCancel(q *question.Question, f *state.RollbackFlow) {
	for i := range q.Options {
		if q.Options[i].Effect == rollbacktext.EffectCancel {
			if q.Default == q.Options[i].Key {
				q.Default = KeyCancelRollback
			}
			q.Options[i].Key = KeyCancelRollback
			return
		}
	}
	label := "Cancel the rollback: the session stays as it was before the request"
	if f.Origin != originAPI {
		label = "Cancel the rollback: back to the question that asked for it"
	}
	q.Options = append(q.Options, question.Option{Key: KeyCancelRollback, Label: label, Effect: rollbacktext.EffectCancel})
}

// sameRollback reports whether req asks for the rollback f is: the same
// target, reason and adjustments. A request for another one must not be
// taken as an answer to this one's dialog.
func sameRollback(f *state.RollbackFlow, req RollbackRequest) bool {
	return f.To == req.To && strings.TrimSpace(f.Reason) == strings.TrimSpace(req.Reason) && slices.Equal(f.Adjustments, req.Adjustments)
}
