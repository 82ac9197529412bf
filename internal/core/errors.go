package core

import (
	"errors"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/question"
	"github.com/refine-spec/refine/rollback"
)

// Sentinel errors. Every error refine returns wraps one of these (or a Role's,
// Store's or Asker's own error) with where it happened; match with errors.Is.
// The Store's and the Role's are those of packages store and llm, the same
// values under the same names.
var (
	// ErrDeferred: an Asker cannot answer now; the Mediator persists the
	// question and Run returns a Paused outcome.
	ErrDeferred = errors.New("answer deferred")
	// ErrRollbackLimit: the session has used all the rollbacks it allows
	// (Config.RollbackLimit); raise the limit or finish the session.
	ErrRollbackLimit = rollback.ErrLimit
	// ErrRollbackPending: a rollback was asked for while another one waits
	// for an answer in its dialog, with another target, reason or
	// adjustments (see PendingRollbackError): answer that one, or cancel
	// it with the answer "cancel", first.
	ErrRollbackPending = errors.New("another rollback waits for an answer")
	// ErrOutOfRange: a rollback target is not a round the session can
	// return to (not yet played, or its backups rotated out); the error
	// names the rounds that are available.
	ErrOutOfRange = rollback.ErrOutOfRange
	// ErrInvalidTransition: a gap state change the lifecycle forbids.
	ErrInvalidTransition = gap.ErrInvalidTransition
	// ErrNoSession: Open found no session in the Store.
	ErrNoSession = errors.New("no session in store")
	// ErrSchema: state.json was written by a newer refine; nothing is touched.
	ErrSchema = state.ErrSchema
	// ErrUnknownCall: Deliver names a role call the last Next did not ask for.
	ErrUnknownCall = errors.New("no such role call waits for a response")
	// ErrNotPersisted: the writes of the last Next (Ready.Persist) are
	// not yet committed and acknowledged with Advance.
	ErrNotPersisted = errors.New("the last Ready is not persisted")
	// ErrUnknownQuestion: Answer names a question that is not pending.
	ErrUnknownQuestion = errors.New("no such pending question")
	// ErrInvalidAnswer: an Answer picks an option that was not offered, or
	// carries text where none is allowed.
	ErrInvalidAnswer = question.ErrInvalidAnswer
	// ErrFinished: the session reached a terminal outcome; roll back to reopen it.
	ErrFinished = errors.New("session already finished")
	// ErrContextWindow: the backend ended an answer because the prompt
	// filled the model's context window; a larger completion limit does
	// not help, a smaller prompt (PromptBudget) or a larger model does.
	ErrContextWindow = errors.New("the prompt fills the model's context window")
	// ErrInvalidConfig: Config.Validate rejected a field.
	ErrInvalidConfig = errors.New("invalid config")
)
