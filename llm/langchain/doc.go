// Package langchain adapts langchaingo chat models to llm.Role.
//
// [New] wraps any [Generator] (every langchaingo llms.Model is one);
// [NewOpenAI] and [NewOllama] build the two backends the refine CLI offers.
// A Role maps the request's system and user messages to langchaingo
// messages, passes the model name, temperature and max-tokens cap, and
// returns the first choice's content with the token usage the backend
// reported.
//
// # Errors
//
// langchaingo never retries; the engine does, for errors that satisfy
// llm.Transient. Respond therefore classifies every failure:
//
//   - the caller's context done: its error, wrapped, never transient;
//   - the per-call timeout ([WithTimeout]) exceeded while the caller's
//     context is alive: transient, matching [ErrTimeout];
//   - HTTP 408, 429 and 5xx (except 501): transient [*StatusError] carrying
//     the server's Retry-After (or retry-after-ms) hint in
//     llm.TransientError.After;
//   - connection refused, reset or dropped, network timeouts: transient,
//     matching [ErrUnreachable] or [ErrTimeout], naming the URL;
//   - 401 and 403: permanent, telling the user to check the API key;
//     404: permanent, naming the model; other 4xx: permanent;
//   - a malformed answer ([ErrMalformedResponse]) or one without choices
//     ([ErrNoChoices]): permanent.
//
// Every message starts with the provider label and, when known, the status:
// "openai: status 429: rate limited (the server asks to wait 2s): …".
//
// langchaingo drops the HTTP status (its OpenAI client keeps only the number
// in the message text; its Ollama client even returns no error for a 5xx
// with an empty body), the response headers (so Retry-After), and the cause
// of network errors. The Roles built by NewOpenAI and NewOllama therefore
// install a [Transport] in their HTTP client that records the last status,
// Retry-After header, transport error and body read error of each call, in a
// record carried by the call's context. A Role built with New over a model
// without a Transport falls back to the error text and types and cannot
// honour Retry-After.
//
// Token usage is read from ContentChoice.GenerationInfo ("PromptTokens" and
// "CompletionTokens", or "InputTokens" and "OutputTokens"); a backend that
// reports none yields 0. The package never calls llms.CountTokens, which
// downloads encodings from the network.
package langchain
