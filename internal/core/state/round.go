package state

import (
	"errors"
	"time"

	"github.com/refine-spec/refine/conflict"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/validate"
)

// DisagreeState is the progress of a round's disagreement phase (the step
// after validation that handles DISAGREE blocks and implicit disagreement;
// docs/workflow.md#one-round), so a deferred question resumes exactly where
// it stopped.
type DisagreeState struct {
	Detected bool                 `json:"detected,omitempty"`
	Findings []conflict.Finding   `json:"findings,omitempty"`
	Alerts   []conflict.RateAlert `json:"alerts,omitempty"`
	// NextFinding and NextAlert count the questions already answered.
	NextFinding int  `json:"next_finding,omitempty"`
	NextAlert   int  `json:"next_alert,omitempty"`
	Done        bool `json:"done,omitempty"`
	// Submitted is the number of DISAGREE blocks written; RateChecked is
	// set once the rate check ran, after the implicit findings were
	// answered (converted ones count as DISAGREEs: round-10 §9 Phase 2).
	Submitted   int  `json:"submitted,omitempty"`
	RateChecked bool `json:"rate_checked,omitempty"`
}

// Phase is where a round stands. Every phase boundary is committed, so a
// resumed session continues exactly there.
type Phase string

// The phases of a round, in order (docs/workflow.md#one-round).
const (
	PhaseBegin      Phase = "begin"
	PhaseEngineer   Phase = "engineer"
	PhaseDisagree   Phase = "disagreement"
	PhaseReviewer   Phase = "reviewer"
	PhaseSynthesize Phase = "synthesize"
	PhaseConverge   Phase = "converge"
	PhaseDone       Phase = "done"
	// PhaseIntegration is the Phase of the events of the integration
	// step, after the rounds.
	PhaseIntegration Phase = "integration"
	// PhaseDiscovery is the Phase of the events of the discovery step,
	// before the rounds (DESIGN §19).
	PhaseDiscovery Phase = "discovery"
)

// RoundState is the progress of the round in flight.
type RoundState struct {
	N         int       `json:"n"`
	Phase     Phase     `json:"phase"`
	StartedAt time.Time `json:"started_at"`
	// Assigned are the gaps this round took on.
	Assigned []gap.ID  `json:"assigned"`
	Engineer RolePhase `json:"engineer"`
	Reviewer RolePhase `json:"reviewer"`
	// Reviewed are the gaps the Reviewer was given (PROPOSED at its start).
	Reviewed []gap.ID `json:"reviewed,omitempty"`
	// Converged is set once the round's convergence row is recorded, and
	// DivergenceDone once a divergence warning was answered.
	Converged      bool `json:"converged,omitempty"`
	DivergenceDone bool `json:"divergence_done,omitempty"`
	// RoundFailedDone once the both-roles-failed question was answered
	// (other than "pause").
	RoundFailedDone bool `json:"round_failed_done,omitempty"`
	// Disagree is the disagreement phase's progress.
	Disagree DisagreeState `json:"disagree"`
	// Instructions are this round's one-time Engineer instructions.
	Instructions []string `json:"instructions,omitempty"`
}

func (c *RoundState) Role(r llm.RoleName) *RolePhase {
	if r == llm.Reviewer {
		return &c.Reviewer
	}
	return &c.Engineer
}

// RoleStatus is where a role stands within a round, or one gap's call of
// parallel drafting (which may also be partExhausted). state.json holds it
// as its string; the zero value is RoleRunning.
type RoleStatus string

// Role phase statuses.
const (
	RoleRunning   RoleStatus = ""
	RoleAccepted  RoleStatus = "accepted"
	RoleSkipped   RoleStatus = "skipped"
	RoleNotNeeded RoleStatus = "not_needed"
	// PartExhausted: a parallel call spent its retries.
	PartExhausted RoleStatus = "exhausted"
)

// RolePhase is one role's progress within a round.
type RolePhase struct {
	Status RoleStatus `json:"status,omitempty"`
	// Gaps are the gaps this role works on (narrowed or reassigned by escalation).
	Gaps []gap.ID `json:"gaps,omitempty"`
	// Budget is how many attempts are allowed so far: 1 + MaxRetries, plus
	// one per "provide context" or "narrow scope" answer.
	Budget   int          `json:"budget"`
	Attempts []AttemptRec `json:"attempts,omitempty"`
	// Context is user-provided text added to this role's prompt.
	Context []string `json:"context,omitempty"`
	// Parts are the per-gap calls of parallel drafting, in gap order.
	Parts []*PartState `json:"parts,omitempty"`
	// ParallelDone is set once the parallel calls finished.
	ParallelDone bool `json:"parallel_done,omitempty"`
	// Escalated counts answered escalations (pauses excluded).
	Escalated int `json:"escalated,omitempty"`
	// SkipNote says why the role was skipped or not needed.
	SkipNote string `json:"skip_note,omitempty"`
	// Result holds what the accepted output said.
	Result *AcceptedOutput `json:"result,omitempty"`
}

func (rp *RolePhase) Part(id gap.ID) *PartState {
	for _, p := range rp.Parts {
		if p.Gap == id {
			return p
		}
	}
	return nil
}

// LastFailure returns the last failed attempt of the role phase, looking
// into parallel parts when the phase itself made none.
func (rp *RolePhase) LastFailure() (AttemptRec, int, error) {
	if n := len(rp.Attempts); n > 0 {
		return rp.Attempts[n-1], n, nil
	}
	total := 0
	var last AttemptRec
	for _, p := range rp.Parts {
		total += len(p.Attempts)
		if n := len(p.Attempts); n > 0 {
			last = p.Attempts[n-1]
		}
	}
	if total == 0 {
		return AttemptRec{}, 0, errors.New("no attempt to escalate from")
	}
	return last, total, nil
}

// PartState is one gap's call in parallel drafting.
type PartState struct {
	Gap      gap.ID       `json:"gap"`
	Status   RoleStatus   `json:"status,omitempty"`
	Attempts []AttemptRec `json:"attempts,omitempty"`
	// Result is what the accepted output said; the text itself is the
	// journaled response of the last attempt.
	Result *AcceptedOutput `json:"result,omitempty"`
}

// AttemptRec is one validated attempt.
type AttemptRec struct {
	N           int                  `json:"n"`
	At          time.Time            `json:"at"`
	Success     bool                 `json:"success"`
	FailureType validate.FailureType `json:"failure_type,omitempty"`
	Tier        string               `json:"tier,omitempty"`
	Line        int                  `json:"line,omitempty"`
	Message     string               `json:"message,omitempty"`
	Warnings    []string             `json:"warnings,omitempty"`
	Usage       llm.Usage            `json:"usage"`
	Calls       int                  `json:"calls"`
	// UsageEstimated: the role reported no usage; Usage is the Tokenizer's estimate.
	UsageEstimated bool `json:"usage_estimated,omitempty"`
	// Model is the model that answered, when the role said.
	Model string `json:"model,omitempty"`
	// MaxTokens is the completion cap the request carried (0: the
	// backend's default); a TRUNCATED attempt's retry doubles it.
	MaxTokens int `json:"max_tokens,omitempty"`
	// FinishReason is the backend's reason for ending the answer, as
	// journaled with it ("" when it gave none).
	FinishReason string `json:"finish_reason,omitempty"`
	// Free marks a failed attempt whose re-ask did not spend the
	// validation retry budget: an answer the token limit cut while the
	// limit could still be raised, or a refusal that does not follow one.
	Free bool `json:"free,omitempty"`
	// Normalized are the quirks read onto the canonical form (DESIGN §18).
	Normalized []NormalizedQuirk `json:"normalized,omitempty"`
}

// NormalizedQuirk is one kind of quirk an answer's reading mapped onto
// the canonical form: how often, and where first.
type NormalizedQuirk struct {
	Kind  string `json:"kind"`
	Count int    `json:"count"`
	Line  int    `json:"line,omitempty"`
	First string `json:"first,omitempty"`
}

// AcceptedOutput is what the Mediator keeps of a valid output.
type AcceptedOutput struct {
	GapsAddressed []gap.ID         `json:"gaps_addressed,omitempty"`
	NewGaps       []NewGap         `json:"new_gaps,omitempty"`
	Disagreements []string         `json:"disagreements,omitempty"`
	Issues        []conflict.Issue `json:"issues,omitempty"`
	ReviewedGaps  []gap.ID         `json:"reviewed_gaps,omitempty"`
	Verdict       string           `json:"verdict,omitempty"`
	NoIssues      bool             `json:"no_issues,omitempty"`
	Warnings      []string         `json:"warnings,omitempty"`
}

// NewGap is a gap the Reviewer raised in a round.
type NewGap struct {
	ID       gap.ID       `json:"id"`
	Severity gap.Severity `json:"severity"`
	Title    string       `json:"title"`
}

// NormalizedQuirks keeps a validation's normalizations in the state.
func NormalizedQuirks(ns []validate.Normalization) []NormalizedQuirk {
	if len(ns) == 0 {
		return nil
	}
	out := make([]NormalizedQuirk, len(ns))
	for i, n := range ns {
		out[i] = NormalizedQuirk{Kind: n.Kind, Count: n.Count, Line: n.Line, First: n.First}
	}
	return out
}
