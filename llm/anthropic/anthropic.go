// Package anthropic is a refine Role for Anthropic's Messages API, through
// the official Go SDK (github.com/anthropics/anthropic-sdk-go).
//
// It places prompt-cache breakpoints where refine's prompts are stable
// (llm.Request.Stable): the system messages become system blocks with
// cache_control on the first and the last stable one, so a session pays
// the whole spec and every binding decision once per role and then reads
// them from the cache (about a tenth of the price). Token usage reports
// cache reads and writes (llm.Usage.CachedPromptTokens and
// CacheWriteTokens) on top of the uncached input.
//
// Errors are classified the way refine's other adapters do: the caller's
// own cancellation comes back wrapped and is not transient; 408, 429, 529
// (overloaded) and other 5xx statuses, timeouts, dropped or refused
// connections ([ErrUnreachable]) and answers whose body is not a Messages
// API response, is cut short or stalls past the idle timeout
// ([ErrResponseBody]) are *llm.TransientError, with the server's
// Retry-After hint; everything else (bad key, unknown model, rejected request) is
// permanent. The SDK's own retries are off: the engine retries with its
// backoff and records each retry.
package anthropic

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/validate"
)

// Defaults of [New].
const (
	// DefaultBaseURL is used when Config.BaseURL is empty.
	DefaultBaseURL = "https://api.anthropic.com"
	// DefaultMaxTokens caps a completion when the request sets no cap: the
	// Messages API requires one.
	DefaultMaxTokens = 8192
	// DefaultIdleTimeout bounds how long a response body may send nothing
	// once its headers arrived (see [WithIdleTimeout]).
	DefaultIdleTimeout = 30 * time.Second
)

// Config configures [New].
type Config struct {
	// BaseURL of the API, up to and excluding "/v1/messages". Empty:
	// DefaultBaseURL.
	BaseURL string
	// Model name, required ("claude-sonnet-4-5", …).
	Model string
	// APIKey is sent as x-api-key. Required for the default BaseURL.
	APIKey string
	// MaxTokens caps completions when the request sets no cap; 0:
	// DefaultMaxTokens.
	MaxTokens int
	// HTTPClient is the client for the calls (proxies, TLS settings); nil
	// for http.DefaultClient's settings.
	HTTPClient *http.Client
}

// ConfigFromEnv returns cfg with its empty fields filled from the
// environment as Anthropic's tools read it: APIKey from ANTHROPIC_API_KEY,
// BaseURL from ANTHROPIC_BASE_URL, Model from ANTHROPIC_MODEL. Fields
// already set win. getenv is os.Getenv when nil. [New] itself never reads
// the environment (nor the SDK's profile files).
func ConfigFromEnv(cfg Config, getenv func(string) string) Config {
	if getenv == nil {
		getenv = os.Getenv
	}
	fill := func(field *string, key string) {
		if *field == "" {
			*field = strings.TrimSpace(getenv(key))
		}
	}
	fill(&cfg.APIKey, "ANTHROPIC_API_KEY")
	fill(&cfg.BaseURL, "ANTHROPIC_BASE_URL")
	fill(&cfg.Model, "ANTHROPIC_MODEL")
	return cfg
}

// Option configures a Role.
type Option func(*Role)

// WithTimeout bounds each call to d. A call that exceeds it while the
// caller's context is still alive fails with a transient error matching
// [ErrTimeout]. d <= 0: no per-call timeout (the default).
func WithTimeout(d time.Duration) Option {
	return func(r *Role) { r.timeout = d }
}

// WithIdleTimeout bounds how long the body of an answer may send nothing
// once its headers arrived; d <= 0 keeps DefaultIdleTimeout. The API
// sends a whole answer at once, so a body that stops short of its
// Content-Length stalled (a proxy or the connection broke): it fails with
// a transient error matching [ErrResponseBody] after d, not after the
// whole per-call timeout.
func WithIdleTimeout(d time.Duration) Option {
	return func(r *Role) {
		if d > 0 {
			r.idle = d
		}
	}
}

// WithTemperature sets the sampling temperature of every call; without
// it the API's default applies.
func WithTemperature(t float64) Option {
	return func(r *Role) { r.temperature = &t }
}

// WithMaxResponseBytes sets the size limit of an answer, n bytes (set it
// to the session's Config.MaxOutputBytes; n < 1 keeps the default, 1 MiB):
// a longer answer comes back cut at n+1 bytes, which the engine fails as
// WRONG_FORMAT naming its limit. The response body is read no further
// than 4n bytes plus 64 KiB; a larger one stops there and its first n+1
// bytes come back as the answer, failing the same way.
func WithMaxResponseBytes(n int) Option {
	return func(r *Role) {
		if n > 0 {
			r.maxBytes = n
		}
	}
}

// Role is an llm.Role backed by the Messages API. It is safe for
// concurrent use.
type Role struct {
	client      sdk.Client
	hc          *http.Client
	model       string
	baseURL     string
	maxTokens   int
	maxBytes    int
	timeout     time.Duration
	idle        time.Duration
	temperature *float64
}

// New returns a Role for cfg. It needs a model name, and an API key unless
// BaseURL names another endpoint (a proxy or a test server).
func New(cfg Config, opts ...Option) (*Role, error) {
	if cfg.Model == "" {
		return nil, errors.New("anthropic: no model name: set --model, --engineer anthropic:MODEL or ANTHROPIC_MODEL")
	}
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	if err := checkURL(base); err != nil {
		return nil, fmt.Errorf("anthropic: base URL: %w", err)
	}
	if cfg.APIKey == "" && cfg.BaseURL == "" {
		return nil, errors.New("anthropic: no API key: set ANTHROPIC_API_KEY, or set a base URL for a proxy that needs none")
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	r := &Role{hc: hc, model: cfg.Model, baseURL: base, maxTokens: cfg.MaxTokens, maxBytes: validate.DefaultMaxOutputBytes, idle: DefaultIdleTimeout}
	if r.maxTokens <= 0 {
		r.maxTokens = DefaultMaxTokens
	}
	for _, o := range opts {
		o(r)
	}
	copts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(), // no ANTHROPIC_* variables or profile files behind the caller's back
		option.WithBaseURL(base + "/"),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0), // the engine retries, with its backoff, and records each retry
		option.WithoutOpenTelemetry(),
		option.WithOpenTelemetryPropagation(false),
	}
	if cfg.APIKey != "" {
		copts = append(copts, option.WithAPIKey(cfg.APIKey))
	}
	r.client = sdk.NewClient(copts...)
	return r, nil
}

// Model returns the model name the Role asks for.
func (r *Role) Model() string { return r.model }

// Respond sends req to the Messages API: system messages as system blocks,
// the others as turns, with cache breakpoints after the first and the last
// of the req.Stable leading messages. It returns the text of the answer,
// its usage (PromptTokens counts uncached, cache-read and cache-written
// input tokens), the model that answered and the stop reason ("stop",
// "length", or the API's own value).
func (r *Role) Respond(ctx context.Context, req llm.Request) (llm.Response, error) {
	params, err := r.params(req)
	if err != nil {
		return llm.Response{}, fmt.Errorf("anthropic: %s round %d attempt %d: %w", req.Role, req.Round, req.Attempt, err)
	}
	if err := ctx.Err(); err != nil {
		return llm.Response{}, fmt.Errorf("anthropic: call abandoned: %w", err)
	}
	call := ctx
	limit := newBodyLimit(r.maxBytes, r.idle)
	callOpts := []option.RequestOption{option.WithHTTPClient(limit.client(r.hc))}
	if r.timeout > 0 {
		var cancel context.CancelFunc
		call, cancel = context.WithTimeout(ctx, r.timeout)
		defer cancel()
		// An explicit timeout also lifts the SDK's refusal of large
		// non-streaming max_tokens (its estimate of 10 minutes).
		callOpts = append(callOpts, option.WithRequestTimeout(r.timeout))
	}
	msg, err := r.client.Messages.New(call, params, callOpts...)
	if tooLarge, head := limit.exceeded(); tooLarge && ctx.Err() == nil {
		// Not parsed, so not an answer: its first bytes stand for it, above
		// the limit, so the engine fails the attempt as WRONG_FORMAT.
		return llm.Response{Content: string(head), Model: r.model, FinishReason: "length"}, nil
	}
	if err != nil {
		return llm.Response{}, r.classify(ctx, call, err, limit)
	}
	var text strings.Builder
	for _, b := range msg.Content {
		if b.Type == "text" {
			text.WriteString(b.Text)
		}
	}
	content := text.String()
	if len(content) > r.maxBytes+1 {
		content = content[:r.maxBytes+1] // still above the limit, not kept in full
	}
	model := string(msg.Model)
	if model == "" {
		model = r.model
	}
	u := msg.Usage
	return llm.Response{
		Content: content,
		Usage: llm.Usage{
			PromptTokens:       int(u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens),
			CompletionTokens:   int(u.OutputTokens),
			CachedPromptTokens: int(u.CacheReadInputTokens),
			CacheWriteTokens:   int(u.CacheCreationInputTokens),
		},
		Model:        model,
		FinishReason: finishReason(msg.StopReason),
	}, nil
}

// params maps a refine request to the Messages API's.
func (r *Role) params(req llm.Request) (sdk.MessageNewParams, error) {
	if len(req.Messages) == 0 {
		return sdk.MessageNewParams{}, errors.New("request has no messages")
	}
	p := sdk.MessageNewParams{Model: sdk.Model(r.model), MaxTokens: int64(r.maxTokens)}
	if req.MaxTokens > 0 {
		p.MaxTokens = int64(req.MaxTokens)
	}
	if r.temperature != nil {
		p.Temperature = sdk.Float(*r.temperature)
	}
	breaks := map[int]bool{}
	if req.Stable > 0 {
		breaks[0] = true
		breaks[min(req.Stable, len(req.Messages))-1] = true
	}
	for i, m := range req.Messages {
		block := sdk.TextBlockParam{Text: m.Content}
		if breaks[i] {
			block.CacheControl = sdk.NewCacheControlEphemeralParam()
		}
		switch m.Role {
		case "system":
			if len(p.Messages) > 0 {
				return p, fmt.Errorf("message %d is a system message after a turn; put system messages first", i+1)
			}
			p.System = append(p.System, block)
		case "user", "assistant":
			role := sdk.MessageParamRoleUser
			if m.Role == "assistant" {
				role = sdk.MessageParamRoleAssistant
			}
			if n := len(p.Messages); n > 0 && p.Messages[n-1].Role == role {
				// Consecutive turns of one role become blocks of one turn.
				p.Messages[n-1].Content = append(p.Messages[n-1].Content, sdk.ContentBlockParamUnion{OfText: &block})
				continue
			}
			p.Messages = append(p.Messages, sdk.MessageParam{Role: role, Content: []sdk.ContentBlockParamUnion{{OfText: &block}}})
		default:
			return p, fmt.Errorf("message %d has role %q; use \"system\", \"user\" or \"assistant\"", i+1, m.Role)
		}
	}
	if len(p.Messages) == 0 {
		return p, errors.New("request has no user message")
	}
	return p, nil
}

// finishReason maps the API's stop reasons to the names refine's other
// backends use, where they mean the same.
func finishReason(s sdk.StopReason) string {
	switch s {
	case sdk.StopReasonEndTurn, sdk.StopReasonStopSequence:
		return "stop"
	case sdk.StopReasonMaxTokens:
		return "length"
	}
	return string(s)
}

// checkURL accepts absolute http and https URLs with a host and without
// credentials, query or fragment.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q is not a URL: %w; use e.g. https://api.anthropic.com", raw, err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%q: scheme must be http or https, e.g. https://api.anthropic.com", raw)
	case u.Hostname() == "":
		return fmt.Errorf("%q has no host; use e.g. https://api.anthropic.com", raw)
	case u.User != nil:
		return errors.New("the base URL contains credentials; pass the key as ANTHROPIC_API_KEY instead")
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return fmt.Errorf("%q must not have a query or fragment", raw)
	}
	return nil
}
