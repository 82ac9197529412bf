package core

import (
	"github.com/refine-spec/refine/question"
)

// QuestionKind says which decision a Question is about.
type QuestionKind = question.Kind

// The kinds of question the Mediator asks.
const (
	KindEscalation       = question.KindEscalation       // a role exhausted its retries (FLOW-001 §5)
	KindRoundFailed      = question.KindRoundFailed      // both roles failed in one round
	KindDivergence       = question.KindDivergence       // DIVERGENCE_WARNING (FLOW-002)
	KindEarlyTermination = question.KindEarlyTermination // good-enough criteria met (FLOW-005)
	KindConflict         = question.KindConflict         // an explicit or converted disagreement (FLOW-006)
	KindImplicit         = question.KindImplicit         // feedback apparently ignored (FLOW-013)
	KindDisagreeRate     = question.KindDisagreeRate     // DISAGREE rate limit (FLOW-006 §3)
	KindRollback         = question.KindRollback         // rollback limit / recovery (FLOW-007)
)

// Option is one choice of a Question.
type Option = question.Option

// Question is a decision the Mediator needs from the user. Its Check
// method returns an error wrapping ErrInvalidAnswer when an Answer does not
// fit it.
type Question = question.Question

// Answer is the user's choice.
type Answer = question.Answer
