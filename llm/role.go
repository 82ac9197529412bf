package llm

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
	// Stable is how many leading Messages form the prompt's stable prefix:
	// text that is byte-identical from one call of the role to the next
	// (system text, the whole spec, every binding decision, the format
	// example), ordered from most to least stable. A new decision appends
	// to it; nothing before it changes. An adapter for a provider with
	// explicit prompt caching marks the end of Messages[Stable-1] as a
	// cache breakpoint (the Anthropic Role does); others ignore it, and
	// providers that cache automatically (OpenAI) profit from the order
	// alone. 0 means no stable prefix.
	Stable int
	// Discovery marks the discovery call (DESIGN §19): the Reviewer reads
	// the draft alone, in round 0, and lists its gaps. Call then numbers
	// the session's discovery calls, apart from the Reviewer's other
	// calls, and a recording holds their answers as discovery-001.md, … .
	Discovery bool `json:",omitempty"`
}

// DiscoveryFiles is the name recordings give the discovery call's
// answers in place of a role's: discovery-001.md, … .
const DiscoveryFiles RoleName = "discovery"

// FileRole is the name req's answers take in a recording: its role's, or
// DiscoveryFiles for the discovery call.
func (req Request) FileRole() RoleName {
	if req.Discovery {
		return DiscoveryFiles
	}
	return req.Role
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
	// PromptTokens counts every input token, cached ones included.
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// CachedPromptTokens are the prompt tokens the provider read from its
	// prompt cache (OpenAI prompt_tokens_details.cached_tokens, Anthropic
	// cache_read_input_tokens), billed at a fraction; part of PromptTokens.
	CachedPromptTokens int `json:"cached_prompt_tokens,omitempty"`
	// CacheWriteTokens are the prompt tokens the provider wrote to its
	// cache on this call (Anthropic cache_creation_input_tokens), billed
	// above the base rate; part of PromptTokens.
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
}

// Add returns u + v.
func (u Usage) Add(v Usage) Usage {
	return Usage{PromptTokens: u.PromptTokens + v.PromptTokens, CompletionTokens: u.CompletionTokens + v.CompletionTokens,
		CachedPromptTokens: u.CachedPromptTokens + v.CachedPromptTokens, CacheWriteTokens: u.CacheWriteTokens + v.CacheWriteTokens}
}
