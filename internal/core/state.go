package core

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/refine-spec/refine/conflict"
	"github.com/refine-spec/refine/convergence"
	"github.com/refine-spec/refine/exemplar"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/rollbacktext"
	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/question"
	"github.com/refine-spec/refine/rollback"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/validate"
)

// SchemaVersion is the version of state.json this refine writes. Open
// refuses newer versions rather than guess at them, and reads schema 1
// (no journal; backups hold whole states) as written by refine 0.1.
const SchemaVersion = 3

// Store keys of the session artifacts (docs/workflow.md#session-folder).
const (
	KeyState     = "state.json"
	KeyStatus    = "status.md"
	KeyDecisions = "decisions.md"
	KeySpec      = "source_spec.md"
	KeyFinalSpec = "final_spec.md"
	KeyFinalSum  = "final_summary.md"
)

func RoundDir(n int) string { return fmt.Sprintf("round_%03d", n) }

// OutputKey names role's output of round n.
func OutputKey(n int, role llm.RoleName) string { return fmt.Sprintf("%s/%s.md", RoundDir(n), role) }
func SummaryKey(n int) string                   { return RoundDir(n) + "/summary.md" }

// attemptKeys returns the journal keys of one attempt: the exact prompt
// sent and the raw response. part is "" or the gap ID of a parallel call.
func AttemptKeys(n int, role llm.RoleName, part string, attempt int) (prompt, response string) {
	name := string(role)
	if part != "" {
		name += "-" + part
	}
	return fmt.Sprintf("%s/prompts/%s-%d.md", RoundDir(n), name, attempt),
		fmt.Sprintf("%s/attempts/%s-%d.md", RoundDir(n), name, attempt)
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
)

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

	Ledger gap.Ledger    `json:"ledger,omitzero"` // encoded apart (statedoc.go)
	Issues []IssueRecord `json:"issues,omitempty"`
	Rounds []RoundRecord `json:"rounds,omitempty"`

	Outcome       OutcomeStatus `json:"outcome,omitempty"`
	OutcomeReason string        `json:"outcome_reason,omitempty"`
	FinishedAt    time.Time     `json:"finished_at,omitzero"`

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

// RoleStatus is where a role stands within a round, or one gap's call of
// parallel drafting (which may also be partExhausted). state.json holds it
// as its string; the zero value is roleRunning.
type RoleStatus string

// Role phase statuses.
const (
	RoleRunning   RoleStatus = ""
	RoleAccepted  RoleStatus = "accepted"
	RoleSkipped   RoleStatus = "skipped"
	RoleNotNeeded RoleStatus = "not_needed"
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
	// limit could still be raised, or a step's first refusal.
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

// normalizedQuirks keeps a validation's normalizations in the state.
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

// AcceptedOutput is what the Mediator keeps of a valid output.
type AcceptedOutput struct {
	GapsAddressed []gap.ID      `json:"gaps_addressed,omitempty"`
	NewGaps       []NewGap      `json:"new_gaps,omitempty"`
	Disagreements []string      `json:"disagreements,omitempty"`
	Issues        []IssueRecord `json:"issues,omitempty"`
	ReviewedGaps  []gap.ID      `json:"reviewed_gaps,omitempty"`
	Verdict       string        `json:"verdict,omitempty"`
	NoIssues      bool          `json:"no_issues,omitempty"`
	Warnings      []string      `json:"warnings,omitempty"`
}

// NewGap is a gap the Reviewer raised in a round.
type NewGap struct {
	ID       gap.ID       `json:"id"`
	Severity gap.Severity `json:"severity"`
	Title    string       `json:"title"`
}

// IssueRecord is one Reviewer issue (Gap is set when a review gap is made
// for it): the one Issue type validate parses and conflict reasons about.
type IssueRecord = conflict.Issue

// RoundRecord is the history of a completed round.
type RoundRecord struct {
	N             int       `json:"n"`
	StartedAt     time.Time `json:"started_at"`
	FinishedAt    time.Time `json:"finished_at"`
	Assigned      []gap.ID  `json:"assigned"`
	Engineer      string    `json:"engineer"` // "OK (2 attempts)", "SKIP", …
	Reviewer      string    `json:"reviewer"`
	Verdict       string    `json:"verdict,omitempty"`
	GapsAddressed []gap.ID  `json:"gaps_addressed,omitempty"`
	Accepted      []gap.ID  `json:"accepted,omitempty"`
	Revise        []gap.ID  `json:"revise,omitempty"`
	Reopened      []gap.ID  `json:"reopened,omitempty"`
	NewGaps       []gap.ID  `json:"new_gaps,omitempty"`
	// Unreviewed are the proposals a skipped Reviewer left unreviewed
	// (FLOW-001 §5): still PROPOSED, they go to the next Reviewer.
	Unreviewed []gap.ID `json:"unreviewed,omitempty"`
}

// AnsweredQuestion is a question and the answer it was given.
type AnsweredQuestion struct {
	Question question.Question `json:"question"`
	Answer   question.Answer   `json:"answer"`
	At       time.Time         `json:"at"`
	// Auto is true when automated mode (or an Asker) answered with the default.
	Auto bool `json:"auto,omitempty"`
}

// DecisionRecord is a user decision recorded in decisions.md.
type DecisionRecord struct {
	ID       string    `json:"id"`
	Round    int       `json:"round"`
	Issue    string    `json:"issue,omitempty"`
	Question string    `json:"question"`
	Option   string    `json:"option"`
	Decision string    `json:"decision"`
	Text     string    `json:"text,omitempty"`
	At       time.Time `json:"at"`
	// Procedural marks a decision about the session's course rather than
	// the spec (a rollback dialog, decision recovery, the archive cleanup,
	// approving or abandoning): a later rollback neither archives it for
	// recovery nor offers it back.
	Procedural bool `json:"procedural,omitempty"`
}

// ValidationEntry is a row of the status.md validation log (GAP-FLOW-001 §9),
// derived from the attempt log (or kept by a legacy session).
type ValidationEntry struct {
	Round   int          `json:"round"`
	At      time.Time    `json:"at"`
	Role    llm.RoleName `json:"role"`
	Part    string       `json:"part,omitempty"`
	Attempt int          `json:"attempt"`
	Tier    string       `json:"tier"`
	Result  string       `json:"result"` // PASS | FAIL
	Message string       `json:"message"`
	// FailureType is a failed attempt's type, for the summary (derived
	// rows only).
	FailureType validate.FailureType `json:"-"`
}

// retryDetail is a "#### Engineer Retry 1" entry of status.md, derived from
// the attempt log (or kept by a legacy session).
type RetryDetail struct {
	Round        int                  `json:"round"`
	Role         llm.RoleName         `json:"role"`
	Part         string               `json:"part,omitempty"`
	Retry        int                  `json:"retry"`
	At           time.Time            `json:"at"`
	FailureType  validate.FailureType `json:"failure_type"`
	Modification string               `json:"modification"`
	Example      string               `json:"example"`
	Outcome      string               `json:"outcome"`
}

// LoggedKind says what a loggedEvent records.
type LoggedKind string

// The kinds of logged event.
const (
	LoggedTransportRetry       LoggedKind = "transport_retry"
	LoggedImplicitDisagreement LoggedKind = "implicit_disagreement"
	LoggedDisagree             LoggedKind = "disagree_logged"
	LoggedUnmatchedDisagree    LoggedKind = "disagree_unmatched"
	LoggedExecutionError       LoggedKind = "execution_error"
)

// loggedEvent is an event the session logged: what happened, not how a
// table shows it (loggedEvent.row renders it).
type LoggedEvent struct {
	Kind  LoggedKind `json:"kind"`
	Round int        `json:"round"`
	At    time.Time  `json:"at"`
	// Role is the role whose call was retried.
	Role llm.RoleName `json:"role,omitempty"`
	// Err is the transport or execution error, one line.
	Err string `json:"error,omitempty"`
	// Try and Delay: the transport retry's number and backoff.
	Try   int           `json:"try,omitempty"`
	Delay time.Duration `json:"delay,omitempty"`
	// Issue, Severity, Confidence, Heuristics and Evidence describe an
	// implicit disagreement; Issue and Position a DISAGREE block, Line
	// where it stands and Against the round whose issues it matched none
	// of.
	Issue      string               `json:"issue,omitempty"`
	Severity   gap.Severity         `json:"severity,omitempty"`
	Confidence gap.Confidence       `json:"confidence,omitempty"`
	Heuristics []conflict.Heuristic `json:"heuristics,omitempty"`
	Evidence   []string             `json:"evidence,omitempty"`
	Position   string               `json:"position,omitempty"`
	Line       int                  `json:"line,omitempty"`
	Against    int                  `json:"against_round,omitempty"`
}

// row renders the event as a row of the "## Round N Errors" table.
func loggedRow(e LoggedEvent) ErrorEntry {
	r := ErrorEntry{Round: e.Round, At: e.At}
	switch e.Kind {
	case LoggedTransportRetry:
		r.Role, r.Event = e.Role.Title(), "Transport retry"
		r.Details = fmt.Sprintf("%s; retry %d in %s", e.Err, e.Try, e.Delay.Round(time.Millisecond))
	case LoggedImplicitDisagreement:
		r.Role, r.Event = "Mediator", "Implicit disagreement (logged)"
		r.Details = fmt.Sprintf("%s (%s issue; %s confidence; %s): %s", e.Issue, e.Severity, e.Confidence, heuristicList(e.Heuristics), strings.Join(e.Evidence, "; "))
	case LoggedDisagree:
		r.Role, r.Event = "Engineer", "DISAGREE logged (not a conflict)"
		r.Details = fmt.Sprintf("%s: %s", dash(e.Issue), dash(e.Position))
	case LoggedUnmatchedDisagree:
		what := "names no issue"
		if e.Issue != "" {
			what = "names " + e.Issue
		}
		if e.Line > 0 {
			what = fmt.Sprintf("line %d %s", e.Line, what)
		}
		r.Role, r.Event = "Engineer", "Unmatched DISAGREE block (logged)"
		r.Details = fmt.Sprintf("%s and matches no issue of round %d: %s", what, e.Against, dash(e.Position))
	case LoggedExecutionError:
		r.Role, r.Event, r.Details = "Mediator", string(validate.ExecutionError), e.Err
	default:
		r.Role, r.Event, r.Details = "Mediator", string(e.Kind), e.Err
	}
	return r
}

// errorEntry is a row of the "## Round N Errors" table (GAP-FLOW-001 §6).
type ErrorEntry struct {
	Round   int       `json:"round"`
	At      time.Time `json:"at"`
	Role    string    `json:"role"`
	Event   string    `json:"event"`
	Details string    `json:"details"`
}

// usageTotals accumulates token usage per role, round and attempt.
type UsageTotals struct {
	Total  llm.Usage            `json:"total"`
	Calls  int                  `json:"calls"`
	ByRole map[string]llm.Usage `json:"by_role,omitempty"`
	// Responses counts the responses each role returned (transport
	// failures excluded); replay and record roles resume from it.
	Responses map[string]int `json:"responses,omitempty"`
	// NextCall is the last call index handed to each role (Request.Call);
	// InFlight keeps the index of each planned attempt, by response key,
	// until its response is recorded, so an attempt planned again after a
	// crash or pause gets the same index.
	NextCall map[string]int `json:"next_call,omitempty"`
	InFlight map[string]int `json:"in_flight,omitempty"`
}

// callIndex returns the session-wide, 1-based index of the role call for
// the attempt whose response is journaled at respKey.
func (u *UsageTotals) CallIndex(role llm.RoleName, respKey string) int {
	if n, ok := u.InFlight[respKey]; ok {
		return n
	}
	if u.NextCall == nil {
		u.NextCall = map[string]int{}
	}
	if u.InFlight == nil {
		u.InFlight = map[string]int{}
	}
	next, ok := u.NextCall[string(role)]
	if !ok {
		// Sessions from before the counter: responses so far were calls 1..n.
		next = u.Responses[string(role)]
	}
	next++
	u.NextCall[string(role)] = next
	u.InFlight[respKey] = next
	return next
}

func (u *UsageTotals) Add(role llm.RoleName, v llm.Usage, calls int) {
	u.Total = u.Total.Add(v)
	u.Calls += calls
	if u.ByRole == nil {
		u.ByRole = map[string]llm.Usage{}
	}
	u.ByRole[string(role)] = u.ByRole[string(role)].Add(v)
	if calls > 0 {
		if u.Responses == nil {
			u.Responses = map[string]int{}
		}
		u.Responses[string(role)]++
	}
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

// openIssuesAgainst returns last round's issues against the given gaps.
func (s *State) LastIssuesFor(gaps []gap.ID) []IssueRecord {
	want := map[gap.ID]bool{}
	for _, g := range gaps {
		want[g] = true
	}
	var out []IssueRecord
	for _, is := range s.Issues {
		if is.Round == s.Round && want[is.Gap] {
			out = append(out, is)
		}
	}
	return out
}
