package refine

// The public names of what a session decides and reports (the types live
// in internal/core, the decisions' package; these are the same types and
// values, so errors.Is and type switches see no difference), and the Role
// and Store contracts of packages llm and store, aliased once here.

import (
	"time"

	"github.com/refine-spec/refine/exemplar"
	"github.com/refine-spec/refine/internal/core"
	"github.com/refine-spec/refine/internal/core/render"
	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/question"
	"github.com/refine-spec/refine/store"
)

// The Store contract (package store): a small transactional key/value
// store scoped to one session. Its ops, capabilities, backends and key
// rules are in package store.
type Store = store.Store

// The Role contract (package llm): one LLM-backed participant, what it is
// asked and what it answers.
type (
	Role           = llm.Role
	RoleFunc       = llm.RoleFunc
	RoleName       = llm.RoleName
	Request        = llm.Request
	Response       = llm.Response
	Message        = llm.Message
	Usage          = llm.Usage
	TransientError = llm.TransientError
)

// IsTransient reports whether err is worth retrying after a pause, and the
// pause the backend asked for, if any ([llm.IsTransient]).
func IsTransient(err error) (bool, time.Duration) { return llm.IsTransient(err) }

// The two LLM-backed roles.
const (
	Engineer = llm.Engineer
	Reviewer = llm.Reviewer
)

// Questions and answers: a Question asked with its Options, of a
// QuestionKind, and the Answer that picks one.
type (
	Question     = question.Question
	QuestionKind = question.Kind
	Option       = question.Option
	Answer       = question.Answer
)

// The kinds of question a session asks (docs/workflow.md#questions).
const (
	KindConflict         = question.KindConflict
	KindImplicit         = question.KindImplicit
	KindDisagreeRate     = question.KindDisagreeRate
	KindEscalation       = question.KindEscalation
	KindRoundFailed      = question.KindRoundFailed
	KindDivergence       = question.KindDivergence
	KindEarlyTermination = question.KindEarlyTermination
	KindRollback         = question.KindRollback
	KindDiscovery        = question.KindDiscovery
)

// Where a session stands and how it ended.
type (
	Outcome          = core.Outcome
	OutcomeStatus    = core.OutcomeStatus
	Status           = core.Status
	Phase            = state.Phase
	RoundReport      = core.RoundReport
	RollbackReport   = core.RollbackReport
	GapStatus        = core.GapStatus
	DecisionStatus   = core.DecisionStatus
	ValidationRecord = render.ValidationRecord
	NormalizedCount  = render.NormalizedCount
)

// Terminal outcomes (docs/workflow.md#outcomes), the non-terminal stops,
// and the phases of a round, in order (docs/workflow.md#one-round).
const (
	StatusComplete     = core.StatusComplete
	StatusGoodEnough   = core.StatusGoodEnough
	StatusUserApproved = core.StatusUserApproved
	StatusMaxRounds    = core.StatusMaxRounds
	StatusStallExit    = core.StatusStallExit
	StatusAbandoned    = core.StatusAbandoned
	StatusPaused       = core.StatusPaused
	StatusFailed       = core.StatusFailed
	StatusRunning      = core.StatusRunning

	PhaseBegin       = state.PhaseBegin
	PhaseEngineer    = state.PhaseEngineer
	PhaseDisagree    = state.PhaseDisagree
	PhaseReviewer    = state.PhaseReviewer
	PhaseSynthesize  = state.PhaseSynthesize
	PhaseConverge    = state.PhaseConverge
	PhaseDone        = state.PhaseDone
	PhaseIntegration = state.PhaseIntegration
	PhaseDiscovery   = state.PhaseDiscovery

	// The forms of final_spec.md (Status.FinalSpec).
	FinalSpecIntegrated = state.FinalSpecIntegrated
	FinalSpecAppendix   = state.FinalSpecAppendix
	FinalSpecPending    = state.FinalSpecPending
)

// What a session is configured with and stores: its tunables, the backend
// it was started with, prompt material, and the tokenizer and ID source a
// host may inject.
type (
	Settings      = core.Settings
	BackendInfo   = core.BackendInfo
	RoleBackend   = core.RoleBackend
	PromptData    = core.PromptData
	Tokenizer     = exemplar.Tokenizer
	CharTokenizer = exemplar.CharTokenizer
	IDSource      = core.IDSource
)

// Limits and defaults.
const (
	// MaxRoundsLimit is the highest MaxRounds: issue and decision IDs
	// carry one to three round digits (ISSUE-R999-001).
	MaxRoundsLimit = core.MaxRoundsLimit
	// DefaultMaxTokensCap is the MaxTokensCap of DefaultConfig.
	DefaultMaxTokensCap = core.DefaultMaxTokensCap
	// DefaultEngineerTemplate and DefaultReviewerTemplate are the prompt
	// templates Config's nil templates stand for (they execute with a
	// PromptData).
	DefaultEngineerTemplate = core.DefaultEngineerTemplate
	DefaultReviewerTemplate = core.DefaultReviewerTemplate
)

// Events an Observer receives.
type EventKind = core.EventKind

// The events, in the order a round produces them, then the run's.
const (
	EventRoundStarted     = core.EventRoundStarted
	EventRoundFinished    = core.EventRoundFinished
	EventPhaseStarted     = core.EventPhaseStarted
	EventPhaseFinished    = core.EventPhaseFinished
	EventAttemptStarted   = core.EventAttemptStarted
	EventAttemptFinished  = core.EventAttemptFinished
	EventValidationFailed = core.EventValidationFailed
	EventRetry            = core.EventRetry
	EventTransportRetry   = core.EventTransportRetry
	EventEscalation       = core.EventEscalation
	EventQuestionAsked    = core.EventQuestionAsked
	EventQuestionAnswered = core.EventQuestionAnswered
	EventCommitted        = core.EventCommitted
	EventSessionFinished  = core.EventSessionFinished
	EventIntegrated       = core.EventIntegrated
	EventRolledBack       = core.EventRolledBack
	EventRunStarted       = core.EventRunStarted
	EventRunFinished      = core.EventRunFinished
)

// PendingRollbackError is the refusal of a rollback request while another
// waits for an answer (it wraps ErrRollbackPending and names that one).
type PendingRollbackError = core.PendingRollbackError

// Sentinel errors. Every error refine returns wraps one of these (or a
// Role's, Store's or Asker's own error) with where it happened; match with
// errors.Is. The Store's and the Role's are those of packages store and
// llm, the same values under the same names.
var (
	// ErrNotFound: a Store has no value at the key ([store.ErrNotFound]).
	ErrNotFound = store.ErrNotFound
	// ErrInvalidKey: a Store key breaks the key rules ([store.ErrInvalidKey]).
	ErrInvalidKey = store.ErrInvalidKey
	// ErrLocked: another process holds the session's lock ([store.ErrLocked]).
	ErrLocked = store.ErrLocked
	// ErrReadOnly: a Store opened for reading was asked to commit
	// ([store.ErrReadOnly]).
	ErrReadOnly = store.ErrReadOnly
	// ErrCorrupt: stored data cannot be read; nothing is overwritten
	// ([store.ErrCorrupt]).
	ErrCorrupt = store.ErrCorrupt
	// ErrSessionExists: New found a session already in the Store (use
	// Open) ([store.ErrSessionExists]).
	ErrSessionExists = store.ErrSessionExists
	// ErrNoResponse: a Role has no response for a call (a replay
	// recording or a test script ran out) ([llm.ErrNoResponse]).
	ErrNoResponse = llm.ErrNoResponse

	// ErrDeferred: an Asker cannot answer now; the session persists the
	// question and Run returns a Paused outcome.
	ErrDeferred = core.ErrDeferred
	// ErrNoSession: Open found no session in the Store.
	ErrNoSession = core.ErrNoSession
	// ErrSchema: state.json was written by a newer refine; nothing is touched.
	ErrSchema = core.ErrSchema
	// ErrInvalidConfig: Config.Validate rejected a field.
	ErrInvalidConfig = core.ErrInvalidConfig
	// ErrUnknownQuestion: an answer names a question that is not pending.
	ErrUnknownQuestion = core.ErrUnknownQuestion
	// ErrInvalidAnswer: an Answer picks an option that was not offered, or
	// carries text where none is allowed.
	ErrInvalidAnswer = core.ErrInvalidAnswer
	// ErrFinished: the session reached a terminal outcome; roll back to
	// reopen it.
	ErrFinished = core.ErrFinished
	// ErrBlocked: Approve refused while a CRITICAL conflict is unresolved
	// or a HIGH one neither resolved nor acknowledged.
	ErrBlocked = core.ErrBlocked
	// ErrRollbackLimit: the session has used all the rollbacks it allows.
	ErrRollbackLimit = core.ErrRollbackLimit
	// ErrOutOfRange: a rollback target is not a round the session can
	// return to; the error names the rounds that are.
	ErrOutOfRange = core.ErrOutOfRange
	// ErrRollbackPending: another rollback waits for an answer
	// (PendingRollbackError names it).
	ErrRollbackPending = core.ErrRollbackPending
	// ErrInvalidTransition: a gap state change the lifecycle forbids.
	ErrInvalidTransition = core.ErrInvalidTransition
	// ErrContextWindow: the backend ended an answer because the prompt
	// filled the model's context window; a smaller prompt (PromptBudget)
	// or a larger model helps, a larger completion limit does not.
	ErrContextWindow = core.ErrContextWindow
	// ErrNotPersisted: the writes of the last Ready are not yet committed
	// and acknowledged with Advance.
	ErrNotPersisted = core.ErrNotPersisted
	// ErrUnknownCall: Deliver names a role call the last Next did not ask for.
	ErrUnknownCall = core.ErrUnknownCall
)
