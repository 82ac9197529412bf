package state

import (
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/question"
	"github.com/refine-spec/refine/rollback"
)

// RecoverDialog is the decision-recovery dialog past its first question:
// "Modify" asks which decision and what it becomes (MODIFY DECISION); that
// one decision is re-applied as modified, and the recovery question is
// asked again for the others.
type RecoverDialog struct {
	// Asked counts the dialog's questions answered (it numbers the next
	// one's ID).
	Asked int `json:"asked"`
	// Modify: the MODIFY DECISION question is next; Text is the text
	// given with "Modify" (the edit, unless its answer has its own).
	Modify bool   `json:"modify,omitempty"`
	Text   string `json:"text,omitempty"`
	// Modified are the decisions re-applied as modified so far.
	Modified []string `json:"modified,omitempty"`
}

// SplitPlan is the gap split chosen at a repeated rollback.
type SplitPlan struct {
	Gap    gap.ID   `json:"gap"`
	Titles []string `json:"titles"`
}

// NextRoundPlan steers the assignment of the retried round: Only narrows
// it to these gaps, Avoid keeps these out when others are open.
type NextRoundPlan struct {
	Only  []gap.ID `json:"only,omitempty"`
	Avoid []gap.ID `json:"avoid,omitempty"`
}

// FlowStage is where a rollback flow stands in its dialogs; it is stored
// with the flow (state.json) as its string.
type FlowStage string

// Stages of a rollback flow.
const (
	StageDecide   FlowStage = ""
	StageLimit    FlowStage = "limit"
	StageAnalysis FlowStage = "analysis"
	StageOptions  FlowStage = "options"
	StageTargets  FlowStage = "targets"
	StageConfirm  FlowStage = "confirm"
)

// RollbackFlow is a rollback in progress through its dialogs.
type RollbackFlow struct {
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
	Explicit    bool      `json:"explicit,omitempty"`
	Adjustments []string  `json:"adjustments,omitempty"`
	Origin      string    `json:"origin,omitempty"`
	Stage       FlowStage `json:"stage,omitempty"`
	// Seq numbers repeated target questions ("choose different target").
	Seq int `json:"seq,omitempty"`
	// Decisions are the answered dialog questions, filed under round
	// Current once the rollback is done (or cancelled), so the rollback's
	// archive does not swallow the decision that caused it.
	Decisions []FlowDecision `json:"decisions,omitempty"`
	// Analysis and RootCause are kept from the repeated-rollback question.
	Analysis  *rollback.AnalysisRecord `json:"analysis,omitempty"`
	RootCause string                   `json:"root_cause,omitempty"`
	// SetAside are the questions that waited when the rollback was asked
	// for (Session.Rollback): "cancel" puts them back.
	SetAside        []question.Question        `json:"set_aside,omitempty"`
	SetAsideAnswers map[string]question.Answer `json:"set_aside_answers,omitempty"`
}

func (f *RollbackFlow) Note(q question.Question, a question.Answer, decision string) {
	f.Decisions = append(f.Decisions, FlowDecision{Question: question.Question{ID: q.ID, Kind: q.Kind, Round: q.Round, Title: q.Title}, Answer: a, Decision: decision})
}

// FlowDecision is one answered question of a rollback flow.
type FlowDecision struct {
	Issue    string            `json:"issue,omitempty"`
	Question question.Question `json:"question"`
	Answer   question.Answer   `json:"answer"`
	Decision string            `json:"decision"`
}
