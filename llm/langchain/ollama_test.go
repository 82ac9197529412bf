package langchain_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/llm/langchain"
)

// ollamaRequest is what an Ollama server receives on /api/chat.
type ollamaRequest struct {
	Model    string        `json:"model"`
	Messages []chatMessage `json:"messages"`
	Options  struct {
		NumPredict int `json:"num_predict"`
	} `json:"options"`
}

func ollamaServer(t testing.TB, h http.HandlerFunc) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/chat", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

func newOllama(t testing.TB, url string, opts ...langchain.Option) *langchain.Role {
	t.Helper()
	r, err := langchain.NewOllama(langchain.OllamaConfig{URL: url, Model: "llama3.1"}, opts...)
	if err != nil {
		t.Fatalf("NewOllama: %v", err)
	}
	return r
}

func TestOllamaCompletion(t *testing.T) {
	var got ollamaRequest
	url := ollamaServer(t, func(w http.ResponseWriter, r *http.Request) {
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			t.Errorf("decoding request: %v", err)
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		// Ollama streams unless told otherwise; the client accumulates.
		io.WriteString(w, `{"model":"llama3.1","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":"## Pro"},"done":false}`+"\n")
		io.WriteString(w, `{"model":"llama3.1","created_at":"2025-01-01T00:00:01Z","message":{"role":"assistant","content":"posal"},"done":true,"prompt_eval_count":26,"eval_count":9}`+"\n")
	})
	req := request()
	req.MaxTokens = 300
	resp, err := newOllama(t, url).Respond(context.Background(), req)
	if err != nil {
		t.Fatalf("Respond: %v", err)
	}
	want := llm.Response{Content: "## Proposal", Usage: llm.Usage{PromptTokens: 26, CompletionTokens: 9}, Model: "llama3.1"}
	if diff := cmp.Diff(want, resp); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	wantReq := ollamaRequest{Model: "llama3.1", Messages: []chatMessage{
		{Role: "system", Content: "You are an engineer."},
		{Role: "user", Content: "Close GAP-FLOW-001."},
	}}
	wantReq.Options.NumPredict = 300
	if diff := cmp.Diff(wantReq, got); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
}

func TestOllamaErrors(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		header    map[string]string
		body      string
		transient bool
		after     time.Duration
		contains  []string
	}{
		{name: "500 with message", status: 500, body: `{"error":"llama runner process has terminated"}`, transient: true,
			contains: []string{"ollama: status 500", "llama runner process has terminated"}},
		// langchaingo's client returns no error at all for this one.
		{name: "500 empty body", status: 500, transient: true, contains: []string{"ollama: status 500"}},
		{name: "503 plain text", status: 503, header: map[string]string{"Retry-After": "7"}, body: "overloaded",
			transient: true, after: 7 * time.Second, contains: []string{"ollama: status 503"}},
		{name: "404 model", status: 404, body: `{"error":"model \"llama3.1\" not found, try pulling it first"}`,
			contains: []string{"ollama: status 404", `check the model name "llama3.1"`, "try pulling it first"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			url := ollamaServer(t, func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tc.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			})
			_, err := newOllama(t, url).Respond(context.Background(), request())
			if err == nil {
				t.Fatal("Respond succeeded; want an error")
			}
			transient, after := llm.IsTransient(err)
			if transient != tc.transient || after != tc.after {
				t.Errorf("IsTransient = %v, %v; want %v, %v (err: %v)", transient, after, tc.transient, tc.after, err)
			}
			for _, want := range tc.contains {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		})
	}
}

func TestOllamaPerCallTimeout(t *testing.T) {
	url := ollamaServer(t, func(w http.ResponseWriter, r *http.Request) { hang(t, r) })
	_, err := newOllama(t, url, langchain.WithTimeout(20*time.Millisecond)).Respond(context.Background(), request())
	if !errors.Is(err, langchain.ErrTimeout) {
		t.Fatalf("err = %v; want ErrTimeout", err)
	}
	if transient, _ := llm.IsTransient(err); !transient {
		t.Errorf("err %v is permanent; want transient", err)
	}
}

func TestNewOllamaRejectsBadURLs(t *testing.T) {
	// ollama.WithServerURL would log.Fatal on the unparsable ones and so
	// end this test binary.
	tests := []struct {
		url     string
		wantErr string
	}{
		{url: "http://[::1", wantErr: "is not a URL"},
		{url: "://nope", wantErr: "is not a URL"},
		{url: "http://host:port", wantErr: "is not a URL"},
		{url: "ftp://host", wantErr: "scheme must be http or https"},
		{url: "localhost:11434", wantErr: "scheme must be http or https"},
		{url: "http://", wantErr: "has no host"},
		{url: "http://h:11434/?x=1", wantErr: "must not have a query"},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			_, err := langchain.NewOllama(langchain.OllamaConfig{URL: tc.url, Model: "m"})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.HasPrefix(err.Error(), "ollama: ") {
				t.Fatalf("NewOllama(%q) error = %v; want one containing %q", tc.url, err, tc.wantErr)
			}
		})
	}
	if _, err := langchain.NewOllama(langchain.OllamaConfig{}); err == nil || !strings.Contains(err.Error(), "no model name") {
		t.Errorf("NewOllama without a model: error = %v; want one naming the model", err)
	}
	if _, err := langchain.NewOllama(langchain.OllamaConfig{Model: "m"}); err != nil {
		t.Errorf("NewOllama with the default URL: %v", err)
	}
}

func TestOllamaConfigFromEnv(t *testing.T) {
	tests := []struct {
		host, in, want string
	}{
		{host: "10.0.0.5:11434", want: "http://10.0.0.5:11434"},
		{host: "https://ollama.example", want: "https://ollama.example"},
		{host: "10.0.0.5:11434", in: "http://flag:1", want: "http://flag:1"},
		{host: "", want: ""},
	}
	for _, tc := range tests {
		getenv := func(k string) string {
			if k == "OLLAMA_HOST" {
				return tc.host
			}
			return ""
		}
		got := langchain.OllamaConfigFromEnv(langchain.OllamaConfig{URL: tc.in}, getenv)
		if got.URL != tc.want {
			t.Errorf("OLLAMA_HOST=%q, URL %q: got %q, want %q", tc.host, tc.in, got.URL, tc.want)
		}
	}
}

// Ollama says why it stopped in done_reason, which langchaingo's client
// drops: the Role reads it from the body, so an answer the token limit cut
// is reported as such (issue #38) and a plain stop as "stop".
func TestOllamaReportsDoneReason(t *testing.T) {
	for _, reason := range []string{"length", "stop"} {
		t.Run(reason, func(t *testing.T) {
			url := ollamaServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/x-ndjson")
				io.WriteString(w, `{"model":"llama3.1","message":{"role":"assistant","content":"## Gap Res"},"done":false}`+"\n")
				io.WriteString(w, `{"model":"llama3.1","message":{"role":"assistant","content":"olution"},"done":true,"done_reason":"`+reason+`","eval_count":9}`+"\n")
			})
			resp, err := newOllama(t, url).Respond(context.Background(), request())
			if err != nil {
				t.Fatalf("Respond: %v", err)
			}
			if resp.FinishReason != reason || resp.Content != "## Gap Resolution" {
				t.Errorf("got finish reason %q, content %q; want %q", resp.FinishReason, resp.Content, reason)
			}
		})
	}
}
