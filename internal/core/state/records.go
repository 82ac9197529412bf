package state

import (
	"time"

	"github.com/refine-spec/refine/conflict"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/question"
	"github.com/refine-spec/refine/validate"
)

// TierEscalation is the Tier of the validation log row that records a
// role's spent retry budget (MAX_RETRIES_EXHAUSTED); it is no attempt.
const TierEscalation = "Escalation"

// AttemptFact is what one attempt came to, recorded once when it is
// settled and never edited: status.md's validation log and retry details,
// its validation summary and Status.Validation are all derived from these
// facts when rendered.
type AttemptFact struct {
	Round int          `json:"round"`
	Role  llm.RoleName `json:"role"`
	Part  string       `json:"part,omitempty"`
	N     int          `json:"n"`
	At    time.Time    `json:"at"`
	// Success, with the content check's summary ("2 gaps addressed").
	Success bool   `json:"success,omitempty"`
	Summary string `json:"summary,omitempty"`
	// A failure: its tier, its type and its one-line message.
	Tier        string               `json:"tier,omitempty"`
	FailureType validate.FailureType `json:"failure_type,omitempty"`
	Message     string               `json:"message,omitempty"`
	// Retry is the retry a failure led to; nil when the budget was spent.
	Retry *RetryFact `json:"retry,omitempty"`
	// Normalized are the quirks the answer's reading mapped onto the
	// canonical form (DESIGN §18), counted per role in status.
	Normalized []NormalizedQuirk `json:"normalized,omitempty"`
}

// RetryFact is how the retry after a failure was built.
type RetryFact struct {
	Modification string `json:"modification"`
	Example      string `json:"example"`
}

// WarningFact is a validation warning on a role's accepted output, logged
// when the round converges.
type WarningFact struct {
	Round   int          `json:"round"`
	Role    llm.RoleName `json:"role"`
	Attempt int          `json:"attempt"`
	At      time.Time    `json:"at"`
	Message string       `json:"message"`
}

// SettingsChange is one recorded change of a session's Settings.
type SettingsChange struct {
	Round   int      `json:"round"`
	At      string   `json:"at"`
	Changes []string `json:"changes"` // "max_rounds: 10 → 20"
}

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

// RetryDetail is a "#### Engineer Retry 1" entry of status.md, derived from
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

// LoggedEvent is an event the session logged: what happened, not how a
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

// ErrorEntry is a row of the "## Round N Errors" table (GAP-FLOW-001 §6).
type ErrorEntry struct {
	Round   int       `json:"round"`
	At      time.Time `json:"at"`
	Role    string    `json:"role"`
	Event   string    `json:"event"`
	Details string    `json:"details"`
}

// UsageTotals accumulates token usage per role, round and attempt.
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

// CallIndex returns the session-wide, 1-based index of the role call for
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
