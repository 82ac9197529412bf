package core

import (
	"time"

	"github.com/refine-spec/refine/conflict"
	"github.com/refine-spec/refine/convergence"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/core/render"
	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/question"
	"github.com/refine-spec/refine/rollback"
	"github.com/refine-spec/refine/store"
)

// OutcomeStatus is how a session ended, or why it stopped for now. It is
// the convergence package's Outcome, so a termination decision needs no
// conversion; Terminal reports whether the session is finished.
type OutcomeStatus = convergence.Outcome

// Terminal outcomes (docs/workflow.md#outcomes) and the non-terminal stops.
const (
	StatusComplete     = convergence.Complete
	StatusGoodEnough   = convergence.GoodEnough
	StatusUserApproved = convergence.UserApproved
	StatusMaxRounds    = convergence.MaxRounds
	StatusStallExit    = convergence.StallExit
	StatusAbandoned    = convergence.Abandoned
	StatusPaused       = convergence.Paused
	StatusFailed       = convergence.Failed
	StatusRunning      = convergence.Running
)

// Outcome is what Run returns.
type Outcome struct {
	Status OutcomeStatus
	// Round is the last completed round.
	Round  int
	Reason string
	// Pending holds the questions waiting for an answer when Status is Paused.
	Pending []question.Question
}

// RoundReport is what Step returns about the round it played.
type RoundReport struct {
	Round    int
	Engineer string // "OK (1 attempt)", "SKIP", …
	Reviewer string
	Verdict  string
	Accepted []gap.ID
	Revise   []gap.ID
	NewGaps  []gap.ID
	// Outcome is Running while the session goes on; Paused with Pending set
	// when the round stopped at a question; terminal when it ended the session.
	Outcome OutcomeStatus
	Pending []question.Question
}

// GapStatus is one gap as Status reports it.
type GapStatus struct {
	ID       gap.ID       `json:"id"`
	Title    string       `json:"title"`
	Severity gap.Severity `json:"severity"`
	State    gap.State    `json:"state"`
	// Location and Why are where the spec leaves the gap open and why it
	// matters, as discovery or the gap list gave them ("" when not given).
	Location string `json:"location,omitempty"`
	Why      string `json:"why,omitempty"`
	// History lists the gap's state changes, oldest first.
	History []gap.Transition `json:"history,omitempty"`
}

// DecisionStatus is one recorded decision as Status reports it.
type DecisionStatus struct {
	ID       string `json:"id"`
	Issue    string `json:"issue"`
	Option   string `json:"option"`
	Decision string `json:"decision"`
}

// Status is a snapshot of the session.
type Status struct {
	SessionID string
	Round     int
	Phase     state.Phase
	Outcome   OutcomeStatus
	Reason    string
	Gaps      []GapStatus
	Decisions []DecisionStatus
	// Convergence holds one row per completed round (FLOW-002).
	Convergence []convergence.Row
	// ConvergenceState is the tracker's current state ("CONVERGING", "STALLED(1)", …).
	ConvergenceState string
	// Conflicts are the session's conflicts, resolved or not.
	Conflicts []conflict.Conflict
	// Rollbacks are the session's rollbacks, oldest first.
	Rollbacks []rollback.Record
	Pending   []question.Question
	// Validation is the validation log: one entry per tier an attempt
	// passed or failed, oldest first (what status.md shows).
	Validation []render.ValidationRecord
	// Normalized counts, per role and kind, the quirks of form the
	// session's answers were read through (DESIGN §18).
	Normalized []render.NormalizedCount
	Usage      llm.Usage
	Calls      int
	// Responses counts each role's responses so far (transport failures
	// excluded); a resumed replay or recording continues after them.
	Responses map[llm.RoleName]int
	// Settings are the session's settings (thresholds, limits, rollback
	// mode, the backend it was started with), as stored with it.
	Settings  Settings
	UpdatedAt time.Time
	// FinalSpec is the form of final_spec.md: state.FinalSpecIntegrated,
	// state.FinalSpecAppendix, "pending" while the integration step runs, or ""
	// before the session ends. FinalSpecReason says why an appendix form
	// was kept.
	FinalSpec       string
	FinalSpecReason string
	// Repairs are the values the session's Store found damaged and wrote
	// again from its own log, oldest first: those the state records, then
	// those the Store reports that a run has not recorded yet.
	Repairs []store.Repair
}
