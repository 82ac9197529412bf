// Package llm holds the Role adapters of refine and helpers shared by them.
//
// The subpackages provide the Roles themselves:
//
//   - [github.com/refine-spec/refine/llm/langchain] adapts any langchaingo
//     model (OpenAI-compatible servers, Ollama, …) and classifies its errors
//     into transient and permanent ones;
//   - [github.com/refine-spec/refine/llm/anthropic] talks to Anthropic's
//     Messages API through the official SDK, with prompt-cache breakpoints
//     where refine's prompts are stable (refine.Request.Stable);
//   - [github.com/refine-spec/refine/llm/replay] answers from recorded files;
//   - [github.com/refine-spec/refine/llm/record] records a live Role's
//     answers in the layout replay reads.
//
// This package provides [Limit] and [Limiter], which cap the number of calls
// in flight against a backend across every session sharing the wrapped Roles,
// and [Resumer], the optional interface of Roles that number their calls.
//
// A typical composition for the CLI's --record and --parallel flags:
//
//	live, err := langchain.NewOpenAI(cfg)        // or NewOllama, replay.Dir
//	rec, err := record.New(live, recordDir)      // only with --record
//	limiter := llm.NewLimiter(parallel)          // one per backend
//	engineer, reviewer := limiter.Wrap(rec), limiter.Wrap(rec)
//
// The limit then covers the whole call, and the recording sees only the
// answers the engine receives.
package llm
