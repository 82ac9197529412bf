package rollback

import (
	"slices"
	"time"

	"github.com/refine-spec/refine/gap"
)

// Record is one rolled-back round: a multi-round rollback writes one Record
// per undone round. It is JSON-serialisable and lives in the session state,
// which is why the engine must carry History across the state restore.
type Record struct {
	// Round is the round that was rolled back; Attempt counts that round's
	// rollbacks from 1 (the K of its archive name).
	Round   int `json:"round"`
	Attempt int `json:"attempt"`
	// Target is the round the session was restored to.
	Target  int       `json:"target"`
	At      time.Time `json:"at"`
	Reason  string    `json:"reason"`
	Mode    Mode      `json:"mode"`
	Trigger Trigger   `json:"trigger"`
	// Patterns are the patterns detected in the rolled-back output.
	Patterns []Pattern `json:"patterns,omitempty"`
	// Adjustments are the adjustments applied to the retry, as one-line
	// summaries (Adjustment.Summary or the user's words).
	Adjustments []string `json:"adjustments,omitempty"`
	// Analysis is set when root-cause analysis ran for this rollback.
	Analysis *AnalysisRecord `json:"analysis,omitempty"`
	// UserDecision is the user's choice, in words ("Split gap into 007a, 007b, 007c").
	UserDecision string `json:"user_decision,omitempty"`
	// Split records a gap split decided at this rollback.
	Split *SplitRecord `json:"split,omitempty"`
	// Decisions are the decisions made in the round, archived with it and
	// recoverable: a user may re-apply them after the rollback.
	Decisions []RoundDecision `json:"decisions,omitempty"`
	Archive   string          `json:"archive"`
	// Outcome says how the retry went, in words ("Retry successful");
	// empty while pending.
	Outcome string `json:"outcome,omitempty"`
	// Succeeded marks a retry that succeeded; counted in the summary.
	Succeeded bool `json:"succeeded,omitempty"`
}

// AnalysisRecord is the root-cause analysis result kept in history.
type AnalysisRecord struct {
	// Detected is the likely cause ("Gap scope too large").
	Detected string `json:"detected"`
	// Recommendation is the recommended action ("Split gap").
	Recommendation string `json:"recommendation"`
}

// SplitRecord records a gap split: the parent became SUPERSEDED.
type SplitRecord struct {
	Parent   gap.ID   `json:"parent"`
	Children []gap.ID `json:"children"`
}

// History is a session's rollback history, oldest first.
type History struct {
	Records []Record `json:"records"`
}

// Used is the number of rollbacks the session has used against its limit:
// one per rolled-back round, so a three-round rollback uses three (the
// spec's limit rationale counts rolled-back rounds against session rounds).
func (h History) Used() int { return len(h.Records) }

// Attempts is the number of times round has been rolled back.
func (h History) Attempts(round int) int { return len(h.ForRound(round)) }

// ForRound returns the records of round, oldest first.
func (h History) ForRound(round int) []Record {
	var out []Record
	for _, r := range h.Records {
		if r.Round == round {
			out = append(out, r)
		}
	}
	return out
}

// Rounds returns the rounds that were ever rolled back, ascending.
func (h History) Rounds() []int {
	var out []int
	for _, r := range h.Records {
		if !slices.Contains(out, r.Round) {
			out = append(out, r.Round)
		}
	}
	slices.Sort(out)
	return out
}

// setOutcome records how the retry after rollback `attempt` of `round` went.
// It reports whether such a record exists.
func (h *History) setOutcome(round, attempt int, outcome string, succeeded bool) bool {
	for i := range h.Records {
		if r := &h.Records[i]; r.Round == round && r.Attempt == attempt {
			r.Outcome, r.Succeeded = outcome, succeeded
			return true
		}
	}
	return false
}

// Summary is the Session Rollback Summary's numbers.
type Summary struct {
	Total             int
	SuccessfulRetries int
	Analyses          int
	Splits            []SplitRecord
	Remaining         int
	Limit             int
}

// Summarize computes the summary for a session limit (<= 0: DefaultLimit).
func (h History) Summarize(limit int) Summary {
	if limit <= 0 {
		limit = DefaultLimit
	}
	s := Summary{Total: h.Used(), Limit: limit, Remaining: max(0, limit-h.Used())}
	for _, r := range h.Records {
		if r.Succeeded {
			s.SuccessfulRetries++
		}
		if r.Analysis != nil {
			s.Analyses++
		}
		if r.Split != nil {
			s.Splits = append(s.Splits, *r.Split)
		}
	}
	return s
}
