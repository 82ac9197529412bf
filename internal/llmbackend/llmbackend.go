// Package llmbackend builds the Engineer and Reviewer roles the command-line
// tools' --llm flags name (openai, ollama or replay), so refine and
// refine-temporal accept the same backends.
package llmbackend

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/llm/langchain"
	"github.com/refine-spec/refine/llm/replay"
)

// Choice is what the flags chose.
type Choice struct {
	// Kind is openai, ollama or replay.
	Kind string
	// ReplayDir holds engineer-NNN.md / reviewer-NNN.md (replay).
	ReplayDir string
	// Model is both roles' model unless EngineerModel/ReviewerModel say
	// otherwise.
	Model, EngineerModel, ReviewerModel string
	// BaseURL is the API base URL (openai) or server URL (ollama).
	BaseURL string
	// Timeout limits one role call.
	Timeout time.Duration
}

// Roles builds the two roles; getenv supplies the API key and defaults.
func (c Choice) Roles(getenv func(string) string) (engineer, reviewer refine.Role, err error) {
	model := func(specific string) string {
		if specific != "" {
			return specific
		}
		return c.Model
	}
	switch c.Kind {
	case "replay":
		if c.ReplayDir == "" {
			return nil, nil, errors.New("--llm replay needs --replay DIR")
		}
		if fi, err := os.Stat(c.ReplayDir); err != nil || !fi.IsDir() {
			return nil, nil, fmt.Errorf("--replay %s: not a folder", c.ReplayDir)
		}
		r := replay.Dir(c.ReplayDir)
		return r, r, nil
	case "openai":
		return both(model(c.EngineerModel), model(c.ReviewerModel), func(m string) (refine.Role, error) {
			cfg := langchain.OpenAIConfigFromEnv(langchain.OpenAIConfig{BaseURL: c.BaseURL, Model: m}, getenv)
			r, err := langchain.NewOpenAI(cfg, langchain.WithTimeout(c.Timeout))
			return r, flagError("openai", err, "OPENAI_MODEL", "OPENAI_API_KEY")
		})
	case "ollama":
		return both(model(c.EngineerModel), model(c.ReviewerModel), func(m string) (refine.Role, error) {
			cfg := langchain.OllamaConfigFromEnv(langchain.OllamaConfig{URL: c.BaseURL, Model: m}, getenv)
			r, err := langchain.NewOllama(cfg, langchain.WithTimeout(c.Timeout))
			return r, flagError("ollama", err, "", "")
		})
	}
	return nil, nil, fmt.Errorf("--llm %q: want openai, ollama or replay", c.Kind)
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
		return fmt.Errorf("%s: %w: set --model (or --engineer-model and --reviewer-model)%s", provider, langchain.ErrNoModel, also)
	case errors.Is(err, langchain.ErrNoAPIKey):
		return fmt.Errorf("%s: %w: set %s, or --base-url for a local OpenAI-compatible server that needs none", provider, langchain.ErrNoAPIKey, keyEnv)
	}
	return err
}

func both(engModel, revModel string, mk func(model string) (refine.Role, error)) (refine.Role, refine.Role, error) {
	eng, err := mk(engModel)
	if err != nil {
		return nil, nil, err
	}
	rev, err := mk(revModel)
	return eng, rev, err
}
