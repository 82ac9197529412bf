package refine

import "context"

// RoleName names a participant of a round.
type RoleName string

// The two LLM-backed roles.
const (
	Engineer RoleName = "engineer"
	Reviewer RoleName = "reviewer"
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
	Attempt int      // 1-based; attempts 2.. are retries
	Gaps    []string // gap IDs assigned to this call
	// Messages are the system and user texts of the prompt.
	Messages []Message
	// ExpectedKey is the Store key the output belongs at
	// ("round_003/engineer.md"). A Role that writes it itself may return
	// empty Content; the Mediator then reads the key.
	ExpectedKey string
	// MaxTokens caps the completion, 0 for the backend's default.
	MaxTokens int
}

// Response is a Role's answer.
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
