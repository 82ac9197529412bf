package core

import (
	"time"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/rollback"
)

// MaxRoundsLimit is the highest MaxRounds: issue and decision IDs carry
// one to three round digits (ISSUE-R999-001), and round folders sort with
// three (round_999).
const MaxRoundsLimit = 999

// DefaultMaxTokensCap is the MaxTokensCap of DefaultConfig: the largest
// completion most chat models give in one answer.
const DefaultMaxTokensCap = 32768

// TokensCap is the cap on a raised completion limit: MaxTokensCap, or
// DefaultMaxTokensCap when that is 0.
func (s Settings) TokensCap() int {
	if s.MaxTokensCap > 0 {
		return s.MaxTokensCap
	}
	return DefaultMaxTokensCap
}

// Settings are the tunables of a session that live with it, so that a
// resumed session (another process, the CLI's resume, a web console)
// continues as it was started. DefaultConfig holds the spec's defaults.
type Settings struct {
	// MaxRounds ends the session with MAX_ROUNDS (spec default 10; at most
	// MaxRoundsLimit, as issue and decision IDs carry up to three round
	// digits).
	MaxRounds int `json:"max_rounds"`
	// GapsPerRound is how many open gaps one round takes on (default 3).
	GapsPerRound int `json:"gaps_per_round"`
	// ParallelGaps > 1 calls the Engineer once per assigned gap
	// concurrently, at most this many at a time (default 1: one call).
	ParallelGaps int `json:"parallel_gaps"`
	// MaxRetries is the validation retry budget per role and round (default 2).
	MaxRetries int `json:"max_retries"`
	// StallRounds is how many non-progressing rounds raise
	// DIVERGENCE_WARNING (default 2).
	StallRounds int `json:"stall_rounds"`
	// Weights are the severity weights of weighted convergence (16/4/2/1).
	Weights gap.Weights `json:"weights"`

	// RetryExampleBudget and InitialExampleBudget cap, in tokens, the example
	// attached to retry prompts (2000) and initial prompts (1000).
	RetryExampleBudget   int `json:"retry_example_budget"`
	InitialExampleBudget int `json:"initial_example_budget"`
	// PromptBudget caps a whole prompt in tokens; parts are trimmed in the
	// order spec excerpt, older decisions, LOW/MEDIUM issues, example when it
	// is exceeded; assigned gaps and HIGH/CRITICAL issues are never dropped
	// (default 24000).
	PromptBudget int `json:"prompt_budget"`
	// MaxTokens caps each completion (0: the backend's default).
	MaxTokens int `json:"max_tokens"`
	// MaxTokensCap bounds the completion cap a TRUNCATED answer's retry
	// asks for: each such retry doubles the previous request's MaxTokens
	// (twice the cut answer's completion tokens when that was 0) up to this
	// cap; at the cap a truncation spends the validation retry budget like
	// any failure (0: DefaultMaxTokensCap, as in sessions started before
	// it existed).
	MaxTokensCap int `json:"max_tokens_cap,omitempty"`
	// MaxOutputBytes fails larger role outputs as WRONG_FORMAT (1 MiB).
	MaxOutputBytes int `json:"max_output_bytes"`

	// BackupRetention is how many round backups are kept (3).
	BackupRetention int `json:"backup_retention"`
	// RollbackLimit is how many rollbacks a session allows (7).
	RollbackLimit int `json:"rollback_limit"`
	// RollbackAnalysisThreshold triggers root-cause analysis after this many
	// rollbacks of the same round (2).
	RollbackAnalysisThreshold int `json:"rollback_analysis_threshold"`
	// RollbackMode says what happens around a rollback (FLOW-007):
	// INTERACTIVE (default) leaves the retry to the user and only reports
	// the recommended adjustments; AUTO_RETRY applies them automatically on
	// a round's first rollback; STRICT also analyses after the first one.
	RollbackMode rollback.Mode `json:"rollback_mode"`
	// ArchiveRetention is how long cold-stored archives are kept (30 days).
	ArchiveRetention time.Duration `json:"archive_retention"`
	// DisagreeRoundLimit warns when more than this share of a round's
	// HIGH/CRITICAL issues are disagreed with (0.5).
	DisagreeRoundLimit float64 `json:"disagree_round_limit"`
	// DisagreeSessionLimit alerts when more than this share over the last
	// DisagreeWindow rounds are disagreed with (0.4 over 3).
	DisagreeSessionLimit float64 `json:"disagree_session_limit"`
	DisagreeWindow       int     `json:"disagree_window"`
	// DisagreeMaxPerRound blocks a round with more DISAGREE blocks (5).
	DisagreeMaxPerRound int `json:"disagree_max_per_round"`

	// TransportRetries bounds retries of transient Role errors per attempt
	// (default 5); they never spend MaxRetries.
	TransportRetries int `json:"transport_retries"`
	// BackoffBase and BackoffMax shape the exponential backoff with full
	// jitter between transport retries (1s, 60s).
	BackoffBase time.Duration `json:"backoff_base"`
	BackoffMax  time.Duration `json:"backoff_max"`

	// Integrate makes the Engineer write the refined spec (final_spec.md)
	// when the session ends with its work kept, with a Reviewer
	// consistency review (DESIGN §16); false keeps the appendix form: the
	// source spec with the accepted resolutions appended (default true).
	Integrate bool `json:"integrate"`

	// Backend describes the LLM backend the session was started with, for
	// hosts that rebuild it on resume (the CLI does). Never a secret.
	Backend BackendInfo `json:"backend,omitzero"`
	// ColdStorage says where the host's ColdStore is (a folder for the
	// CLI), for hosts that rebuild ColdStore when they resume the session.
	// The library only stores it.
	ColdStorage string `json:"cold_storage,omitempty"`
}

// BackendInfo names the LLM backend of a session: what a host needs to
// build its Roles again when it resumes the session. It never holds a key.
type BackendInfo struct {
	// Kind is the backend family ("openai", "ollama", "replay", or a
	// host's own name).
	Kind string `json:"kind,omitempty"`
	// EngineerModel and ReviewerModel are the model names.
	EngineerModel string `json:"engineer_model,omitempty"`
	ReviewerModel string `json:"reviewer_model,omitempty"`
	// BaseURL is the endpoint, when not the provider's default.
	BaseURL string `json:"base_url,omitempty"`
	// Source is where replayed or recorded outputs live (a folder), when
	// the backend has one.
	Source string `json:"source,omitempty"`
	// EngineerKind and ReviewerKind name a role's provider when it is not
	// Kind (--engineer anthropic:MODEL --reviewer openai:MODEL); empty:
	// Kind. EngineerBaseURL and ReviewerBaseURL are a role's endpoint when
	// it is not BaseURL.
	EngineerKind    string `json:"engineer_kind,omitempty"`
	ReviewerKind    string `json:"reviewer_kind,omitempty"`
	EngineerBaseURL string `json:"engineer_base_url,omitempty"`
	ReviewerBaseURL string `json:"reviewer_base_url,omitempty"`
}

// RoleBackend is the provider, model and endpoint of one role.
type RoleBackend struct {
	Kind, Model, BaseURL string
}

// Role returns the provider, model and endpoint of role: its own fields
// where set, else the shared ones.
func (b BackendInfo) Role(role llm.RoleName) RoleBackend {
	rb := RoleBackend{Kind: b.Kind, Model: b.EngineerModel, BaseURL: b.BaseURL}
	kind, url := b.EngineerKind, b.EngineerBaseURL
	if role == llm.Reviewer {
		rb.Model = b.ReviewerModel
		kind, url = b.ReviewerKind, b.ReviewerBaseURL
	}
	if kind != "" {
		rb.Kind = kind
	}
	if url != "" {
		rb.BaseURL = url
	}
	return rb
}
