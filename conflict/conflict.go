package conflict

import (
	"time"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/validate"
)

// Issue is one Reviewer issue, the type validate parses: the engine
// passes its issues with Round set (issueRound falls back to the round in
// the ID). Severity must be valid for JSON encoding; logic treats an
// invalid one as MEDIUM.
type Issue = validate.Issue

// issueRound returns i.Round, or the round in the ID when Round is unset.
func issueRound(i Issue) int {
	if i.Round > 0 {
		return i.Round
	}
	if id, err := gap.ParseIssueID(i.ID); err == nil {
		return id.Round
	}
	return 0
}

// reviewerText is what the Reviewer asked for: the suggestion, else the
// summary (an issue without a suggestion still states what it wants).
func reviewerText(i Issue) string {
	if i.Suggestion != "" {
		return i.Suggestion
	}
	return i.Summary
}

// Disagreement is one Engineer disagreement as parsed from a DISAGREE block
// (GAP-FLOW-006 §2). The engine may convert validate's parsed blocks or call
// parseEngineerDisagreements.
type Disagreement struct {
	IssueID string `json:"issue_id"` // "" when the block names no issue
	// ReviewerConcern is the quoted concern with "> " markers removed.
	ReviewerConcern  string `json:"reviewer_concern,omitempty"`
	EngineerPosition string `json:"engineer_position,omitempty"`
	Rationale        string `json:"rationale,omitempty"`
	Alternative      string `json:"alternative,omitempty"`
	Line             int    `json:"line,omitempty"` // heading line, 0 when unknown
}

// Type is how a conflict came about.
type Type string

// Conflict types. Waived is not a conflict type proper: it marks the
// decision recorded when the user waives an implicitly unaddressed issue.
const (
	explicit          Type = "EXPLICIT_DISAGREE"  // a DISAGREE block (or its soft match)
	implicitConverted Type = "IMPLICIT_CONVERTED" // GAP-FLOW-013 finding the user converted
	implicitWaived    Type = "IMPLICIT_WAIVED"    // GAP-FLOW-013 finding the user waived
)

// source is the detection path that produced a conflict.
type source string

// Detection sources.
const (
	sourceDisagreeBlock source = "DISAGREE_BLOCK" // exact "## DISAGREE: ISSUE-…" block
	sourceSoftMatch     source = "SOFT_MATCH"     // §2 attempt_soft_issue_match fallback
	sourceImplicit      source = "GAP-FLOW-013"   // implicit disagreement heuristics
)

// Status is where a conflict stands.
type Status string

// Conflict statuses. Only unresolved conflicts block (see Blocking).
const (
	StatusUnresolved Status = "UNRESOLVED"
	StatusResolved   Status = "RESOLVED"   // a Ruling was recorded
	statusDowngraded Status = "DOWNGRADED" // the user overrode the issue to LOW: no longer a conflict
)

// Conflict is a disagreement between the Engineer and the Reviewer on one
// issue, waiting for (or holding) the user's decision.
type Conflict struct {
	IssueID string `json:"issue_id"`
	Type    Type   `json:"type"`
	// Issue is the Reviewer issue, with any user severity override applied.
	Issue Issue `json:"issue"`
	// OriginalSeverity is the Reviewer's severity when the user overrode
	// it, else zero.
	OriginalSeverity gap.Severity `json:"original_severity,omitempty"`
	// Round is the Engineer round in which the conflict was detected.
	Round int `json:"round"`
	// Subject is the one-line subject shown and recorded (the issue
	// summary unless an analysis supplied one).
	Subject string `json:"subject"`

	ReviewerPosition  string `json:"reviewer_position"` // the suggestion, verbatim
	ReviewerConcern   string `json:"reviewer_concern,omitempty"`
	EngineerPosition  string `json:"engineer_position"`
	EngineerRationale string `json:"engineer_rationale,omitempty"`
	Alternative       string `json:"alternative,omitempty"`

	Source source `json:"source"`
	// Heuristics are the implicit heuristics that fired (converted
	// conflicts only).
	Heuristics []Heuristic `json:"heuristics,omitempty"`
	// MatchConfidence is MEDIUM for soft matches, HIGH for exact blocks,
	// and the finding's confidence for converted implicit conflicts.
	MatchConfidence gap.Confidence `json:"match_confidence"`
	// Reference is what the Engineer's block named when it was matched
	// softly (an unknown issue ID, or ""), for the record.
	Reference string `json:"reference,omitempty"`
	// presentationNote is shown with the Engineer's position: §6's note
	// for converted implicit conflicts, a confirmation note for soft
	// matches.
	PresentationNote string    `json:"presentation_note,omitempty"`
	DetectedAt       time.Time `json:"detected_at"`

	// Synthesis is the host's middle ground from an analysis, nil when
	// Option C comes from synthesize's patterns (or is not offered).
	Synthesis *Synthesis `json:"synthesis,omitempty"`
	// Options are the choices offered (generateOptions), kept so an answer
	// can be checked and the decision worded after a restart.
	Options []ConflictOption `json:"options"`

	Status     Status `json:"status"`
	DecisionID string `json:"decision_id,omitempty"`
}

// Open reports whether the conflict still needs the user.
func (c Conflict) Open() bool { return c.Status == StatusUnresolved }

// withOptions returns c with its options generated if it has none (a
// conflict built by hand, or stored before its options were).
func (c Conflict) withOptions() Conflict {
	if len(c.Options) == 0 {
		c.Options = generateOptions(c)
	}
	return c
}
