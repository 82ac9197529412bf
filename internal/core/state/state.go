package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/refine-spec/refine/conflict"
	"github.com/refine-spec/refine/convergence"
	"github.com/refine-spec/refine/exemplar"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/rollbacktext"
	"github.com/refine-spec/refine/question"
	"github.com/refine-spec/refine/rollback"
	"github.com/refine-spec/refine/store"
)

// SchemaVersion is the version of state.json this refine writes. Open
// refuses newer versions rather than guess at them, and reads schema 1
// (no journal; backups hold whole states) as written by refine 0.1.
const SchemaVersion = 3

// ErrSchema: state.json was written by a newer refine; nothing is touched.
var ErrSchema = errors.New("unsupported state schema")

// The forms of final_spec.md, as Status.FinalSpec and
// final_spec_trace.json name them.
const (
	// FinalSpecIntegrated: the refined spec written by the integration step.
	FinalSpecIntegrated = "integrated"
	// FinalSpecAppendix: the source spec with the accepted resolutions,
	// decisions and known limitations appended.
	FinalSpecAppendix = "appendix"
)

// FinalSpecPending is Status.FinalSpec while the integration step runs.
const FinalSpecPending = "pending"

// State is the source of truth, persisted as state.json. Markdown files are
// renderings of it; nothing is parsed back from them.
type State struct {
	Schema    int       `json:"schema"`
	SessionID string    `json:"session_id"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`

	// Round is the last completed round (0 before the first).
	Round int `json:"round"`
	// Current is the round in progress, nil between rounds.
	Current *RoundState `json:"current,omitempty"`
	// JournalSeq is, in state.json, the journal record this snapshot
	// includes: records after it are applied on open (see persist.go).
	JournalSeq int64 `json:"journal_seq,omitempty"`
	// RunLink names the last run for a SpanObserver (see RunLinker).
	RunLink string `json:"run_link,omitempty"`
	// Settings are the session's Settings as JSON; SettingsLog records
	// each change made with SetSettings.
	Settings    json.RawMessage  `json:"settings,omitempty"`
	SettingsLog []SettingsChange `json:"settings_log,omitempty"`

	Ledger gap.Ledger       `json:"ledger,omitzero"` // encoded apart (statedoc.go)
	Issues []conflict.Issue `json:"issues,omitempty"`
	Rounds []RoundRecord    `json:"rounds,omitempty"`

	Outcome       convergence.Outcome `json:"outcome,omitempty"`
	OutcomeReason string              `json:"outcome_reason,omitempty"`
	FinishedAt    time.Time           `json:"finished_at,omitzero"`

	Pending   []question.Question        `json:"pending,omitempty"`
	Answers   map[string]question.Answer `json:"answers,omitempty"` // given via Answer, not yet applied
	Asked     []AnsweredQuestion         `json:"asked,omitempty"`
	Decisions []DecisionRecord           `json:"decisions,omitempty"`
	// Adjustments are user texts carried into later prompts.
	Adjustments []string `json:"adjustments,omitempty"`

	// AttemptLog and Warnings are the facts status.md's validation logs
	// and retry details are rendered from (attempt_log.go).
	AttemptLog []AttemptFact `json:"attempt_log,omitempty"`
	Warnings   []WarningFact `json:"validation_warnings,omitempty"`
	// LegacyValidation and LegacyRetries are the rendered rows that
	// sessions written before the attempt log kept; they are shown as
	// they are and never added to.
	LegacyValidation []ValidationEntry `json:"validation,omitempty"`
	LegacyRetries    []RetryDetail     `json:"retries,omitempty"`
	// Logged are the events logged for status.md's error tables that no
	// attempt fact gives: transport retries, disagreements logged rather
	// than raised, execution errors. Their rows are derived when rendering.
	Logged []LoggedEvent `json:"logged_events,omitempty"`
	// LegacyErrors are the rendered error rows that sessions written
	// before logged events were facts kept; shown as they are, never added
	// to.
	LegacyErrors []ErrorEntry `json:"errors,omitempty"`

	Usage UsageTotals `json:"usage"`

	// Tracker is the convergence history (FLOW-002).
	Tracker *convergence.Tracker `json:"convergence,omitempty"`
	// PrevLedger is the ledger as the last round ended: the "before" of
	// the next convergence row.
	PrevLedger *gap.Ledger `json:"prev_ledger,omitempty"`
	// OfferedOpenSet fingerprints the open set the early-termination offer
	// was last made for.
	OfferedOpenSet string `json:"offered_open_set,omitempty"`
	// EndChecked is the last round whose end-of-round termination check
	// (FLOW-005: the offers and acknowledgments asked between rounds) is
	// done, so Step knows whether the round in progress still has its end
	// to play (after a crash between the round's end and its check).
	EndChecked int `json:"end_checked,omitempty"`
	// Deciding is the round whose blocking decisions (every open gap
	// BLOCKED) are being asked, one at a time: the rest are asked under
	// that round however the answers come, at once or one by one.
	Deciding int `json:"deciding,omitempty"`
	// Choice is a standing termination choice (accept, force_complete, …).
	Choice string `json:"choice,omitempty"`
	// HighAck records the user's acknowledgment of unresolved HIGH conflicts.
	HighAck bool `json:"high_ack,omitempty"`

	// Discovery is the discovery step's progress (discover.go): set when
	// the session starts without a gap list, or with one and the request
	// to propose additions; done once the person confirmed the list.
	Discovery *DiscoveryState `json:"discovery,omitempty"`

	// Integration is the integration step's progress (integrate.go): set
	// when the session ends, done once final_spec.md has its final form.
	Integration *IntegrationState `json:"integration,omitempty"`

	// CleanupDone records that the session-end archive question was settled.
	CleanupDone bool `json:"cleanup_done,omitempty"`
	// Rollbacks is the rollback history (FLOW-007); it survives rollbacks.
	Rollbacks rollback.History `json:"rollbacks"`
	// Recover holds decisions of rolled-back rounds awaiting the user's
	// re-apply / modify / ignore choice.
	Recover []rollback.RoundDecision `json:"recover,omitempty"`

	// Conflicts are every conflict detected (FLOW-006), resolved or not,
	// and ConflictDecisions the decisions that resolved them.
	Conflicts         []conflict.Conflict `json:"conflicts,omitempty"`
	ConflictDecisions []conflict.Ruling   `json:"conflict_decisions,omitempty"`
	// Ignore holds issues the user marked as false implicit-disagreement positives.
	Ignore conflict.IgnoreSet `json:"ignore"`
	// RateHistory feeds the DISAGREE session-rate check.
	RateHistory conflict.RateHistory `json:"rate_history"`
	// Overrides are user severity overrides of Reviewer issues.
	Overrides conflict.Overrides `json:"overrides,omitempty"`
	// Instructions go into the next round's Engineer prompt once.
	Instructions []string `json:"instructions,omitempty"`
	// ExampleLog records every example attached to a retry (FLOW-008 §8).
	ExampleLog []exemplar.LogEntry `json:"example_log,omitempty"`
	// ReviewerAdjustments are the user's standing instructions for the Reviewer.
	ReviewerAdjustments []string `json:"reviewer_adjustments,omitempty"`

	// RollbackFlow is a rollback waiting in its dialogs (a deferred question).
	RollbackFlow *RollbackFlow `json:"rollback_flow,omitempty"`
	// NextRound steers the next round's assignment after a rollback dialog.
	NextRound *NextRoundPlan `json:"next_round,omitempty"`
	// AutoRetries are the "## Round N Auto-Retry" blocks of status.md.
	AutoRetries []rollbacktext.AutoRetry `json:"auto_retries,omitempty"`
	// RecoverConflicts are the conflict decisions of rolled-back rounds,
	// restored when decision recovery re-applies them.
	RecoverConflicts []conflict.Ruling `json:"recover_conflicts,omitempty"`
	// RecoverDialog is how far the decision-recovery dialog has gone once
	// its first question is answered (nil before).
	RecoverDialog *RecoverDialog `json:"recover_dialog,omitempty"`
	// Repairs are the values the session's Store found damaged and wrote
	// again from its own log (store.Repairer), oldest first; they
	// survive rollbacks.
	Repairs []store.Repair `json:"repairs,omitempty"`
}

// IssueIDs are the IDs of every Reviewer issue, in order.
func (st *State) IssueIDs() []string {
	out := make([]string, len(st.Issues))
	for i, is := range st.Issues {
		out[i] = is.ID
	}
	return out
}

// FinishPending reports whether a finished session still has its
// integration step or its archive cleanup to play.
func (st *State) FinishPending() bool {
	in := st.Integration
	return (in != nil && in.Step != IntegDone) || !st.CleanupDone
}

// CurrentRound is the round a rollback would undo: the one in progress,
// else the last completed one.
func (st *State) CurrentRound() int {
	if st.Current != nil {
		return st.Current.N
	}
	return st.Round
}

// UnansweredPending reports whether a pending question has no answer yet.
// An answer given through Answer waits in state until the question's own
// step takes it, so a question answered from another process does not
// hold the session up.
func (st *State) UnansweredPending() bool {
	for _, q := range st.Pending {
		if _, ok := st.Answers[q.ID]; !ok {
			return true
		}
	}
	return false
}

// EndOfRoundDue reports whether the last round ended but its
// end-of-round termination check did not (a crash between the two, or a
// question answered later): for Step, that check is the rest of the
// round in progress.
func (st *State) EndOfRoundDue() bool {
	return st.Current == nil && st.RollbackFlow == nil && st.Round > 0 && st.EndChecked < st.Round && !st.Outcome.Terminal()
}

// NoteRepairs adds the repairs the state does not hold yet (by ID), and
// reports whether it added any.
func (st *State) NoteRepairs(rs []store.Repair) bool {
	added := false
	for _, r := range rs {
		if !slices.ContainsFunc(st.Repairs, func(h store.Repair) bool { return h.ID == r.ID }) {
			st.Repairs = append(st.Repairs, r)
			added = true
		}
	}
	return added
}

// openIssuesAgainst returns last round's issues against the given gaps.
func (s *State) LastIssuesFor(gaps []gap.ID) []conflict.Issue {
	want := map[gap.ID]bool{}
	for _, g := range gaps {
		want[g] = true
	}
	var out []conflict.Issue
	for _, is := range s.Issues {
		if is.Round == s.Round && want[is.Gap] {
			out = append(out, is)
		}
	}
	return out
}

// OnlyCleanupPending reports whether the session is finished and the only
// questions left are the end-of-session archive cleanup: the session then
// reports its outcome, not PAUSED (the question waits).
func (st *State) OnlyCleanupPending() bool {
	if !st.Outcome.Terminal() || len(st.Pending) == 0 {
		return false
	}
	for _, q := range st.Pending {
		if !IsCleanupQuestion(q) {
			return false
		}
	}
	return true
}

// ParseState decodes state.json, refusing newer schemas and corrupt files
// without touching them.
func ParseState(b []byte) (*State, error) {
	var probe struct {
		Schema *int `json:"schema"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, fmt.Errorf("%w: state.json: %v (the file is left untouched; restore it from state_backup_round_N.json)", store.ErrCorrupt, err)
	}
	if probe.Schema == nil {
		return nil, fmt.Errorf("%w: state.json has no \"schema\" field", store.ErrCorrupt)
	}
	if *probe.Schema > SchemaVersion {
		return nil, fmt.Errorf("%w: state.json is schema %d, this refine reads up to %d: upgrade refine", ErrSchema, *probe.Schema, SchemaVersion)
	}
	if *probe.Schema < 1 {
		return nil, fmt.Errorf("%w: state.json schema %d is invalid", store.ErrCorrupt, *probe.Schema)
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%w: state.json: %v", store.ErrCorrupt, err)
	}
	return &s, nil
}

// IsCleanupQuestion recognises the session-end archive question.
func IsCleanupQuestion(q question.Question) bool {
	return q.Kind == question.KindRollback && q.Title == "ARCHIVE CLEANUP"
}
