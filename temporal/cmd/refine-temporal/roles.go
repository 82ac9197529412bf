package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/llm/langchain"
	"github.com/refine-spec/refine/llm/replay"
)

// roleFlags choose the worker's LLM backend, as `refine run` does.
type roleFlags struct {
	llm, replayDir, model, engineerModel, reviewerModel, baseURL string
	timeout                                                      time.Duration
}

func (f *roleFlags) flags(fl *flag.FlagSet) {
	fl.StringVar(&f.llm, "llm", "", "backend: openai, ollama or replay (required)")
	fl.StringVar(&f.replayDir, "replay", "", "folder of engineer-NNN.md / reviewer-NNN.md responses (--llm replay)")
	fl.StringVar(&f.model, "model", "", "model for both roles")
	fl.StringVar(&f.engineerModel, "engineer-model", "", "model for the Engineer (default --model)")
	fl.StringVar(&f.reviewerModel, "reviewer-model", "", "model for the Reviewer (default --model)")
	fl.StringVar(&f.baseURL, "base-url", "", "API base URL (openai) or server URL (ollama)")
	fl.DurationVar(&f.timeout, "timeout", 5*time.Minute, "limit for one role call")
}

func (f *roleFlags) roles(e env) (refine.Role, refine.Role, error) {
	model := func(specific string) string {
		if specific != "" {
			return specific
		}
		return f.model
	}
	switch f.llm {
	case "replay":
		if f.replayDir == "" {
			return nil, nil, errors.New("--llm replay needs --replay DIR")
		}
		if fi, err := os.Stat(f.replayDir); err != nil || !fi.IsDir() {
			return nil, nil, fmt.Errorf("--replay %s: not a folder", f.replayDir)
		}
		r := replay.Dir(f.replayDir)
		return r, r, nil
	case "openai":
		mk := func(m string) (refine.Role, error) {
			cfg := langchain.OpenAIConfigFromEnv(langchain.OpenAIConfig{BaseURL: f.baseURL, Model: m}, e.getenv)
			return langchain.NewOpenAI(cfg, langchain.WithTimeout(f.timeout))
		}
		eng, err := mk(model(f.engineerModel))
		if err != nil {
			return nil, nil, err
		}
		rev, err := mk(model(f.reviewerModel))
		return eng, rev, err
	case "ollama":
		mk := func(m string) (refine.Role, error) {
			cfg := langchain.OllamaConfigFromEnv(langchain.OllamaConfig{URL: f.baseURL, Model: m}, e.getenv)
			return langchain.NewOllama(cfg, langchain.WithTimeout(f.timeout))
		}
		eng, err := mk(model(f.engineerModel))
		if err != nil {
			return nil, nil, err
		}
		rev, err := mk(model(f.reviewerModel))
		return eng, rev, err
	case "":
		return nil, nil, errors.New("--llm is required: openai, ollama or replay")
	}
	return nil, nil, fmt.Errorf("--llm %q: want openai, ollama or replay", f.llm)
}
