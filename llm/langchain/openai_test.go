package langchain_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/llm/langchain"
)

// chatRequest is what an OpenAI-compatible server receives.
type chatRequest struct {
	Model               string        `json:"model"`
	Messages            []chatMessage `json:"messages"`
	MaxCompletionTokens int           `json:"max_completion_tokens,omitempty"`
	MaxTokens           int           `json:"max_tokens,omitempty"`
	Temperature         *float64      `json:"temperature,omitempty"`
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// completion renders a chat completion answer.
func completion(content string, prompt, completionTokens int) string {
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "test-model",
		"choices": []any{map[string]any{
			"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": content},
		}},
		"usage": map[string]any{"prompt_tokens": prompt, "completion_tokens": completionTokens, "total_tokens": prompt + completionTokens},
	})
	return string(b)
}

// openAIServer starts an OpenAI-compatible server whose /v1/chat/completions
// is h, and returns its base URL.
func openAIServer(t testing.TB, h http.HandlerFunc) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

func newOpenAI(t testing.TB, base string, opts ...langchain.Option) *langchain.Role {
	t.Helper()
	r, err := langchain.NewOpenAI(langchain.OpenAIConfig{BaseURL: base, Model: "test-model", APIKey: "sk-test"}, opts...)
	if err != nil {
		t.Fatalf("NewOpenAI: %v", err)
	}
	return r
}

func request() llm.Request {
	return llm.Request{
		Role: llm.Engineer, Round: 3, Attempt: 2,
		Messages: []llm.Message{{Role: "system", Content: "You are an engineer."}, {Role: "user", Content: "Close GAP-FLOW-001."}},
	}
}

func TestOpenAICompletion(t *testing.T) {
	var got chatRequest
	var auth string
	base := openAIServer(t, func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			t.Errorf("decoding request: %v", err)
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, completion("## Proposal\nDone.", 11, 7))
	})
	role := newOpenAI(t, base, langchain.WithTemperature(0.2))
	req := request()
	req.MaxTokens = 500

	resp, err := role.Respond(context.Background(), req)
	if err != nil {
		t.Fatalf("Respond: %v", err)
	}
	want := llm.Response{Content: "## Proposal\nDone.", Usage: llm.Usage{PromptTokens: 11, CompletionTokens: 7}, Model: "test-model", FinishReason: "stop"}
	if diff := cmp.Diff(want, resp); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	temp := 0.2
	wantReq := chatRequest{
		Model: "test-model",
		Messages: []chatMessage{
			{Role: "system", Content: "You are an engineer."},
			{Role: "user", Content: "Close GAP-FLOW-001."},
		},
		MaxCompletionTokens: 500,
		Temperature:         &temp,
	}
	if diff := cmp.Diff(wantReq, got); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
	if auth != "Bearer sk-test" {
		t.Errorf("Authorization = %q, want the configured key", auth)
	}
}

func TestOpenAILegacyMaxTokensAndPlaceholderKey(t *testing.T) {
	var got chatRequest
	var auth string
	base := openAIServer(t, func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		json.NewDecoder(r.Body).Decode(&got)
		io.WriteString(w, completion("ok", 1, 1))
	})
	role, err := langchain.NewOpenAI(langchain.OpenAIConfig{BaseURL: base, Model: "local", LegacyMaxTokens: true})
	if err != nil {
		t.Fatal(err)
	}
	req := request()
	req.MaxTokens = 64
	if _, err := role.Respond(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if got.MaxTokens != 64 || got.MaxCompletionTokens != 0 {
		t.Errorf("max_tokens = %d, max_completion_tokens = %d; want 64 and absent", got.MaxTokens, got.MaxCompletionTokens)
	}
	if want := "Bearer " + langchain.PlaceholderAPIKey; auth != want {
		t.Errorf("Authorization = %q, want %q", auth, want)
	}
}

func TestOpenAIRateLimitThenSuccess(t *testing.T) {
	var calls atomic.Int32
	base := openAIServer(t, func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "2")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"error":{"message":"Rate limit reached for requests","type":"requests"}}`)
			return
		}
		io.WriteString(w, completion("second time lucky", 3, 4))
	})
	role := newOpenAI(t, base)

	_, err := role.Respond(context.Background(), request())
	transient, after := llm.IsTransient(err)
	if !transient || after != 2*time.Second {
		t.Fatalf("first call: IsTransient = %v, %v; want true, 2s (err: %v)", transient, after, err)
	}
	var se *langchain.StatusError
	if !errors.As(err, &se) || se.Code != http.StatusTooManyRequests || se.RetryAfter != 2*time.Second {
		t.Errorf("first call: want *StatusError 429 with RetryAfter 2s, got %#v", se)
	}
	for _, want := range []string{"openai: status 429", "rate limited", "Rate limit reached for requests"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}

	resp, err := role.Respond(context.Background(), request())
	if err != nil {
		t.Fatalf("second call: %v", err)
	}
	if resp.Content != "second time lucky" {
		t.Errorf("second call content = %q", resp.Content)
	}
}

func TestOpenAIStatusErrors(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		header    map[string]string
		body      string
		transient bool
		after     time.Duration
		contains  []string
	}{
		{name: "500", status: 500, body: `{"error":{"message":"internal"}}`, transient: true,
			contains: []string{"openai: status 500", "server error", "internal"}},
		{name: "502 without body", status: 502, transient: true, contains: []string{"openai: status 502"}},
		{name: "503 retry-after-ms", status: 503, header: map[string]string{"retry-after-ms": "1500"},
			transient: true, after: 1500 * time.Millisecond, contains: []string{"openai: status 503", "1.5s"}},
		{name: "429 without hint", status: 429, transient: true, contains: []string{"rate limited"}},
		{name: "408", status: 408, transient: true, contains: []string{"openai: status 408"}},
		{name: "401", status: 401, body: `{"error":{"message":"Incorrect API key provided"}}`,
			contains: []string{"openai: status 401", "check the API key (OPENAI_API_KEY)", "Incorrect API key provided"}},
		{name: "403", status: 403, contains: []string{"openai: status 403", "check the API key", `model "test-model"`}},
		{name: "404", status: 404, body: `{"error":{"message":"The model does not exist"}}`,
			contains: []string{"openai: status 404", `check the model name "test-model"`}},
		{name: "400", status: 400, body: `{"error":{"message":"maximum context length is 8192 tokens"}}`,
			contains: []string{"openai: status 400", "request rejected", "maximum context length"}},
		{name: "501", status: 501, contains: []string{"openai: status 501", "does not implement"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := openAIServer(t, func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tc.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			})
			_, err := newOpenAI(t, base).Respond(context.Background(), request())
			if err == nil {
				t.Fatal("Respond succeeded; want an error")
			}
			transient, after := llm.IsTransient(err)
			if transient != tc.transient || after != tc.after {
				t.Errorf("IsTransient = %v, %v; want %v, %v (err: %v)", transient, after, tc.transient, tc.after, err)
			}
			var se *langchain.StatusError
			if !errors.As(err, &se) || se.Code != tc.status {
				t.Errorf("want *StatusError with code %d in %v", tc.status, err)
			}
			for _, want := range tc.contains {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		})
	}
}

func TestOpenAIPermanentBodies(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		sentinel error
		contains []string
	}{
		{name: "malformed", body: `{"choices": [ this is not json`, sentinel: langchain.ErrMalformedResponse,
			contains: []string{"openai: status 200", "malformed response body"}},
		{name: "wrong types", body: `{"choices": "none"}`, sentinel: langchain.ErrMalformedResponse,
			contains: []string{"malformed response body"}},
		{name: "empty choices", body: `{"id":"x","choices":[],"usage":{"prompt_tokens":1}}`, sentinel: langchain.ErrNoChoices,
			contains: []string{"openai: status 200", "model returned no choices"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := openAIServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, tc.body)
			})
			_, err := newOpenAI(t, base).Respond(context.Background(), request())
			if !errors.Is(err, tc.sentinel) {
				t.Fatalf("err = %v; want %v", err, tc.sentinel)
			}
			if transient, _ := llm.IsTransient(err); transient {
				t.Errorf("err %v is transient; want permanent", err)
			}
			for _, want := range tc.contains {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		})
	}
}

// blockingServer answers only when the client goes away, and reports each
// request on started.
func blockingServer(t *testing.T) (base string, started <-chan struct{}) {
	ch := make(chan struct{}, 10)
	base = openAIServer(t, func(w http.ResponseWriter, r *http.Request) {
		ch <- struct{}{}
		hang(t, r)
	})
	return base, ch
}

// hang blocks until the client goes away or the test ends. It reads the
// request body first: the server notices a closed connection only once
// the body is consumed.
func hang(t testing.TB, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-t.Context().Done():
	}
}

func TestOpenAIPerCallTimeoutIsTransient(t *testing.T) {
	base, _ := blockingServer(t)
	role := newOpenAI(t, base, langchain.WithTimeout(20*time.Millisecond))
	_, err := role.Respond(context.Background(), request())
	if !errors.Is(err, langchain.ErrTimeout) {
		t.Fatalf("err = %v; want ErrTimeout", err)
	}
	if transient, _ := llm.IsTransient(err); !transient {
		t.Errorf("err %v is permanent; want transient", err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err %v matches context.DeadlineExceeded; the caller's deadline did not pass", err)
	}
	for _, want := range []string{"openai:", "per-call timeout of 20ms"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestOpenAIParentCancelledIsNotTransient(t *testing.T) {
	base, started := blockingServer(t)
	role := newOpenAI(t, base, langchain.WithTimeout(time.Hour))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	_, err := role.Respond(ctx, request())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v; want context.Canceled", err)
	}
	if transient, _ := llm.IsTransient(err); transient {
		t.Errorf("err %v is transient; want permanent", err)
	}
}

func TestOpenAIParentDeadlineIsNotTransient(t *testing.T) {
	base, _ := blockingServer(t)
	role := newOpenAI(t, base, langchain.WithTimeout(time.Hour))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := role.Respond(ctx, request())
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, langchain.ErrTimeout) {
		t.Fatalf("err = %v; want context.DeadlineExceeded, not ErrTimeout", err)
	}
	if transient, _ := llm.IsTransient(err); transient {
		t.Errorf("err %v is transient; want permanent", err)
	}
}

func TestOpenAIAlreadyCancelled(t *testing.T) {
	var calls atomic.Int32
	base := openAIServer(t, func(w http.ResponseWriter, r *http.Request) { calls.Add(1) })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := newOpenAI(t, base).Respond(ctx, request())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v; want context.Canceled", err)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("server saw %d requests; want none", n)
	}
}

func TestOpenAIConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String() + "/v1"
	ln.Close()

	_, err = newOpenAI(t, base).Respond(context.Background(), request())
	if !errors.Is(err, langchain.ErrUnreachable) {
		t.Fatalf("err = %v; want ErrUnreachable", err)
	}
	if transient, _ := llm.IsTransient(err); !transient {
		t.Errorf("err %v is permanent; want transient", err)
	}
	for _, want := range []string{"openai:", base + "/chat/completions", "refused"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestOpenAIConnectionDroppedMidBody(t *testing.T) {
	base := openAIServer(t, func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		defer conn.Close()
		fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"choices\": [")
		buf.Flush()
	})
	_, err := newOpenAI(t, base).Respond(context.Background(), request())
	if !errors.Is(err, langchain.ErrUnreachable) {
		t.Fatalf("err = %v; want ErrUnreachable", err)
	}
	if transient, _ := llm.IsTransient(err); !transient {
		t.Errorf("err %v is permanent; want transient", err)
	}
	if !strings.Contains(err.Error(), "openai: status 200") {
		t.Errorf("error %q lacks the status", err)
	}
}

func TestNewOpenAIConfig(t *testing.T) {
	tests := []struct {
		name    string
		cfg     langchain.OpenAIConfig
		wantErr string // "" for success
	}{
		{name: "default URL with key", cfg: langchain.OpenAIConfig{Model: "gpt-4o-mini", APIKey: "sk"}},
		{name: "local without key", cfg: langchain.OpenAIConfig{BaseURL: "http://localhost:8080/v1/", Model: "m"}},
		{name: "no key", cfg: langchain.OpenAIConfig{Model: "m"}, wantErr: "set OpenAIConfig.APIKey (OpenAIConfigFromEnv takes it from OPENAI_API_KEY)"},
		{name: "no model", cfg: langchain.OpenAIConfig{APIKey: "sk"}, wantErr: "no model name: set OpenAIConfig.Model (OpenAIConfigFromEnv takes it from OPENAI_MODEL)"},
		{name: "ftp", cfg: langchain.OpenAIConfig{BaseURL: "ftp://host/v1", Model: "m"}, wantErr: "scheme must be http or https"},
		{name: "no scheme", cfg: langchain.OpenAIConfig{BaseURL: "localhost:8080", Model: "m"}, wantErr: "scheme must be http or https"},
		{name: "no host", cfg: langchain.OpenAIConfig{BaseURL: "http:///v1", Model: "m"}, wantErr: "has no host"},
		{name: "unparsable", cfg: langchain.OpenAIConfig{BaseURL: "http://[::1", Model: "m"}, wantErr: "is not a URL"},
		{name: "query", cfg: langchain.OpenAIConfig{BaseURL: "http://h/v1?key=secret", Model: "m"}, wantErr: "must not have a query"},
		{name: "credentials", cfg: langchain.OpenAIConfig{BaseURL: "http://u:secret@h/v1", Model: "m"}, wantErr: "contains credentials"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := langchain.NewOpenAI(tc.cfg)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("NewOpenAI: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("NewOpenAI error = %v; want one containing %q", err, tc.wantErr)
			case err != nil && strings.Contains(err.Error(), "--"):
				t.Errorf("the library's error %q names a command-line flag", err)
			case err != nil && strings.Contains(err.Error(), "secret"):
				t.Errorf("error %q leaks the credentials", err)
			}
		})
	}
}

func TestOpenAIConfigFromEnv(t *testing.T) {
	env := map[string]string{
		"OPENAI_API_KEY":  "sk-env",
		"OPENAI_API_BASE": "http://api-base/v1",
		"OPENAI_MODEL":    "env-model",
	}
	getenv := func(k string) string { return env[k] }
	tests := []struct {
		name string
		in   langchain.OpenAIConfig
		want langchain.OpenAIConfig
	}{
		{name: "all from env", want: langchain.OpenAIConfig{APIKey: "sk-env", BaseURL: "http://api-base/v1", Model: "env-model"}},
		{name: "flags win", in: langchain.OpenAIConfig{BaseURL: "http://flag/v1", Model: "flag-model"},
			want: langchain.OpenAIConfig{APIKey: "sk-env", BaseURL: "http://flag/v1", Model: "flag-model"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := langchain.OpenAIConfigFromEnv(tc.in, getenv)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	env["OPENAI_BASE_URL"] = "http://base-url/v1"
	if got := langchain.OpenAIConfigFromEnv(langchain.OpenAIConfig{}, getenv); got.BaseURL != "http://base-url/v1" {
		t.Errorf("BaseURL = %q; OPENAI_BASE_URL must win over OPENAI_API_BASE", got.BaseURL)
	}
}

func TestOpenAIUntrustedCertificateIsPermanent(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(srv.Close)
	_, err := newOpenAI(t, srv.URL+"/v1").Respond(context.Background(), request())
	if err == nil || !strings.Contains(err.Error(), "TLS certificate of "+srv.URL+"/v1/chat/completions rejected") {
		t.Fatalf("err = %v; want a TLS error naming the URL", err)
	}
	if transient, _ := llm.IsTransient(err); transient {
		t.Errorf("err %v is transient", err)
	}
}

// A host that builds its own langchaingo model gets the same classification
// by installing a Transport.
func TestHostBuiltModelWithTransport(t *testing.T) {
	base := openAIServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "5")
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	hc := &http.Client{Transport: langchain.NewTransport(nil)}
	model, err := openai.New(openai.WithToken("sk"), openai.WithBaseURL(base), openai.WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	_, err = langchain.New(model, langchain.WithProvider("custom")).Respond(context.Background(), request())
	if transient, after := llm.IsTransient(err); !transient || after != 5*time.Second {
		t.Fatalf("IsTransient = %v, %v; want true, 5s (err: %v)", transient, after, err)
	}
	if !strings.HasPrefix(err.Error(), "custom: status 503") {
		t.Errorf("error %q lacks the provider and status", err)
	}
	// Without the Transport the status survives in the text, the hint not.
	model, _ = openai.New(openai.WithToken("sk"), openai.WithBaseURL(base))
	_, err = langchain.New(model).Respond(context.Background(), request())
	if transient, after := llm.IsTransient(err); !transient || after != 0 {
		t.Fatalf("without Transport: IsTransient = %v, %v; want true, 0 (err: %v)", transient, after, err)
	}
}

func TestOpenAICachedPromptTokens(t *testing.T) {
	base := openAIServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c","object":"chat.completion","created":1,"model":"test-model",`+
			`"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"ok"}}],`+
			`"usage":{"prompt_tokens":2048,"completion_tokens":5,"total_tokens":2053,"prompt_tokens_details":{"cached_tokens":1920}}}`)
	})
	resp, err := newOpenAI(t, base).Respond(context.Background(), request())
	if err != nil {
		t.Fatal(err)
	}
	want := llm.Usage{PromptTokens: 2048, CompletionTokens: 5, CachedPromptTokens: 1920}
	if diff := cmp.Diff(want, resp.Usage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
}
