package main

import (
	"cmp"
	"flag"
	"fmt"
	"io"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/internal/llmbackend"
)

// registerProviders adds the flags that give each role its own provider
// and model (--engineer anthropic:claude-sonnet-4-5 --reviewer
// openai:gpt-5-mini); --llm and --model stay the shorthand for both.
func (f *sessionFlags) registerProviders(fl *flag.FlagSet) {
	fl.StringVar(&f.engineer, "engineer", "", "the Engineer's PROVIDER:MODEL (openai, anthropic, ollama, replay), instead of --llm/--model")
	fl.StringVar(&f.reviewer, "reviewer", "", "the Reviewer's PROVIDER:MODEL (openai, anthropic, ollama, replay), instead of --llm/--model")
	fl.StringVar(&f.engineerBaseURL, "engineer-base-url", "", "the Engineer's endpoint, when not its provider's default (or OPENAI_BASE_URL, ANTHROPIC_BASE_URL, OLLAMA_HOST)")
	fl.StringVar(&f.reviewerBaseURL, "reviewer-base-url", "", "the Reviewer's endpoint, when not its provider's default")
}

// hasBackend reports whether the flags name a backend for both roles.
func (f *sessionFlags) hasBackend() bool {
	return f.llm != "" || (f.engineer != "" && f.reviewer != "")
}

// roleFlags parses --engineer and --reviewer; an empty flag gives an empty
// RoleBackend.
func (f *sessionFlags) roleFlags() (eng, rev refine.RoleBackend, err error) {
	if f.engineer != "" {
		if eng, err = llmbackend.ParseRole(f.engineer); err != nil {
			return eng, rev, fmt.Errorf("--engineer %w", err)
		}
	}
	if f.reviewer != "" {
		if rev, err = llmbackend.ParseRole(f.reviewer); err != nil {
			return eng, rev, fmt.Errorf("--reviewer %w", err)
		}
	}
	eng.BaseURL, rev.BaseURL = f.engineerBaseURL, f.reviewerBaseURL
	return eng, rev, nil
}

// choice is the backend the flags name.
func (f *sessionFlags) choice() (llmbackend.Choice, error) {
	eng, rev, err := f.roleFlags()
	if err != nil {
		return llmbackend.Choice{}, err
	}
	return llmbackend.Choice{Kind: f.llm, ReplayDir: f.replayDir, Model: f.model, EngineerModel: f.engineerModel,
		ReviewerModel: f.reviewerModel, BaseURL: f.baseURL, Engineer: eng, Reviewer: rev, Timeout: f.timeout}, nil
}

// rolesInfo records each role's provider, model and endpoint in b where
// --engineer/--reviewer name them (never a key).
func (f *sessionFlags) rolesInfo(b *refine.BackendInfo) {
	choice, err := f.choice()
	if err != nil {
		return // reported when the roles are built
	}
	eng, rev := choice.Resolve(refine.Engineer), choice.Resolve(refine.Reviewer)
	if b.Kind == "" && eng.Kind == rev.Kind {
		b.Kind = eng.Kind
	}
	if eng.Kind != b.Kind {
		b.EngineerKind = eng.Kind
	}
	if rev.Kind != b.Kind {
		b.ReviewerKind = rev.Kind
	}
	b.EngineerModel, b.ReviewerModel = eng.Model, rev.Model
	if eng.BaseURL != b.BaseURL {
		b.EngineerBaseURL = eng.BaseURL
	}
	if rev.BaseURL != b.BaseURL {
		b.ReviewerBaseURL = rev.BaseURL
	}
}

// fillRolesFromSession restores the per-role providers a session was
// started with (the shared fields are restored by fillFromSession).
func (f *sessionFlags) fillRolesFromSession(b refine.BackendInfo) {
	if b.EngineerKind != "" {
		f.engineer = b.EngineerKind + ":" + b.EngineerModel
	}
	if b.ReviewerKind != "" {
		f.reviewer = b.ReviewerKind + ":" + b.ReviewerModel
	}
	f.engineerBaseURL = cmp.Or(f.engineerBaseURL, b.EngineerBaseURL)
	f.reviewerBaseURL = cmp.Or(f.reviewerBaseURL, b.ReviewerBaseURL)
}

// roleTelemetry is the provider and model of role for the LLM-call spans:
// none for a replay.
func (f *sessionFlags) roleTelemetry(role refine.RoleName) (provider, model string) {
	choice, err := f.choice()
	if err != nil {
		return "", ""
	}
	rb := choice.Resolve(role)
	if rb.Kind == "replay" {
		return "", ""
	}
	return rb.Kind, rb.Model
}

// describeBackend names the roles' providers and models for messages.
func (f *sessionFlags) describeBackend() string {
	choice, err := f.choice()
	if err != nil {
		return "--llm " + f.llm
	}
	label := func(rb refine.RoleBackend) string {
		if rb.Model == "" {
			return rb.Kind
		}
		return rb.Kind + ":" + rb.Model
	}
	return "Engineer " + label(choice.Resolve(refine.Engineer)) + ", Reviewer " + label(choice.Resolve(refine.Reviewer))
}

// printRoles adds to the summary the prompt-cache share of the prompt
// tokens, when the backend reported any, and which provider and model
// play each role.
func printRoles(w io.Writer, st refine.Status) {
	if u := st.Usage; u.CachedPromptTokens > 0 || u.CacheWriteTokens > 0 {
		fmt.Fprintf(w, "  prompt cache: %d of the prompt tokens read from it, %d written to it\n", u.CachedPromptTokens, u.CacheWriteTokens)
	}
	b := st.Settings.Backend
	label := func(role refine.RoleName) string {
		rb := b.Role(role)
		if rb.Model == "" {
			return safeLine(rb.Kind)
		}
		return safeLine(rb.Kind + ":" + rb.Model)
	}
	if b.Role(refine.Engineer).Kind != "" || b.Role(refine.Reviewer).Kind != "" {
		fmt.Fprintf(w, "  engineer: %s; reviewer: %s\n", label(refine.Engineer), label(refine.Reviewer))
	}
}
