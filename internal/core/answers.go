package core

import (
	"fmt"
	"strings"

	"github.com/refine-spec/refine/exemplar"
	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/validate"
)

// What an answer says about itself beyond its text (DESIGN §18): the
// backend's finish reason is journaled beside the raw response, read
// again with it after a crash, and decides before any reading whether
// the answer was cut by the token limit (TRUNCATED), refused (REFUSAL),
// or came with no text at all (FILE_MISSING naming the cause).

// finishKey is where the finish reason of the response journaled at
// respKey is kept: beside it, in the same commit. Only a reason other
// than a plain stop is journaled, so a session of scripted roles holds
// no such file.
func finishKey(respKey string) string {
	return strings.TrimSuffix(respKey, ".md") + ".finish"
}

// plainStop reports whether a finish reason says only that the answer
// ended normally, which is not journaled.
func plainStop(reason string) bool {
	switch strings.ToLower(reason) {
	case "", "stop", "end_turn", "endturn", "stop_sequence", "stopsequence":
		return true
	}
	return false
}

// journalResponse returns the ops that journal a fresh response: its
// text (capped at the output limit; validation fails a larger one from
// its full size) and, when it says more than a plain stop, its finish
// reason.
func journalResponse(respKey, content, finish string, maxOutputBytes int) []store.Op {
	journaled := content
	if maxOutputBytes > 0 && len(journaled) > maxOutputBytes {
		journaled = journaled[:maxOutputBytes]
	}
	ops := []store.Op{store.Put(respKey, []byte(journaled))}
	if !plainStop(finish) {
		ops = append(ops, store.Put(finishKey(respKey), []byte(finish)))
	}
	return ops
}

// journaledFinish reads the finish reason journaled beside respKey, ""
// when none was (a plain stop, or a response journaled by an older
// refine).
func (s *Engine) journaledFinish(respKey string) string {
	b, err := s.get(finishKey(respKey))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// noTextCause words why an answer holds no text at all, from its finish
// reason, for FILE_MISSING's message.
func noTextCause(finish string) string {
	switch strings.ToLower(finish) {
	case "":
		return "an empty answer"
	case "tool_use", "tool_calls", "function_call", "tooluse":
		return fmt.Sprintf("only a tool call (finish reason %q), no text block", finish)
	}
	return fmt.Sprintf("an empty answer (finish reason %q)", finish)
}

// readAnswer validates content, an answer that ended for finish, with
// read. The finish reason decides first: an answer the token limit cut is
// TRUNCATED and one the provider refused is REFUSAL, whatever it holds
// (except an answer above maxOutputBytes, which the backend cut itself
// and read fails as WRONG_FORMAT); an answer with no text at all is
// FILE_MISSING naming the cause.
func readAnswer(content, finish string, maxOutputBytes int, read func(string) validate.Result) validate.Result {
	switch {
	case maxOutputBytes > 0 && len(content) > maxOutputBytes:
	case validate.CutByTokenLimit(finish):
		return validate.Fail(validate.Truncated, fmt.Sprintf("the token limit cut the answer (finish reason %q) after %d bytes; it is incomplete", finish, len(content)))
	case validate.ProviderRefusal(finish):
		return validate.Fail(validate.Refusal, fmt.Sprintf("the provider refused to answer (finish reason %q)", finish))
	case content == "":
		return validate.NoText(noTextCause(finish))
	}
	return read(content)
}

// contextExceeded is the error of an answer the backend ended because the
// prompt filled the model's context window: a larger completion limit
// does not fix it, a smaller prompt does.
func contextExceeded(where string, finish string, msgs []llm.Message, tok exemplar.Tokenizer) error {
	n := 0
	for _, m := range msgs {
		n += tok.Count(m.Content)
	}
	return fmt.Errorf("%s: the backend stopped with %q: the prompt (about %d tokens) fills the model's context window; lower PromptBudget (--prompt-budget) or use a model with a larger context: %w",
		where, finish, n, ErrContextWindow)
}

// nextMaxTokens is the completion cap of a step's next request: base
// (Settings.MaxTokens), raised for each earlier attempt the token limit
// cut to twice that attempt's cap (twice its completion tokens when its
// cap was the backend's default), never above limit, and kept raised for
// the rest of the step.
func nextMaxTokens(base, limit int, prior []state.AttemptRec) int {
	n := base
	for _, rec := range prior {
		if rec.FailureType == validate.Truncated {
			n = max(n, raisedTokens(rec, limit))
		} else if rec.MaxTokens > n {
			n = rec.MaxTokens
		}
	}
	return n
}

// raisedTokens is the cap the retry after rec, an answer the token limit
// cut, asks for.
func raisedTokens(rec state.AttemptRec, limit int) int {
	n := 2 * rec.MaxTokens
	if rec.MaxTokens == 0 {
		n = 2 * rec.Usage.CompletionTokens
	}
	if n <= 0 || n > limit {
		n = limit
	}
	return n
}

// freeReask reports whether the failed attempt rec of a step whose
// earlier attempts are prior is re-asked without spending the retry
// budget: an answer the token limit cut below the cap (the retry raises
// it), or a refusal that does not follow a refusal (a model's refusal of
// a benign task is mostly noise; one right after another spends the
// budget, so a model that always refuses still ends in an escalation).
func freeReask(rec state.AttemptRec, prior []state.AttemptRec, limit int) bool {
	switch rec.FailureType {
	case validate.Truncated:
		return rec.MaxTokens < limit
	case validate.Refusal:
		return len(prior) == 0 || prior[len(prior)-1].FailureType != validate.Refusal
	}
	return false
}
