package langchain

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/tmc/langchaingo/httputil"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/ollama"
	"github.com/tmc/langchaingo/llms/openai"
)

// Defaults of the provider constructors.
const (
	// DefaultOpenAIBaseURL is used when OpenAIConfig.BaseURL is empty.
	DefaultOpenAIBaseURL = "https://api.openai.com/v1"
	// DefaultOllamaURL is used when OllamaConfig.URL is empty.
	DefaultOllamaURL = "http://127.0.0.1:11434"
	// PlaceholderAPIKey is sent to an explicit BaseURL when no key is
	// configured: local OpenAI-compatible servers ignore the key, but
	// langchaingo refuses an empty one.
	PlaceholderAPIKey = "not-needed"
)

// Errors of the provider constructors, wrapped with the provider and the
// configuration field to set.
var (
	// ErrNoModel: the configuration names no model.
	ErrNoModel = errors.New("no model name")
	// ErrNoAPIKey: the default OpenAI endpoint needs a key and none is set.
	ErrNoAPIKey = errors.New("no API key")
)

func defaultTransport() http.RoundTripper { return httputil.DefaultTransport }

// OpenAIConfig configures [NewOpenAI].
type OpenAIConfig struct {
	// BaseURL of the API, up to and excluding "/chat/completions".
	// Empty: DefaultOpenAIBaseURL. Set it for any OpenAI-compatible server
	// (vLLM, llama.cpp, LM Studio, Ollama's /v1, OpenRouter, …).
	BaseURL string
	// Model name, required ("gpt-4o-mini", "qwen2.5:7b", …).
	Model string
	// APIKey is sent as a bearer token. Required for the default BaseURL;
	// with an explicit BaseURL an empty key sends PlaceholderAPIKey.
	APIKey string
	// Organization is sent as OpenAI-Organization when not empty.
	Organization string
	// LegacyMaxTokens sends the cap as max_tokens instead of
	// max_completion_tokens, for servers that only know the older field.
	LegacyMaxTokens bool
	// HTTPClient is the client to copy for the calls (proxies, TLS
	// settings); nil for the default. Its transport is wrapped in a
	// [Transport]; the caller's client is not modified.
	HTTPClient *http.Client
}

// OpenAIConfigFromEnv returns cfg with its empty fields filled from the
// environment the way OpenAI's tools do: APIKey from OPENAI_API_KEY, BaseURL
// from OPENAI_BASE_URL (or OPENAI_API_BASE), Model from OPENAI_MODEL,
// Organization from OPENAI_ORGANIZATION. Fields already set (from flags)
// win. getenv is os.Getenv when nil. [NewOpenAI] itself never reads the
// environment.
func OpenAIConfigFromEnv(cfg OpenAIConfig, getenv func(string) string) OpenAIConfig {
	if getenv == nil {
		getenv = os.Getenv
	}
	fill := func(field *string, keys ...string) {
		for _, k := range keys {
			if *field != "" {
				return
			}
			*field = strings.TrimSpace(getenv(k))
		}
	}
	fill(&cfg.APIKey, "OPENAI_API_KEY")
	fill(&cfg.BaseURL, "OPENAI_BASE_URL", "OPENAI_API_BASE")
	fill(&cfg.Model, "OPENAI_MODEL")
	fill(&cfg.Organization, "OPENAI_ORGANIZATION")
	return cfg
}

// NewOpenAI returns a Role talking to an OpenAI-compatible chat completions
// API through langchaingo's openai client, with a [Transport] installed for
// precise error classification (status, Retry-After, refused connections).
// opts are applied after the configuration's (WithTimeout,
// WithTemperature, …).
func NewOpenAI(cfg OpenAIConfig, opts ...Option) (*Role, error) {
	if cfg.Model == "" {
		return nil, fmt.Errorf("openai: %w: set OpenAIConfig.Model (OpenAIConfigFromEnv takes it from OPENAI_MODEL)", ErrNoModel)
	}
	base := cfg.BaseURL
	if base == "" {
		base = DefaultOpenAIBaseURL
	}
	base = strings.TrimRight(base, "/")
	if err := checkURL(base); err != nil {
		return nil, fmt.Errorf("openai: base URL: %w", err)
	}
	key := cfg.APIKey
	if key == "" {
		if cfg.BaseURL == "" {
			return nil, fmt.Errorf("openai: %w: set OpenAIConfig.APIKey (OpenAIConfigFromEnv takes it from OPENAI_API_KEY), or OpenAIConfig.BaseURL for a local OpenAI-compatible server that needs none", ErrNoAPIKey)
		}
		key = PlaceholderAPIKey
	}
	model, err := openai.New(
		openai.WithToken(key),
		openai.WithBaseURL(base),
		openai.WithModel(cfg.Model),
		openai.WithOrganization(cfg.Organization),
		openai.WithHTTPClient(recordingClient(cfg.HTTPClient)),
	)
	if err != nil {
		return nil, fmt.Errorf("openai: creating the client for %s: %w", base, err)
	}
	s := settings{provider: "openai", model: cfg.Model, baseURL: base, keyHint: "OPENAI_API_KEY"}
	if cfg.LegacyMaxTokens {
		s.callOptions = append(s.callOptions, openai.WithLegacyMaxTokensField())
	}
	for _, o := range opts {
		o(&s)
	}
	return newRole(model, s), nil
}

// OllamaConfig configures [NewOllama].
type OllamaConfig struct {
	// URL of the Ollama server; empty: DefaultOllamaURL.
	URL string
	// Model name, required ("llama3.1", "qwen2.5:7b", …).
	Model string
	// HTTPClient is the client to copy for the calls; nil for the default.
	// Its transport is wrapped in a [Transport].
	HTTPClient *http.Client
}

// OllamaConfigFromEnv returns cfg with an empty URL filled from OLLAMA_HOST
// ("host:port" or a URL, as the ollama CLI accepts; "http://" is added when
// there is no scheme). getenv is os.Getenv when nil.
func OllamaConfigFromEnv(cfg OllamaConfig, getenv func(string) string) OllamaConfig {
	if getenv == nil {
		getenv = os.Getenv
	}
	if cfg.URL == "" {
		if h := strings.TrimSpace(getenv("OLLAMA_HOST")); h != "" {
			if !strings.Contains(h, "://") {
				h = "http://" + h
			}
			cfg.URL = h
		}
	}
	return cfg
}

// NewOllama returns a Role talking to an Ollama server's /api/chat through
// langchaingo's ollama client, with a [Transport] installed. The URL is
// validated here, because langchaingo's ollama.WithServerURL calls log.Fatal
// on a URL it cannot parse.
func NewOllama(cfg OllamaConfig, opts ...Option) (*Role, error) {
	if cfg.Model == "" {
		return nil, fmt.Errorf("ollama: %w: set OllamaConfig.Model (`ollama list` shows the installed ones)", ErrNoModel)
	}
	u := cfg.URL
	if u == "" {
		u = DefaultOllamaURL
	}
	u = strings.TrimRight(u, "/")
	if err := checkURL(u); err != nil {
		return nil, fmt.Errorf("ollama: server URL: %w", err)
	}
	model, err := ollama.New(
		ollama.WithServerURL(u),
		ollama.WithModel(cfg.Model),
		ollama.WithHTTPClient(recordingClient(cfg.HTTPClient)),
	)
	if err != nil {
		return nil, fmt.Errorf("ollama: creating the client for %s: %w", u, err)
	}
	s := settings{provider: "ollama", model: cfg.Model, baseURL: u}
	for _, o := range opts {
		o(&s)
	}
	return newRole(model, s), nil
}

// recordingClient returns a copy of hc (or a new client) whose transport is
// wrapped in a Transport.
func recordingClient(hc *http.Client) *http.Client {
	c := &http.Client{}
	if hc != nil {
		*c = *hc
	}
	c.Transport = NewTransport(c.Transport)
	return c
}

// checkURL accepts absolute http and https URLs with a host and without
// credentials, query or fragment (the client libraries append paths to it
// as text).
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q is not a URL: %w; use e.g. http://localhost:8080/v1", raw, err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%q: scheme must be http or https, e.g. http://localhost:8080/v1", raw)
	case u.Host == "" || u.Hostname() == "":
		return fmt.Errorf("%q has no host; use e.g. http://localhost:8080/v1", raw)
	case u.User != nil:
		return fmt.Errorf("%q contains credentials; pass the key as an API key instead", redactURL(u))
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return fmt.Errorf("%q must not have a query or fragment", redactURL(u))
	}
	return nil
}

// Compile-time check that langchaingo's models are Generators.
var (
	_ Generator = (*openai.LLM)(nil)
	_ Generator = (*ollama.LLM)(nil)
	_ Generator = llms.Model(nil)
)
