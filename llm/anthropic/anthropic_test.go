package anthropic_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/llm/anthropic"
	"github.com/refine-spec/refine/llm/anthropic/anthropictest"
)

func newRole(t *testing.T, srv *anthropictest.Server, opts ...anthropic.Option) *anthropic.Role {
	t.Helper()
	r, err := anthropic.New(anthropic.Config{BaseURL: srv.URL, Model: "claude-test", APIKey: "k"}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func fakeServer(t *testing.T) *anthropictest.Server {
	t.Helper()
	srv := anthropictest.NewServer()
	srv.Key = "k"
	t.Cleanup(srv.Close)
	return srv
}

// A request whose stable prefix is two system messages: system text with a
// spec of 1,200 tokens, then decisions.
func stableRequest(user string) llm.Request {
	return llm.Request{Role: llm.Engineer, Round: 1, Attempt: 1, Stable: 2, Messages: []llm.Message{
		{Role: "system", Content: "You are the Engineer.\n\n" + strings.Repeat("spec ", 960)},
		{Role: "system", Content: "## Decisions in force\n- DECISION-R1-001"},
		{Role: "user", Content: user},
	}}
}

func TestRespondPlacesBreakpointsAndReportsCacheUsage(t *testing.T) {
	srv := fakeServer(t)
	srv.Answer = func(anthropictest.Call) string { return "## Gap Resolution: GAP-A-001" }
	r := newRole(t, srv)
	ctx := context.Background()
	first, err := r.Respond(ctx, stableRequest("round 1"))
	if err != nil {
		t.Fatal(err)
	}
	second, err := r.Respond(ctx, stableRequest("round 2, longer"))
	if err != nil {
		t.Fatal(err)
	}
	calls := srv.Calls()
	if len(calls) != 2 {
		t.Fatalf("%d calls", len(calls))
	}
	c := calls[0]
	if c.Model != "claude-test" || c.MaxTokens != anthropic.DefaultMaxTokens {
		t.Errorf("model %q max_tokens %d", c.Model, c.MaxTokens)
	}
	if len(c.System) != 2 || !c.System[0].Cached || !c.System[1].Cached {
		t.Errorf("system blocks %+v: want two, each with a breakpoint", c.System)
	}
	if len(c.Turns) != 1 || c.Turns[0].Role != "user" || c.Turns[0].Blocks[0].Cached || c.Turns[0].Blocks[0].Text != "round 1" {
		t.Errorf("turns %+v: want one uncached user turn", c.Turns)
	}
	if first.Content != "## Gap Resolution: GAP-A-001" || first.Model != "claude-test" || first.FinishReason != "stop" {
		t.Errorf("first response %+v", first)
	}
	prefix := calls[0].Usage.CacheWriteTokens
	if prefix < 1024 {
		t.Fatalf("first call wrote %d tokens to the cache, want the stable prefix (≥ 1024)", prefix)
	}
	want := []llm.Usage{
		{PromptTokens: prefix + calls[0].Usage.InputTokens, CompletionTokens: calls[0].Usage.OutputTokens, CacheWriteTokens: prefix},
		{PromptTokens: prefix + calls[1].Usage.InputTokens, CompletionTokens: calls[1].Usage.OutputTokens, CachedPromptTokens: prefix},
	}
	if diff := cmp.Diff(want, []llm.Usage{first.Usage, second.Usage}); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
}

func TestRespondWithoutStablePrefixSetsNoBreakpoint(t *testing.T) {
	srv := fakeServer(t)
	r := newRole(t, srv)
	req := llm.Request{MaxTokens: 77, Messages: []llm.Message{{Role: "system", Content: "s"}, {Role: "user", Content: "u"}, {Role: "user", Content: "v"}}}
	if _, err := r.Respond(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	c := srv.Calls()[0]
	if c.System[0].Cached || c.MaxTokens != 77 || len(c.Turns) != 1 || len(c.Turns[0].Blocks) != 2 {
		t.Errorf("call %+v: want no breakpoint, max_tokens 77, consecutive user messages in one turn", c)
	}
}

func TestRespondErrors(t *testing.T) {
	tests := []struct {
		name      string
		failure   anthropictest.Failure
		transient bool
		after     time.Duration
		want      string
	}{
		{"429 with retry-after", anthropictest.Failure{Status: 429, Type: "rate_limit_error", RetryAfter: "3"}, true, 3 * time.Second, "rate limited (the server asks to wait 3s)"},
		{"529 overloaded", anthropictest.Failure{Status: 529, Type: "overloaded_error"}, true, 0, "overloaded"},
		{"500", anthropictest.Failure{Status: 500, Type: "api_error"}, true, 0, "server error"},
		{"401", anthropictest.Failure{Status: 401, Type: "authentication_error"}, false, 0, "ANTHROPIC_API_KEY"},
		{"400", anthropictest.Failure{Status: 400, Type: "invalid_request_error"}, false, 0, "request rejected"},
		{"404", anthropictest.Failure{Status: 404, Type: "not_found_error"}, false, 0, `model name "claude-test"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakeServer(t)
			srv.Failures = []anthropictest.Failure{tt.failure}
			_, err := newRole(t, srv).Respond(context.Background(), stableRequest("u"))
			if err == nil {
				t.Fatal("no error")
			}
			transient, after := llm.IsTransient(err)
			if transient != tt.transient || after != tt.after {
				t.Errorf("transient %v after %v, want %v %v: %v", transient, after, tt.transient, tt.after, err)
			}
			var se *anthropic.StatusError
			if !errors.As(err, &se) || se.Code != tt.failure.Status || se.Type != tt.failure.Type {
				t.Fatalf("error %v: want a StatusError %d %s", err, tt.failure.Status, tt.failure.Type)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q lacks %q", err, tt.want)
			}
			if len(srv.Calls()) != 1 {
				t.Errorf("%d calls: the SDK must not retry on its own", len(srv.Calls()))
			}
		})
	}
}

func TestRespondNetworkAndContextErrors(t *testing.T) {
	ctx := context.Background()
	refused, err := anthropic.New(anthropic.Config{BaseURL: "http://127.0.0.1:1", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = refused.Respond(ctx, stableRequest("u"))
	if ok, _ := llm.IsTransient(err); !ok || !errors.Is(err, anthropic.ErrUnreachable) {
		t.Errorf("refused connection: %v, want transient ErrUnreachable", err)
	}

	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(hang.Close)
	t.Cleanup(func() { close(release) }) // runs first: no handler outlives the test
	slow, err := anthropic.New(anthropic.Config{BaseURL: hang.URL, Model: "m"}, anthropic.WithTimeout(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	_, err = slow.Respond(ctx, stableRequest("u"))
	if ok, _ := llm.IsTransient(err); !ok || !errors.Is(err, anthropic.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("per-call timeout: %v, want transient ErrTimeout, not DeadlineExceeded", err)
	}

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = slow.Respond(cctx, stableRequest("u"))
	if ok, _ := llm.IsTransient(err); ok || !errors.Is(err, context.Canceled) {
		t.Errorf("caller's cancellation: %v, want context.Canceled, not transient", err)
	}
}

func TestNewAndConfigFromEnv(t *testing.T) {
	env := map[string]string{"ANTHROPIC_API_KEY": "key", "ANTHROPIC_MODEL": "claude-x", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}
	got := anthropic.ConfigFromEnv(anthropic.Config{Model: "flag-model"}, func(k string) string { return env[k] })
	if diff := cmp.Diff(anthropic.Config{APIKey: "key", Model: "flag-model", BaseURL: "http://127.0.0.1:9"}, got); diff != "" {
		t.Errorf("ConfigFromEnv (-want +got):\n%s", diff)
	}
	for _, tt := range []struct {
		cfg  anthropic.Config
		want string
	}{
		{anthropic.Config{APIKey: "k"}, "no model name"},
		{anthropic.Config{Model: "m"}, "ANTHROPIC_API_KEY"},
		{anthropic.Config{Model: "m", BaseURL: "ftp://x"}, "scheme"},
		{anthropic.Config{Model: "m", BaseURL: "http://u:p@x"}, "credentials"},
	} {
		if _, err := anthropic.New(tt.cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%+v) = %v, want %q", tt.cfg, err, tt.want)
		}
	}
}

func TestRespondRejectsBadMessages(t *testing.T) {
	srv := fakeServer(t)
	r := newRole(t, srv)
	for _, msgs := range [][]llm.Message{
		nil,
		{{Role: "system", Content: "s"}},
		{{Role: "user", Content: "u"}, {Role: "system", Content: "s"}},
		{{Role: "tool", Content: "t"}},
	} {
		if _, err := r.Respond(context.Background(), llm.Request{Messages: msgs}); err == nil || errors.As(err, new(*llm.TransientError)) {
			t.Errorf("messages %+v: err %v, want a permanent error", msgs, err)
		}
	}
	if n := len(srv.Calls()); n != 0 {
		t.Errorf("%d calls sent", n)
	}
}

func TestRespondBoundsTheAnswer(t *testing.T) {
	for _, tt := range []struct {
		name string
		size int
	}{{"answer just above the limit", 1500}, {"body far above the bound", 200_000}} {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakeServer(t)
			srv.Answer = func(anthropictest.Call) string { return strings.Repeat("x", tt.size) }
			resp, err := newRole(t, srv, anthropic.WithMaxResponseBytes(1000)).Respond(context.Background(), stableRequest("u"))
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.Content) != 1001 {
				t.Errorf("content of %d bytes, want the limit plus one (1001)", len(resp.Content))
			}
		})
	}
}

func TestWithTemperatureSetsEveryCall(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []anthropic.Option
		want *float64
	}{
		{"API default", nil, nil},
		{"set", []anthropic.Option{anthropic.WithTemperature(0.2)}, new(0.2)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeServer(t)
			r := newRole(t, srv, tc.opts...)
			if _, err := r.Respond(context.Background(), stableRequest("u")); err != nil {
				t.Fatal(err)
			}
			if got := srv.Calls()[0].Temperature; !cmp.Equal(got, tc.want) {
				t.Errorf("temperature %v, want %v", got, tc.want)
			}
		})
	}
}

// answerBody is a Messages API answer with the given content blocks and
// stop reason.
func answerBody(content, stop string) string {
	return `{"id":"msg_test","type":"message","role":"assistant","model":"claude-test","content":` + content +
		`,"stop_reason":"` + stop + `","stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":2}}`
}

// A body that is not an answer names the body, never the connection
// (issue #39: a malformed 200 read "API unreachable: connection … failed:
// error parsing response json"), and a body that stalls short of its
// Content-Length fails after the idle timeout, not the per-call one.
func TestRespondNamesBodyErrors(t *testing.T) {
	whole := answerBody(`[{"type":"text","text":"## Gap Resolution: GAP-A-001"}]`, "end_turn")
	tests := []struct {
		name    string
		failure anthropictest.Failure
		want    string
	}{
		{"truncated JSON", anthropictest.Failure{Body: whole[:60]}, "is not a Messages API response"},
		{"a proxy's page", anthropictest.Failure{Body: "<html><body>502 upstream</body></html>"}, "is not a Messages API response"},
		{"stalls short of its length", anthropictest.Failure{Body: whole, Cut: 40}, "stalled: no byte for 50ms after 40 of"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakeServer(t)
			srv.Failures = []anthropictest.Failure{tt.failure}
			r := newRole(t, srv, anthropic.WithTimeout(time.Minute), anthropic.WithIdleTimeout(50*time.Millisecond))
			_, err := r.Respond(context.Background(), stableRequest("u"))
			if ok, _ := llm.IsTransient(err); !ok || !errors.Is(err, anthropic.ErrResponseBody) {
				t.Fatalf("%v, want a transient ErrResponseBody", err)
			}
			if errors.Is(err, anthropic.ErrUnreachable) || errors.Is(err, anthropic.ErrTimeout) || strings.Contains(err.Error(), "unreachable") {
				t.Errorf("%v: names the connection or the call timeout", err)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "status 200") {
				t.Errorf("%v, want %q and the status", err, tt.want)
			}
		})
	}

	// A body the server ends short of its Content-Length.
	cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(whole)))
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, whole[:40])
	}))
	t.Cleanup(cut.Close)
	r, err := anthropic.New(anthropic.Config{BaseURL: cut.URL, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Respond(context.Background(), stableRequest("u"))
	if ok, _ := llm.IsTransient(err); !ok || !errors.Is(err, anthropic.ErrResponseBody) || errors.Is(err, anthropic.ErrUnreachable) ||
		!strings.Contains(err.Error(), fmt.Sprintf("cut short after 40 of %d bytes", len(whole))) {
		t.Errorf("cut body: %v, want a transient ErrResponseBody naming the bytes", err)
	}
}

// Every answer carries its stop reason: the API's own where refine's other
// backends have no name for it (an answer of tool_use blocks only has no
// text, and says why).
func TestRespondReportsTheStopReason(t *testing.T) {
	for _, tt := range []struct{ content, stop, want, text string }{
		{`[{"type":"text","text":"hi"}]`, "end_turn", "stop", "hi"},
		{`[{"type":"text","text":"hi"}]`, "max_tokens", "length", "hi"},
		{`[{"type":"tool_use","id":"toolu_1","name":"write_file","input":{"path":"round_001/engineer.md"}}]`, "tool_use", "tool_use", ""},
		{`[]`, "refusal", "refusal", ""},
		{`[]`, "end_turn", "stop", ""},
	} {
		srv := fakeServer(t)
		srv.Failures = []anthropictest.Failure{{Body: answerBody(tt.content, tt.stop)}}
		resp, err := newRole(t, srv).Respond(context.Background(), stableRequest("u"))
		if err != nil || resp.FinishReason != tt.want || resp.Content != tt.text {
			t.Errorf("%s %s: %+v, %v, want finish reason %q and text %q", tt.content, tt.stop, resp, err, tt.want, tt.text)
		}
	}
}
