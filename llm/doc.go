// Package llm is the Role contract of refine, the interface a host's LLM
// backend implements and the engine calls, with the helpers shared by the
// Role adapters.
//
// A [Role] is one LLM-backed participant of a round ([Engineer] or
// [Reviewer]): the engine hands it a [Request] (the prompt's [Message]
// values, the call's round, attempt and index) and gets a [Response] (the
// text and its [Usage]). Errors worth retrying after a pause satisfy
// [Transient] (return a [TransientError]); [ErrNoResponse] says a scripted
// or recorded Role ran out. This package holds only the contract and
// depends on no LLM SDK and not on the engine; the root package refine
// re-exports every contract name here as an alias (refine.Role is
// llm.Role), so code written against either name works with both.
//
// The subpackages provide the Roles themselves:
//
//   - [github.com/refine-spec/refine/llm/langchain] adapts any langchaingo
//     model (OpenAI-compatible servers, Ollama, …) and classifies its errors
//     into transient and permanent ones;
//   - [github.com/refine-spec/refine/llm/anthropic] talks to Anthropic's
//     Messages API through the official SDK, with prompt-cache breakpoints
//     where refine's prompts are stable ([Request].Stable);
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
