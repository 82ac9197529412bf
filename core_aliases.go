package refine

// The public names of the decision core (internal/core): the values a
// session decides with and reports, its errors, and the Store and Role
// contracts it reads through. The root package is the API over the core;
// these are the same types and values, so errors.Is and type switches
// see no difference.

import (
	"time"

	"github.com/refine-spec/refine/internal/core"
)

// Answer is the user's choice.
type Answer = core.Answer

// Append returns an Op that adds value at the end of key's value
// ([store.Append]). Only an Appender accepts it.
func Append(key string, value []byte) Op { return core.Append(key, value) }

// Appender is [store.Appender]: a Store whose Commit accepts OpAppend ops.
type Appender = core.Appender

// Backend is [store.Backend]: many sessions, each a Store. The CLI's --store
// URL, the web console and the Temporal artifact mirror take a Backend.
type Backend = core.Backend

// BackendInfo names the LLM backend of a session: what a host needs to
// build its Roles again when it resumes the session. It never holds a key.
type BackendInfo = core.BackendInfo

// CharTokenizer is the spec's estimate of four characters (runes) per
// token, rounded up: the default, with no network access.
type CharTokenizer = core.CharTokenizer

// CompareSessions is the listing order: newest activity first, then ID
// ([store.CompareSessions]).
func CompareSessions(a SessionInfo, b SessionInfo) int { return core.CompareSessions(a, b) }

// Copier is [store.Copier]: a Store whose Commit accepts OpCopy ops.
type Copier = core.Copier

// Copy returns an Op that sets key to the value from holds at that point of
// the commit ([store.Copy]). Only a Copier accepts it.
func Copy(key string, from string) Op { return core.Copy(key, from) }

// DecisionStatus is one recorded decision as Status reports it.
type DecisionStatus = core.DecisionStatus

// DefaultEngineerTemplate is the Engineer prompt used when
// Config.EngineerTemplate is nil.
const DefaultEngineerTemplate = core.DefaultEngineerTemplate

// DefaultPageSize is the page a listing returns when asked for none
// ([store.DefaultPageSize]).
const DefaultPageSize = core.DefaultPageSize

// DefaultReviewerTemplate is the Reviewer prompt used when
// Config.ReviewerTemplate is nil.
const DefaultReviewerTemplate = core.DefaultReviewerTemplate

// Delete returns an Op that removes key ([store.Delete]).
func Delete(key string) Op { return core.Delete(key) }

// ErrBlocked: the session cannot be approved while a CRITICAL conflict is
// unresolved, or while a HIGH one is unresolved and not acknowledged. The
// error names the conflicts; resolve them (answer their questions) or
// acknowledge the HIGH ones (ApproveRequest.AcknowledgeHigh, `refine
// approve --acknowledge-high`).
var ErrBlocked = core.ErrBlocked

// ErrCorrupt: stored data (state.json, a Store's commit record, an
// archive) cannot be read; nothing is overwritten ([store.ErrCorrupt]).
var ErrCorrupt = core.ErrCorrupt

// ErrDeferred: an Asker cannot answer now; the Mediator persists the
// question and Run returns a Paused outcome.
var ErrDeferred = core.ErrDeferred

// ErrFinished: the session reached a terminal outcome; roll back to reopen it.
var ErrFinished = core.ErrFinished

// ErrContextWindow: the backend ended an answer because the prompt
// filled the model's context window; a larger completion limit does not
// help, a smaller prompt (PromptBudget) or a larger model does.
var ErrContextWindow = core.ErrContextWindow

// ErrInvalidAnswer: an Answer picks an option that was not offered, or
// carries text where none is allowed.
var ErrInvalidAnswer = core.ErrInvalidAnswer

// ErrInvalidConfig: Config.Validate rejected a field.
var ErrInvalidConfig = core.ErrInvalidConfig

// ErrInvalidCursor is wrapped by listing errors for a cursor that no
// page handed out ([store.ErrInvalidCursor]).
var ErrInvalidCursor = core.ErrInvalidCursor

// ErrInvalidKey: a Store key or List prefix breaks the key rules (see
// ValidKey), or a commit would make a key also a folder
// ([store.ErrInvalidKey]).
var ErrInvalidKey = core.ErrInvalidKey

// ErrInvalidTransition: a gap state change the lifecycle forbids.
var ErrInvalidTransition = core.ErrInvalidTransition

// ErrLocked: another process holds the session's lock
// ([store.ErrLocked]).
var ErrLocked = core.ErrLocked

// ErrNoResponse: a Role has no response for a call (a replay recording
// or a test script ran out). A round fails on it like on any permanent
// Role error; the integration step falls back to the appendix form
// ([llm.ErrNoResponse]).
var ErrNoResponse = core.ErrNoResponse

// ErrNoSession: Open found no session in the Store.
var ErrNoSession = core.ErrNoSession

// ErrNotFound: a Store has no value at the key ([store.ErrNotFound]).
var ErrNotFound = core.ErrNotFound

// ErrNotPersisted: the writes of the last Next (Ready.Persist) are
// not yet committed and acknowledged with Advance.
var ErrNotPersisted = core.ErrNotPersisted

// ErrOutOfRange: a rollback target is not a round the session can
// return to (not yet played, or its backups rotated out); the error
// names the rounds that are available.
var ErrOutOfRange = core.ErrOutOfRange

// ErrReadOnly: a Store opened for reading was asked to commit
// ([store.ErrReadOnly]).
var ErrReadOnly = core.ErrReadOnly

// ErrRollbackLimit: the session has used all the rollbacks it allows
// (Config.RollbackLimit); raise the limit or finish the session.
var ErrRollbackLimit = core.ErrRollbackLimit

// ErrRollbackPending: Rollback was asked for while another rollback waits
// for an answer in its dialog with another target, reason or adjustments
// (PendingRollbackError names it): answer that one, or cancel it with the
// answer "cancel", first.
var ErrRollbackPending = core.ErrRollbackPending

// ErrSchema: state.json was written by a newer refine; nothing is touched.
var ErrSchema = core.ErrSchema

// ErrSessionExists: New found a session already in the Store (use
// Open) ([store.ErrSessionExists]).
var ErrSessionExists = core.ErrSessionExists

// ErrUnknownCall: Deliver names a role call the last Next did not ask for.
var ErrUnknownCall = core.ErrUnknownCall

// ErrUnknownQuestion: Answer names a question that is not pending.
var ErrUnknownQuestion = core.ErrUnknownQuestion

// EventIntegrated reports how final_spec.md was written; Message says
// which form and why.
const EventIntegrated = core.EventIntegrated

// EventKind names what happened.
type EventKind = core.EventKind

// EventRolledBack reports a rollback that was carried out; Message names
// the undone rounds and the archives.
const EventRolledBack = core.EventRolledBack

// FinalSpecAppendix: the source spec with the accepted resolutions,
// decisions and known limitations appended.
const FinalSpecAppendix = core.FinalSpecAppendix

// FinalSpecIntegrated: the refined spec written by the integration step.
const FinalSpecIntegrated = core.FinalSpecIntegrated

// FinalSpecPending is Status.FinalSpec while the integration step runs.
const FinalSpecPending = core.FinalSpecPending

// GapStatus is one gap as Status reports it.
type GapStatus = core.GapStatus

// IDSource makes identifiers for sessions.
type IDSource = core.IDSource

// Identified is [store.Identified]: a Store that knows which session it
// holds. New takes its SessionID as the session's ID.
type Identified = core.Identified

// IsTransient reports whether err (or an error it wraps) is Transient, and
// returns its retry-after hint ([llm.IsTransient]).
func IsTransient(err error) (bool, time.Duration) { return core.IsTransient(err) }

// KindConflict: an explicit or converted disagreement (FLOW-006)
const KindConflict = core.KindConflict

// KindDisagreeRate: DISAGREE rate limit (FLOW-006 §3)
const KindDisagreeRate = core.KindDisagreeRate

// KindDivergence: DIVERGENCE_WARNING (FLOW-002)
const KindDivergence = core.KindDivergence

// KindEarlyTermination: good-enough criteria met (FLOW-005)
const KindEarlyTermination = core.KindEarlyTermination

// KindEscalation: a role exhausted its retries (FLOW-001 §5)
const KindEscalation = core.KindEscalation

// KindImplicit: feedback apparently ignored (FLOW-013)
const KindImplicit = core.KindImplicit

// KindRollback: rollback limit / recovery (FLOW-007)
const KindRollback = core.KindRollback

// KindRoundFailed: both roles failed in one round
const KindRoundFailed = core.KindRoundFailed

// MaxKeyLen is the longest key a Store accepts, in bytes ([store.MaxKeyLen]).
const MaxKeyLen = core.MaxKeyLen

// MaxPageSize is the largest page a listing returns ([store.MaxPageSize]).
const MaxPageSize = core.MaxPageSize

// MaxRoundsLimit is the highest MaxRounds: issue and decision IDs carry
// one to three round digits (ISSUE-R999-001), and round folders sort with
// three (round_999).
const MaxRoundsLimit = core.MaxRoundsLimit

// DefaultMaxTokensCap is the MaxTokensCap of DefaultConfig: the largest
// completion most chat models give in one answer.
const DefaultMaxTokensCap = core.DefaultMaxTokensCap

// MaxSessionIDLen is the longest session ID a Backend accepts, in bytes
// ([store.MaxSessionIDLen]).
const MaxSessionIDLen = core.MaxSessionIDLen

// Message is [llm.Message]: one chat message of a prompt.
type Message = core.Message

// NamedCreator is [store.NamedCreator]: a Backend that can create a session
// under a chosen ID.
type NamedCreator = core.NamedCreator

// Op is [store.Op]: one write in a Commit.
type Op = core.Op

// OpKind is [store.OpKind]: what an Op does.
type OpKind = core.OpKind

// Option is one choice of a Question.
type Option = core.Option

// Outcome is what Run returns.
type Outcome = core.Outcome

// OutcomeStatus is how a session ended, or why it stopped for now. It is
// the convergence package's Outcome, so a termination decision needs no
// conversion; Terminal reports whether the session is finished.
type OutcomeStatus = core.OutcomeStatus

// PageOf cuts a page out of a whole listing ([store.PageOf]).
func PageOf(all []SessionInfo, req PageRequest) (SessionPage, error) {
	return core.PageOf(all, req)
}

// PageRequest is [store.PageRequest]: a request for one page of a listing.
type PageRequest = core.PageRequest

// Params is what the decisions read of the host's Config: the settings and
// the prompt material, without the Store, the roles, the Asker or the
// Observer, which only the driver uses.
type Params = core.Params

// ParseSessionCursor reads a cursor SessionCursor made
// ([store.ParseSessionCursor]).
func ParseSessionCursor(c string) (updated time.Time, id string, err error) {
	return core.ParseSessionCursor(c)
}

// Phase is where a round stands. Every phase boundary is committed, so a
// resumed session continues exactly there.
type Phase = core.Phase

// PhaseIntegration is the Phase of the events of the integration step.
const PhaseIntegration = core.PhaseIntegration

// PromptData is what the Engineer and Reviewer templates execute with.
// Hosts that replace a template (Config.EngineerTemplate,
// Config.ReviewerTemplate) may use any of these fields.
type PromptData = core.PromptData

// PromptGap is a gap as prompts show it.
type PromptGap = core.PromptGap

// PromptIssue is a Reviewer issue as prompts show it.
type PromptIssue = core.PromptIssue

// Put returns an Op that stores value at key ([store.Put]).
func Put(key string, value []byte) Op { return core.Put(key, value) }

// Question is a decision the Mediator needs from the user. Its Check
// method returns an error wrapping ErrInvalidAnswer when an Answer does not
// fit it.
type Question = core.Question

// QuestionKind says which decision a Question is about.
type QuestionKind = core.QuestionKind

// Request is [llm.Request]: what a Role is asked to do for one attempt.
type Request = core.Request

// Response is [llm.Response]: a Role's answer.
type Response = core.Response

// Role is [llm.Role]: one LLM-backed participant (Engineer or Reviewer).
type Role = core.Role

// RoleBackend is the provider, model and endpoint of one role.
type RoleBackend = core.RoleBackend

// RoleFunc is [llm.RoleFunc]: a function used as a Role.
type RoleFunc = core.RoleFunc

// RoleName names a participant of a round: Engineer or Reviewer. It is
// gap.Role (and [llm.RoleName]), the one role type every refine package
// shares.
type RoleName = core.RoleName

// PendingRollbackError refuses a rollback request while another rollback
// waits in its dialog with another target, reason or adjustments: it names
// that one. It wraps ErrRollbackPending; get it with errors.As.
type PendingRollbackError = core.PendingRollbackError

// RollbackReport says what a rollback did.
type RollbackReport = core.RollbackReport

// RoundReport is what Step returns about the round it played.
type RoundReport = core.RoundReport

// SessionCursor is the cursor of the page after in
// ([store.SessionCursor]).
func SessionCursor(in SessionInfo) string { return core.SessionCursor(in) }

// SessionInfo is [store.SessionInfo]: one session as Backend.Sessions lists
// it.
type SessionInfo = core.SessionInfo

// SessionPage is [store.SessionPage]: one page of a Backend's sessions.
type SessionPage = core.SessionPage

// SessionPager is [store.SessionPager]: a Backend that lists a page at a
// time by a keyset.
type SessionPager = core.SessionPager

// SessionSummary is [store.SessionSummary]: the small record a session keeps
// at SummaryKey.
type SessionSummary = core.SessionSummary

// Settings are the tunables of a session that live with it, so that a
// resumed session (another process, the CLI's resume, a web console)
// continues as it was started. DefaultConfig holds the spec's defaults.
type Settings = core.Settings

// SettingValue is one setting as status reports show it (Settings.View):
// its JSON name and its value as text.
type SettingValue = core.SettingValue

// Status is a snapshot of the session.
type Status = core.Status

// Store is [store.Store], the small transactional key/value store a session
// lives in.
type Store = core.Store

// SummaryKey is the Store key of a session's summary record
// ([store.SummaryKey]).
const SummaryKey = core.SummaryKey

// Tokenizer counts tokens for prompt budgets and example truncation. It is
// exemplar.Tokenizer: one interface for the whole library.
type Tokenizer = core.Tokenizer

// Transient is [llm.Transient]: a Role error worth retrying after a pause.
type Transient = core.Transient

// TransientError is [llm.TransientError]: Err wrapped as a transient
// failure with an optional retry-after hint.
type TransientError = core.TransientError

// Usage is [llm.Usage]: tokens counted as reported by the backend.
type Usage = core.Usage

// ValidAppendOps is ValidOps for an Appender ([store.ValidAppendOps]).
func ValidAppendOps(ops []Op) error { return core.ValidAppendOps(ops) }

// ValidKey checks a Store key against the rules every Store enforces
// ([store.ValidKey]). The error wraps ErrInvalidKey.
func ValidKey(key string) error { return core.ValidKey(key) }

// ValidOps checks every key of ops and that each op is a put or a delete
// ([store.ValidOps]).
func ValidOps(ops []Op) error { return core.ValidOps(ops) }

// ValidPrefix checks a List prefix ([store.ValidPrefix]). The error wraps
// ErrInvalidKey.
func ValidPrefix(prefix string) error { return core.ValidPrefix(prefix) }

// ValidSessionID checks a session ID ([store.ValidSessionID]). The error
// wraps ErrInvalidKey.
func ValidSessionID(id string) error { return core.ValidSessionID(id) }

// NormalizedCount is how often one kind of quirk was read onto the
// canonical form in one role's answers over the session (DESIGN §18): a
// host sees which model needs a better prompt.
type NormalizedCount = core.NormalizedCount

// ValidationRecord is one row of a session's validation log: the result of
// one validation tier for one attempt of a role.
type ValidationRecord = core.ValidationRecord

// The events an Observer receives, in the order a round produces them.
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
)

// Run lifecycle events, sent by Run and Step around the work they do.
const (
	EventRunStarted  = core.EventRunStarted
	EventRunFinished = core.EventRunFinished
)

// The two LLM-backed roles.
const (
	Engineer = core.Engineer
	Reviewer = core.Reviewer
)

// The phases of a round, in order (docs/workflow.md#one-round).
const (
	PhaseBegin      = core.PhaseBegin
	PhaseEngineer   = core.PhaseEngineer
	PhaseDisagree   = core.PhaseDisagree
	PhaseReviewer   = core.PhaseReviewer
	PhaseSynthesize = core.PhaseSynthesize
	PhaseConverge   = core.PhaseConverge
	PhaseDone       = core.PhaseDone
)

// Terminal outcomes (docs/workflow.md#outcomes) and the non-terminal stops.
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
)

// The kinds of Op ([store.OpPut] and the others).
const (
	OpPut    = core.OpPut
	OpDelete = core.OpDelete
	OpAppend = core.OpAppend
	OpCopy   = core.OpCopy
)
