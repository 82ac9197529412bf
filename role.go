package refine

import (
	"context"

	"github.com/refine-spec/refine/gap"
)

// RoleName names a participant of a round: Engineer or Reviewer. It is
// gap.Role, the one role type every refine package shares.
type RoleName = gap.Role

// The two LLM-backed roles.
const (
	Engineer = gap.Engineer
	Reviewer = gap.Reviewer
)

// Role is one LLM-backed participant (Engineer or Reviewer). Respond is
// called once per attempt; it must honour ctx. Errors that are worth
// retrying after a pause (timeouts, rate limits, 5xx) should satisfy
// Transient (see TransientError); any other error is permanent for the step.
type Role interface {
	Respond(ctx context.Context, req Request) (Response, error)
}

// RoleFunc adapts a function to a Role.
type RoleFunc func(ctx context.Context, req Request) (Response, error)

// Respond calls f.
func (f RoleFunc) Respond(ctx context.Context, req Request) (Response, error) { return f(ctx, req) }

// Message is one chat message of a prompt.
type Message struct {
	// Role is "system" or "user".
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Request is what a Role is asked to do for one attempt.
type Request struct {
	Role    RoleName
	Round   int
	Attempt int // 1-based; attempts 2.. are retries
	// Call is the session-wide, 1-based index of this role's call: the
	// Engineer's calls are numbered 1, 2, 3, … over the whole session, and
	// so are the Reviewer's. It is stable across pauses, crashes and
	// parallel workers (an attempt planned again after a crash keeps its
	// index), so a replaying Role can pick its answer by it.
	Call int
	// Gaps are the gaps assigned to this call.
	Gaps []gap.ID
	// Messages are the system and user texts of the prompt.
	Messages []Message
	// MaxTokens caps the completion, 0 for the backend's default.
	MaxTokens int
}

// Response is a Role's answer. Empty Content is a missing output
// (FILE_MISSING): a Role backed by an agent that writes files returns the
// file's text.
type Response struct {
	Content string
	Usage   Usage
	// Model names the model that answered ("gpt-4o-mini", "replay"), when
	// the backend knows it.
	Model string
	// FinishReason is why generation stopped ("stop", "length"), when the
	// backend reports it.
	FinishReason string
}

// Usage counts tokens as reported by the backend.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// Add returns u + v.
func (u Usage) Add(v Usage) Usage {
	return Usage{PromptTokens: u.PromptTokens + v.PromptTokens, CompletionTokens: u.CompletionTokens + v.CompletionTokens}
}
