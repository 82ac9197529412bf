package main

import (
	"errors"
	"flag"
	"time"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/internal/llmbackend"
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
	if f.llm == "" {
		return nil, nil, errors.New("--llm is required: openai, ollama or replay")
	}
	return llmbackend.Choice{Kind: f.llm, ReplayDir: f.replayDir, Model: f.model, EngineerModel: f.engineerModel,
		ReviewerModel: f.reviewerModel, BaseURL: f.baseURL, Timeout: f.timeout}.Roles(e.getenv)
}
