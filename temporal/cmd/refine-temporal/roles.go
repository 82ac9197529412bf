package main

import (
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/internal/llmbackend"
)

// roleFlags choose the worker's LLM backend, as `refine run` does.
type roleFlags struct {
	llm, replayDir, model, engineerModel, reviewerModel, baseURL string
	// engineer and reviewer are PROVIDER:MODEL for one role each.
	engineer, reviewer, engineerBaseURL, reviewerBaseURL string
	timeout                                              time.Duration
	// choice is what roles built, for describe.
	choice llmbackend.Choice
}

func (f *roleFlags) flags(fl *flag.FlagSet) {
	fl.StringVar(&f.llm, "llm", "", "backend of both roles: openai, anthropic, ollama or replay (required unless --engineer and --reviewer)")
	fl.StringVar(&f.engineer, "engineer", "", "the Engineer's PROVIDER:MODEL (openai, anthropic, ollama, replay), instead of --llm/--model")
	fl.StringVar(&f.reviewer, "reviewer", "", "the Reviewer's PROVIDER:MODEL, instead of --llm/--model")
	fl.StringVar(&f.engineerBaseURL, "engineer-base-url", "", "the Engineer's endpoint, when not its provider's default")
	fl.StringVar(&f.reviewerBaseURL, "reviewer-base-url", "", "the Reviewer's endpoint, when not its provider's default")
	fl.StringVar(&f.replayDir, "replay", "", "folder of engineer-NNN.md / reviewer-NNN.md responses (--llm replay)")
	fl.StringVar(&f.model, "model", "", "model for both roles")
	fl.StringVar(&f.engineerModel, "engineer-model", "", "model for the Engineer (default --model)")
	fl.StringVar(&f.reviewerModel, "reviewer-model", "", "model for the Reviewer (default --model)")
	fl.StringVar(&f.baseURL, "base-url", "", "API base URL (openai, anthropic) or server URL (ollama) of --llm's roles")
	fl.DurationVar(&f.timeout, "timeout", 5*time.Minute, "limit for one role call")
}

func (f *roleFlags) roles(e env) (refine.Role, refine.Role, error) {
	if f.llm == "" && (f.engineer == "" || f.reviewer == "") {
		return nil, nil, errors.New("--llm is required (openai, anthropic, ollama or replay), or --engineer and --reviewer PROVIDER:MODEL")
	}
	c := llmbackend.Choice{Kind: f.llm, ReplayDir: f.replayDir, Model: f.model, EngineerModel: f.engineerModel,
		ReviewerModel: f.reviewerModel, BaseURL: f.baseURL, Timeout: f.timeout}
	for _, r := range []struct {
		flag, val, url string
		dst            *refine.RoleBackend
	}{{"--engineer", f.engineer, f.engineerBaseURL, &c.Engineer}, {"--reviewer", f.reviewer, f.reviewerBaseURL, &c.Reviewer}} {
		if r.val != "" {
			rb, err := llmbackend.ParseRole(r.val)
			if err != nil {
				return nil, nil, fmt.Errorf("%s %w", r.flag, err)
			}
			*r.dst = rb
		}
		r.dst.BaseURL = r.url
	}
	f.choice = c
	return c.Roles(e.getenv)
}

// describe names each role's provider and model, once roles has run.
func (f *roleFlags) describe() string {
	label := func(role refine.RoleName) string {
		rb := f.choice.Resolve(role)
		if rb.Model == "" {
			return rb.Kind
		}
		return rb.Kind + ":" + rb.Model
	}
	return "Engineer " + label(refine.Engineer) + ", Reviewer " + label(refine.Reviewer)
}
