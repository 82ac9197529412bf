package state

import (
	"github.com/refine-spec/refine/conflict"
	"github.com/refine-spec/refine/llm"
)

// The integration step's steps.
const (
	IntegEngineer = "engineer"
	IntegReview   = "review"
	IntegAsk      = "ask"
	IntegDone     = "done"
)

// IntegrationState is the integration step's progress, in state.json.
type IntegrationState struct {
	Step string `json:"step"`
	// Round is the last round played; the consistency review's issue IDs
	// are those of the round after it.
	Round int `json:"round"`
	// Decisions are the IDs of the decisions in force when the session
	// ended: each needs a Resolution Log row.
	Decisions []string `json:"decisions,omitempty"`

	Engineer       []AttemptRec `json:"engineer,omitempty"`
	EngineerBudget int          `json:"engineer_budget"`
	// EngineerFrom is where the current run of attempts started (a retry
	// notice answers an attempt of the same run); a run the user's "retry"
	// starts after failures takes the last failed attempt in.
	EngineerFrom   int          `json:"engineer_from,omitempty"`
	Reviewer       []AttemptRec `json:"reviewer,omitempty"`
	ReviewerBudget int          `json:"reviewer_budget,omitempty"`
	ReviewerFrom   int          `json:"reviewer_from,omitempty"`

	// Accepted is the Engineer attempt whose output is the integrated spec
	// (0: none yet).
	Accepted int `json:"accepted,omitempty"`
	// Reviews counts valid consistency reviews; Retried says the one
	// integration retry they give was made.
	Reviews int  `json:"reviews,omitempty"`
	Retried bool `json:"retried,omitempty"`
	// Issues are the last consistency review's issues.
	Issues []conflict.Issue `json:"issues,omitempty"`
	// Asked counts the escalation questions answered (question IDs).
	Asked int `json:"asked,omitempty"`
	// KnownIssues are review issues the user accepted: listed under the
	// spec's Known Limitations.
	KnownIssues []conflict.Issue `json:"known_issues,omitempty"`
	// Notes are what the trace reports beside the log: the accepted
	// output's warnings, a review that could not be had.
	Notes []string `json:"notes,omitempty"`

	// PartsMode says the spec is integrated part by part (its prompt is
	// above the cap); Parts holds each part's accepted attempt (0: kept as
	// written) and Merged says the joined spec is in final/engineer.md.
	PartsMode bool  `json:"parts_mode,omitempty"`
	Parts     []int `json:"parts,omitempty"`
	Merged    bool  `json:"merged,omitempty"`
	// PartsBudget is the tokens a part may hold, fixed when the parts
	// were first planned, so settings changed later do not replan them.
	PartsBudget int `json:"parts_budget,omitempty"`

	// Form and Reason say how final_spec.md was written, once Step is done.
	Form   string `json:"form,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// SpecKey holds the accepted integrated spec: the accepted attempt, or
// the parts joined.
func (in *IntegrationState) SpecKey() string {
	if in.Merged {
		return FinalOutputKey(llm.Engineer)
	}
	_, key := FinalAttemptKeys(llm.Engineer, in.Accepted)
	return key
}

// RunAttempts are role's attempts in the integration step's current run
// of attempts (since its budget was last set).
func (in *IntegrationState) RunAttempts(role llm.RoleName) []AttemptRec {
	if role == llm.Reviewer {
		return in.Reviewer[min(in.ReviewerFrom, len(in.Reviewer)):]
	}
	return in.Engineer[min(in.EngineerFrom, len(in.Engineer)):]
}

// ReviewRound is the round number the consistency review's issue IDs
// carry: the round after the last, within the three digits IDs have.
func (in *IntegrationState) ReviewRound() int { return min(in.Round+1, 999) }
