package refine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/validate"
)

// attemptsOf returns the validation log's failure types of role's
// attempts in round 1, in order ("" for a pass).
func attemptsOf(t *testing.T, st refine.Status, role refine.RoleName) []string {
	t.Helper()
	seen := map[int]string{}
	var order []int
	for _, v := range st.Validation {
		if v.Round != 1 || v.Role != role {
			continue
		}
		if _, ok := seen[v.Attempt]; !ok {
			order = append(order, v.Attempt)
			seen[v.Attempt] = ""
		}
		if v.Result != "PASS" {
			seen[v.Attempt] = string(v.FailureType)
		}
	}
	out := make([]string, len(order))
	for i, n := range order {
		out[i] = seen[n]
	}
	return out
}

// An answer the token limit cut is TRUNCATED before any other check, even
// when what arrived reads as a valid answer; the retry asks for twice the
// cap (twice the cut answer's completion tokens when the cap was the
// backend's default) and spends no retry budget: with MaxRetries 0 the
// session still completes.
func TestTruncatedAnswerIsRetriedWithARaisedCapForFree(t *testing.T) {
	ctx := context.Background()
	valid := engineerDoc("GAP-TEST-001")
	eng := refinetest.Replies(
		refinetest.Reply{Content: valid[:len(valid)/2], Usage: refine.Usage{PromptTokens: 100, CompletionTokens: 700}, FinishReason: "length"},
		refinetest.Reply{Content: valid, Usage: refine.Usage{PromptTokens: 100, CompletionTokens: 900}, FinishReason: "max_tokens"},
		refinetest.Reply{Content: valid, Usage: refine.Usage{PromptTokens: 100, CompletionTokens: 900}},
	)
	rev := refinetest.Script(reviewerDoc(1, "GAP-TEST-001"))
	cfg := refinetest.Config(eng, rev, auto())
	cfg.MaxRetries = 0
	cfg.MaxTokensCap = 2000
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil || out.Status != refine.StatusComplete {
		t.Fatalf("Run = %+v, %v; want COMPLETE", out, err)
	}
	calls := eng.Calls()
	if len(calls) != 3 {
		t.Fatalf("engineer called %d times, want 3", len(calls))
	}
	if got := [3]int{calls[0].MaxTokens, calls[1].MaxTokens, calls[2].MaxTokens}; got != [3]int{0, 1400, 2000} {
		t.Errorf("MaxTokens of the three calls = %v, want [0 1400 2000] (default, twice 700, capped at 2000)", got)
	}
	st, _ := s.Status(ctx)
	if got := strings.Join(attemptsOf(t, st, refine.Engineer), ","); got != "TRUNCATED,TRUNCATED," {
		t.Errorf("engineer attempts = %q, want TRUNCATED,TRUNCATED,(pass)", got)
	}
	// The finish reason is journaled beside the raw response.
	if b, err := cfg.Store.Get(ctx, "round_001/attempts/engineer-1.finish"); err != nil || string(b) != "length" {
		t.Errorf("journaled finish reason = %q, %v; want \"length\"", b, err)
	}
}

// At the cap, a truncation is an ordinary failure: it spends the retry
// budget, and with none left the session escalates.
func TestTruncationAtTheCapSpendsTheBudget(t *testing.T) {
	ctx := context.Background()
	cut := refinetest.Reply{Content: "## Gap Resolution: GAP-TEST-001\n\n**Confidence:** HIGH\n\nThe pag", FinishReason: "length",
		Usage: refine.Usage{CompletionTokens: 4000}}
	eng := refinetest.Replies(cut, cut)
	rev := refinetest.Script()
	cfg := refinetest.Config(eng, rev, refine.DeferAsker{})
	cfg.MaxRetries = 0
	cfg.MaxTokens, cfg.MaxTokensCap = 4000, 8000
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != refine.StatusPaused || len(out.Pending) != 1 || out.Pending[0].Kind != refine.KindEscalation {
		t.Fatalf("outcome = %+v, want PAUSED at the escalation", out)
	}
	if calls := eng.Calls(); len(calls) != 2 || calls[1].MaxTokens != 8000 {
		t.Errorf("calls = %d (second MaxTokens %d), want 2 with the second at the 8000 cap", len(calls), calls[len(calls)-1].MaxTokens)
	}
}

// A provider's refusal signal is REFUSAL; the step's first refusal is
// re-asked without spending the budget, a second spends it.
func TestProviderRefusalIsReaskedOnceForFree(t *testing.T) {
	ctx := context.Background()
	refusal := refinetest.Reply{Content: "", FinishReason: "refusal"}
	eng := refinetest.Replies(refusal, refinetest.Reply{Content: engineerDoc("GAP-TEST-001")})
	rev := refinetest.Script(reviewerDoc(1, "GAP-TEST-001"))
	cfg := refinetest.Config(eng, rev, auto())
	cfg.MaxRetries = 0
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := s.Run(ctx); err != nil || out.Status != refine.StatusComplete {
		t.Fatalf("Run = %+v, %v; want COMPLETE", out, err)
	}
	st, _ := s.Status(ctx)
	if got := strings.Join(attemptsOf(t, st, refine.Engineer), ","); got != "REFUSAL," {
		t.Errorf("engineer attempts = %q, want REFUSAL,(pass)", got)
	}

	// Two refusals in one step: the second spends the (empty) budget.
	eng = refinetest.Replies(refusal, refinetest.Reply{Content: "", FinishReason: "content_filter"})
	cfg = refinetest.Config(eng, refinetest.Script(), refine.DeferAsker{})
	cfg.MaxRetries = 0
	if s, err = refine.New(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil || out.Status != refine.StatusPaused || out.Pending[0].Kind != refine.KindEscalation {
		t.Fatalf("Run = %+v, %v; want PAUSED at the escalation", out, err)
	}
}

// No text at all is FILE_MISSING, as the spec defines it, but the message
// names the backend's cause, never a file the user did not write.
func TestNoTextNamesTheCause(t *testing.T) {
	ctx := context.Background()
	eng := refinetest.Replies(refinetest.Reply{FinishReason: "tool_use"}, refinetest.Reply{Content: engineerDoc("GAP-TEST-001")})
	rev := refinetest.Script(reviewerDoc(1, "GAP-TEST-001"))
	cfg := refinetest.Config(eng, rev, auto())
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := s.Run(ctx); err != nil || out.Status != refine.StatusComplete {
		t.Fatalf("Run = %+v, %v", out, err)
	}
	st, _ := s.Status(ctx)
	var msg string
	for _, v := range st.Validation {
		if v.FailureType == validate.MissingFile {
			msg = v.Message
		}
	}
	if !strings.Contains(msg, "only a tool call") || strings.Contains(msg, "round_001/engineer.md") {
		t.Errorf("FILE_MISSING message = %q; want the cause (only a tool call), no file path", msg)
	}
}

// An answer ended because the prompt filled the context window is not
// fixed by a larger cap: the step fails with ErrContextWindow, naming the
// prompt's size, and nothing is retried.
func TestContextWindowExceededIsAnErrorNamingThePrompt(t *testing.T) {
	ctx := context.Background()
	eng := refinetest.Replies(refinetest.Reply{Content: "partial", FinishReason: "model_context_window_exceeded"})
	cfg := refinetest.Config(eng, refinetest.Script(), auto())
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if !errors.Is(err, refine.ErrContextWindow) {
		t.Fatalf("Run error = %v; want ErrContextWindow", err)
	}
	if !strings.Contains(err.Error(), "tokens") || !strings.Contains(err.Error(), "round 1 engineer attempt 1") {
		t.Errorf("error %q should name the prompt size and the attempt", err)
	}
	if out.Status != refine.StatusFailed || len(eng.Calls()) != 1 {
		t.Errorf("outcome %s after %d calls; want FAILED after 1", out.Status, len(eng.Calls()))
	}
}
