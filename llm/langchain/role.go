package langchain

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/validate"
)

// Generator is the one method of a langchaingo [llms.Model] a Role needs.
// Every langchaingo chat model satisfies it; tests can use [GeneratorFunc].
type Generator interface {
	GenerateContent(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error)
}

// GeneratorFunc adapts a function to a Generator.
type GeneratorFunc func(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error)

// GenerateContent calls f.
func (f GeneratorFunc) GenerateContent(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	return f(ctx, messages, options...)
}

// Role is an llm.Role backed by a langchaingo model. It is safe for
// concurrent use if the model is (langchaingo's HTTP clients are).
// Create it with [New], [NewOpenAI] or [NewOllama].
type Role struct {
	model    Generator
	maxBytes int // answers are cut at maxBytes+1 bytes
	classify classifier
	static   []llms.CallOption // options of every call
}

// Option configures a Role.
type Option func(*settings)

type settings struct {
	provider    string
	model       string
	temperature *float64
	timeout     time.Duration
	maxBytes    int
	callOptions []llms.CallOption
	keyHint     string
	baseURL     string
}

// WithProvider sets the label that prefixes every error ("openai: status
// 429: …"). The default is "llm"; NewOpenAI and NewOllama set "openai" and
// "ollama".
func WithProvider(name string) Option {
	return func(s *settings) { s.provider = name }
}

// WithModel sets the model name sent with every call (llms.WithModel) and
// named in error messages. Without it the model's own default applies.
func WithModel(name string) Option {
	return func(s *settings) { s.model = name }
}

// WithTemperature sets the sampling temperature of every call. Note that
// without it langchaingo's OpenAI and Ollama clients send 0 (greedy
// decoding), not the server's default.
func WithTemperature(t float64) Option {
	return func(s *settings) { s.temperature = &t }
}

// WithTimeout bounds each call to d. A call that exceeds it while the
// caller's context is still alive fails with a transient error matching
// [ErrTimeout], so the engine retries it; the caller's own cancellation or
// deadline is never transient. d <= 0 means no per-call timeout (the
// default). The model must honour its context, as langchaingo's clients do.
func WithTimeout(d time.Duration) Option {
	return func(s *settings) { s.timeout = d }
}

// WithMaxResponseBytes sets the size limit of an answer, n bytes: set it
// to the session's Config.MaxOutputBytes (the default is that field's
// default, 1 MiB; n < 1 keeps it). An answer above it comes back cut at
// n+1 bytes, which the engine fails as WRONG_FORMAT naming its limit.
// With a [Transport] installed (NewOpenAI and NewOllama install one) the
// response body is also read no further than 4n bytes plus 64 KiB, room
// for an answer of n bytes however JSON escapes it: a larger body stops
// there and Respond returns its first n+1 bytes as the answer, so the
// attempt fails the same way and the journal shows what the server sent.
func WithMaxResponseBytes(n int) Option {
	return func(s *settings) {
		if n > 0 {
			s.maxBytes = n
		}
	}
}

// WithCallOptions adds langchaingo call options to every call, after the
// ones the Role sets itself (model, temperature, max tokens).
func WithCallOptions(opts ...llms.CallOption) Option {
	return func(s *settings) { s.callOptions = append(s.callOptions, opts...) }
}

// New returns a Role that sends every request to model. It panics if model
// is nil.
//
// Errors are classified as described in the package documentation; install
// a [Transport] in the model's HTTP client for the precise classification
// (NewOpenAI and NewOllama do).
func New(model Generator, opts ...Option) *Role {
	if model == nil {
		panic("langchain.New: nil Generator")
	}
	s := settings{provider: "llm", maxBytes: validate.DefaultMaxOutputBytes}
	for _, o := range opts {
		o(&s)
	}
	return newRole(model, s)
}

func newRole(model Generator, s settings) *Role {
	var static []llms.CallOption
	if s.model != "" {
		static = append(static, llms.WithModel(s.model))
	}
	if s.temperature != nil {
		static = append(static, llms.WithTemperature(*s.temperature))
	}
	static = append(static, s.callOptions...)
	if s.maxBytes < 1 {
		s.maxBytes = validate.DefaultMaxOutputBytes
	}
	return &Role{
		model:    model,
		maxBytes: s.maxBytes,
		classify: classifier{
			provider: s.provider,
			model:    s.model,
			keyHint:  s.keyHint,
			baseURL:  s.baseURL,
			timeout:  s.timeout,
		},
		static: static,
	}
}

// Respond sends req.Messages to the model and returns the first choice's
// content, the token usage the backend reported (0 when it reports none),
// the requested model name (see WithModel) and the choice's stop reason.
// req.MaxTokens caps the completion when > 0.
//
// Errors: the caller's cancellation or deadline comes back wrapped (matching
// context.Canceled or context.DeadlineExceeded) and is not transient; rate
// limits, server errors, timeouts and dropped or refused connections are
// *llm.TransientError, with the server's Retry-After hint when known;
// everything else (bad credentials, rejected requests, malformed answers,
// no choices) is permanent.
func (r *Role) Respond(ctx context.Context, req llm.Request) (llm.Response, error) {
	msgs, err := messages(req.Messages)
	if err != nil {
		return llm.Response{}, fmt.Errorf("%s: %s round %d attempt %d: %w", r.classify.provider, req.Role, req.Round, req.Attempt, err)
	}
	if err := ctx.Err(); err != nil {
		return llm.Response{}, fmt.Errorf("%s: call abandoned: %w", r.classify.provider, err)
	}

	opts := make([]llms.CallOption, len(r.static), len(r.static)+1)
	copy(opts, r.static)
	if req.MaxTokens > 0 {
		opts = append(opts, llms.WithMaxTokens(req.MaxTokens))
	}

	call := ctx
	if r.classify.timeout > 0 {
		var cancel context.CancelFunc
		call, cancel = context.WithTimeout(ctx, r.classify.timeout)
		defer cancel()
	}
	ex := &exchange{bodyLimit: 4*int64(r.maxBytes) + 64<<10, headSize: r.maxBytes + 1}
	resp, err := r.model.GenerateContent(withExchange(call, ex), msgs, opts...)
	snap := ex.snapshot()
	if snap.tooLarge && ctx.Err() == nil {
		// Not parsed, so not an answer: its first bytes stand for it, above
		// the limit, so the engine fails the attempt as WRONG_FORMAT.
		return llm.Response{Content: string(snap.head), Model: r.classify.model, FinishReason: "length"}, nil
	}
	if err != nil || snap.status >= 400 || snap.err != nil || snap.bodyErr != nil {
		// A recorded failure counts even when the library returned none:
		// langchaingo's Ollama client ignores a 5xx with an empty body.
		if cerr := r.classify.classify(ctx, call, snap, err); cerr != nil {
			return llm.Response{}, cerr
		}
	}
	if resp == nil || len(resp.Choices) == 0 || resp.Choices[0] == nil {
		return llm.Response{}, r.classify.withStatus(snap.status, ErrNoChoices,
			fmt.Errorf("the backend answered %s round %d attempt %d without a completion; check the model name", req.Role, req.Round, req.Attempt))
	}
	choice := resp.Choices[0]
	if len(choice.Content) > r.maxBytes+1 {
		choice.Content = choice.Content[:r.maxBytes+1] // still above the limit, not kept in full
	}
	finish := choice.StopReason
	if finish == "" {
		// langchaingo's Ollama client drops the reason; the body has it.
		finish = doneReason(snap.head)
	}
	// Model is the requested model: langchaingo does not report the one
	// that answered.
	return llm.Response{Content: choice.Content, Usage: usage(choice.GenerationInfo), Model: r.classify.model, FinishReason: finish}, nil
}

// doneReason reads Ollama's "done_reason" ("stop", "length") from the last
// object of a chat response body (one JSON object, or a stream of them, one
// per line), "" when it has none.
func doneReason(body []byte) string {
	const field = `"done_reason"`
	i := bytes.LastIndex(body, []byte(field))
	if i < 0 {
		return ""
	}
	rest := bytes.TrimLeft(body[i+len(field):], " \t")
	if len(rest) == 0 || rest[0] != ':' {
		return ""
	}
	rest = bytes.TrimLeft(rest[1:], " \t")
	var v string
	dec := json.NewDecoder(bytes.NewReader(rest))
	if err := dec.Decode(&v); err != nil {
		return ""
	}
	return v
}

// messages maps refine messages to langchaingo's.
func messages(in []llm.Message) ([]llms.MessageContent, error) {
	if len(in) == 0 {
		return nil, fmt.Errorf("request has no messages")
	}
	out := make([]llms.MessageContent, len(in))
	for i, m := range in {
		var t llms.ChatMessageType
		switch m.Role {
		case "system":
			t = llms.ChatMessageTypeSystem
		case "user":
			t = llms.ChatMessageTypeHuman
		case "assistant":
			t = llms.ChatMessageTypeAI
		default:
			return nil, fmt.Errorf("message %d has role %q; use \"system\" or \"user\"", i+1, m.Role)
		}
		out[i] = llms.TextParts(t, m.Content)
	}
	return out, nil
}

// Keys of token counts in ContentChoice.GenerationInfo: langchaingo's OpenAI,
// Ollama and Google clients use the first, its Anthropic client the second.
var (
	promptKeys     = [...]string{"PromptTokens", "InputTokens"}
	completionKeys = [...]string{"CompletionTokens", "OutputTokens"}
	// cachedKeys: OpenAI's prompt_tokens_details.cached_tokens, as
	// langchaingo's OpenAI client reports it.
	cachedKeys = [...]string{"PromptCachedTokens"}
)

// usage extracts token counts from a choice's GenerationInfo, cached
// prompt tokens included (OpenAI's automatic prompt caching). Counts come
// untyped (int for OpenAI and Ollama, int32 for Google, float64 after a
// JSON round trip); a missing or unusable count is 0.
func usage(info map[string]any) llm.Usage {
	return llm.Usage{PromptTokens: count(info, promptKeys[:]), CompletionTokens: count(info, completionKeys[:]),
		CachedPromptTokens: count(info, cachedKeys[:])}
}

func count(info map[string]any, keys []string) int {
	for _, k := range keys {
		if v, ok := info[k]; ok {
			if n, ok := toInt(v); ok {
				return n
			}
		}
	}
	return 0
}

func toInt(v any) (int, bool) {
	var n int64
	switch x := v.(type) {
	case int:
		n = int64(x)
	case int32:
		n = int64(x)
	case int64:
		n = x
	case uint32:
		n = int64(x)
	case uint64:
		if x > 1<<62 {
			return 0, false
		}
		n = int64(x)
	case float64:
		if x != x || x < 0 || x > 1<<52 { // NaN, negative, beyond exact
			return 0, false
		}
		n = int64(x)
	case float32:
		return toInt(float64(x))
	default:
		return 0, false
	}
	if n < 0 {
		return 0, false
	}
	return int(n), true
}
