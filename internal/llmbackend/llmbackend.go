// Package llmbackend builds the Engineer and Reviewer roles the command-line
// tools' flags name — --llm for both roles (openai, anthropic, ollama or
// replay), or --engineer and --reviewer PROVIDER:MODEL for one role each —
// so refine and refine-temporal accept the same backends.
package llmbackend

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/llm/anthropic"
	"github.com/refine-spec/refine/llm/langchain"
	"github.com/refine-spec/refine/llm/replay"
)

// providerList names the backends a role can name, for messages.
const providerList = "openai, anthropic, ollama or replay"

// Choice is what the flags chose.
type Choice struct {
	// Kind is both roles' provider: openai, anthropic, ollama or replay
	// (--llm). A role's own Engineer/Reviewer choice wins.
	Kind string
	// ReplayDir holds engineer-NNN.md / reviewer-NNN.md (replay).
	ReplayDir string
	// Model is both roles' model unless EngineerModel/ReviewerModel say
	// otherwise.
	Model, EngineerModel, ReviewerModel string
	// BaseURL is the API base URL (openai, anthropic) or server URL
	// (ollama) of the roles whose provider is Kind (of both roles when
	// Kind is empty and they share a provider).
	BaseURL string
	// MaxOutputBytes is the session's Config.MaxOutputBytes: each provider
	// Role reads an answer no further than it (0: the providers' default,
	// which is that field's default).
	MaxOutputBytes int
	// Engineer and Reviewer are each role's own provider, model and
	// endpoint (--engineer PROVIDER:MODEL, --engineer-base-url); empty
	// fields fall back to the shared ones.
	Engineer, Reviewer refine.RoleBackend
	// Timeout limits one role call.
	Timeout time.Duration
}

// ParseRole parses PROVIDER:MODEL ("anthropic:claude-sonnet-4-5",
// "ollama:qwen3:8b": the model is everything after the first colon). A
// bare PROVIDER leaves the model to --model or the environment.
func ParseRole(s string) (refine.RoleBackend, error) {
	kind, model, _ := strings.Cut(strings.TrimSpace(s), ":")
	if !isProvider(kind) {
		return refine.RoleBackend{}, fmt.Errorf("%q: want PROVIDER:MODEL with PROVIDER %s", s, providerList)
	}
	return refine.RoleBackend{Kind: kind, Model: model}, nil
}

func isProvider(kind string) bool {
	switch kind {
	case "openai", "anthropic", "ollama", "replay":
		return true
	}
	return false
}

// Resolve returns the provider, model and endpoint role gets.
func (c Choice) Resolve(role refine.RoleName) refine.RoleBackend {
	own, model := c.Engineer, c.EngineerModel
	if role == refine.Reviewer {
		own, model = c.Reviewer, c.ReviewerModel
	}
	rb := refine.RoleBackend{Kind: own.Kind, Model: own.Model, BaseURL: own.BaseURL}
	if rb.Kind == "" {
		rb.Kind = c.Kind
	}
	if rb.Model == "" {
		rb.Model = model
	}
	if rb.Model == "" {
		rb.Model = c.Model
	}
	if rb.BaseURL == "" && c.BaseURL != "" {
		other := c.Engineer.Kind
		if role == refine.Engineer {
			other = c.Reviewer.Kind
		}
		if rb.Kind == c.Kind || (c.Kind == "" && (other == "" || other == rb.Kind)) {
			rb.BaseURL = c.BaseURL
		}
	}
	return rb
}

// Roles builds the two roles; getenv supplies the API keys and defaults
// (OPENAI_*, ANTHROPIC_*, OLLAMA_HOST), so each provider has its own.
func (c Choice) Roles(getenv func(string) string) (engineer, reviewer refine.Role, err error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	eng, rev := c.Resolve(refine.Engineer), c.Resolve(refine.Reviewer)
	for _, rb := range []struct {
		name string
		kind string
	}{{"engineer", eng.Kind}, {"reviewer", rev.Kind}} {
		if rb.kind == "" {
			return nil, nil, fmt.Errorf("%s: no backend: set --llm, or --%s PROVIDER:MODEL", rb.name, rb.name)
		}
		if !isProvider(rb.kind) {
			return nil, nil, fmt.Errorf("--llm %q: want %s", rb.kind, providerList)
		}
	}
	if eng.Kind == "replay" && rev.Kind == "replay" {
		r, err := c.replay()
		return r, r, err // one folder answers both roles, by req.Role
	}
	if engineer, err = c.role(eng, getenv); err != nil {
		return nil, nil, fmt.Errorf("engineer: %w", err)
	}
	if reviewer, err = c.role(rev, getenv); err != nil {
		return nil, nil, fmt.Errorf("reviewer: %w", err)
	}
	return engineer, reviewer, nil
}

func (c Choice) replay() (refine.Role, error) {
	if c.ReplayDir == "" {
		return nil, errors.New("--llm replay needs --replay DIR")
	}
	if fi, err := os.Stat(c.ReplayDir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("--replay %s: not a folder", c.ReplayDir)
	}
	return replay.Dir(c.ReplayDir), nil
}

func (c Choice) role(rb refine.RoleBackend, getenv func(string) string) (refine.Role, error) {
	switch rb.Kind {
	case "replay":
		return c.replay()
	case "openai":
		cfg := langchain.OpenAIConfigFromEnv(langchain.OpenAIConfig{BaseURL: rb.BaseURL, Model: rb.Model}, getenv)
		r, err := langchain.NewOpenAI(cfg, langchain.WithTimeout(c.Timeout), langchain.WithMaxResponseBytes(c.MaxOutputBytes))
		return r, flagError("openai", err, "OPENAI_MODEL", "OPENAI_API_KEY")
	case "anthropic":
		cfg := anthropic.ConfigFromEnv(anthropic.Config{BaseURL: rb.BaseURL, Model: rb.Model}, getenv)
		return anthropic.New(cfg, anthropic.WithTimeout(c.Timeout), anthropic.WithMaxResponseBytes(c.MaxOutputBytes))
	case "ollama":
		cfg := langchain.OllamaConfigFromEnv(langchain.OllamaConfig{URL: rb.BaseURL, Model: rb.Model}, getenv)
		r, err := langchain.NewOllama(cfg, langchain.WithTimeout(c.Timeout), langchain.WithMaxResponseBytes(c.MaxOutputBytes))
		return r, flagError("ollama", err, "", "")
	case "":
		return nil, errors.New("no backend: set --llm, or --engineer and --reviewer PROVIDER:MODEL")
	}
	return nil, fmt.Errorf("--llm %q: want %s", rb.Kind, providerList)
}

// flagError restates the library's missing-setting errors in terms of the
// tools' flags (the library names its configuration fields); it keeps the
// sentinel. modelEnv and keyEnv are the variables that also set them.
func flagError(provider string, err error, modelEnv, keyEnv string) error {
	switch {
	case errors.Is(err, langchain.ErrNoModel):
		also := ""
		if modelEnv != "" {
			also = " or " + modelEnv
		}
		return fmt.Errorf("%s: %w: set --model (or --engineer-model and --reviewer-model, or --engineer/--reviewer PROVIDER:MODEL)%s", provider, langchain.ErrNoModel, also)
	case errors.Is(err, langchain.ErrNoAPIKey):
		return fmt.Errorf("%s: %w: set %s, or --base-url for a local OpenAI-compatible server that needs none", provider, langchain.ErrNoAPIKey, keyEnv)
	}
	return err
}
