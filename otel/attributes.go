package refineotel

import "go.opentelemetry.io/otel/attribute"

// Attribute keys of refine's own spans, events and metrics.
const (
	KeySessionID       = attribute.Key("refine.session.id")
	KeyRound           = attribute.Key("refine.round")
	KeyPhase           = attribute.Key("refine.phase")
	KeyRole            = attribute.Key("refine.role")
	KeyAttempt         = attribute.Key("refine.attempt")
	KeyRetry           = attribute.Key("refine.retry")
	KeyGap             = attribute.Key("refine.gap")
	KeyGaps            = attribute.Key("refine.gaps")
	KeyValidation      = attribute.Key("refine.validation.success")
	KeyFailureType     = attribute.Key("refine.failure_type")
	KeyExampleTier     = attribute.Key("refine.example.tier")
	KeyModel           = attribute.Key("refine.model")
	KeyOutcome         = attribute.Key("refine.outcome")
	KeyMessage         = attribute.Key("refine.message")
	KeyQuestionID      = attribute.Key("refine.question.id")
	KeyQuestionKind    = attribute.Key("refine.question.kind")
	KeyQuestionTitle   = attribute.Key("refine.question.title")
	KeyQuestionBody    = attribute.Key("refine.question.body")
	KeyAnswerKey       = attribute.Key("refine.answer.key")
	KeyAnswerText      = attribute.Key("refine.answer.text")
	KeySeverity        = attribute.Key("refine.gap.severity")
	KeyLinkRelation    = attribute.Key("refine.link")
	KeyPreviousRunLink = attribute.Key("refine.previous_run")
)

// OpenTelemetry GenAI semantic-convention keys used on LLM-call spans and
// metrics. They are still "development" in the conventions, so the
// go.opentelemetry.io/otel/semconv packages do not generate them yet.
const (
	KeyGenAIOperationName  = attribute.Key("gen_ai.operation.name")
	KeyGenAIProviderName   = attribute.Key("gen_ai.provider.name")
	KeyGenAIRequestModel   = attribute.Key("gen_ai.request.model")
	KeyGenAIRequestMaxToks = attribute.Key("gen_ai.request.max_tokens")
	KeyGenAIResponseModel  = attribute.Key("gen_ai.response.model")
	KeyGenAIFinishReasons  = attribute.Key("gen_ai.response.finish_reasons")
	KeyGenAIInputTokens    = attribute.Key("gen_ai.usage.input_tokens")
	KeyGenAIOutputTokens   = attribute.Key("gen_ai.usage.output_tokens")
	// KeyGenAICacheReadTokens and KeyGenAICacheWriteTokens are the input
	// tokens read from and written to the provider's prompt cache (part of
	// gen_ai.usage.input_tokens), set when the backend reports them.
	KeyGenAICacheReadTokens  = attribute.Key("gen_ai.usage.cache_read.input_tokens")
	KeyGenAICacheWriteTokens = attribute.Key("gen_ai.usage.cache_creation.input_tokens")
	KeyGenAITokenType        = attribute.Key("gen_ai.token.type")
	KeyGenAIInputMessages    = attribute.Key("gen_ai.input.messages")
	KeyGenAIOutputMessages   = attribute.Key("gen_ai.output.messages")
	KeyErrorType             = attribute.Key("error.type")
	operationChat            = "chat"
	unknownModel             = "unknown"
)
