package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fakeOpenAI is a loopback OpenAI-compatible server: it answers chat
// completions for model "eng" and "rev" from the basic replay scenario, in
// order, after refusing the very first request with 429.
func fakeOpenAI(t *testing.T) (*httptest.Server, *int) {
	t.Helper()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("testdata/basic/replay", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	scripts := map[string][]string{
		"eng": {read("engineer-001.md"), read("engineer-002.md"), read("engineer-003.md")},
		"rev": {read("reviewer-001.md"), read("reviewer-002.md")},
	}
	var mu sync.Mutex
	requests := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		requests++
		if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
			http.NotFound(w, r)
			return
		}
		if r.Header.Get("Authorization") != "Bearer test-key" {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":{"message":"invalid api key","type":"invalid_request_error"}}`)
			return
		}
		if requests == 1 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"error":{"message":"rate limited","type":"rate_limit"}}`)
			return
		}
		var body struct {
			Model string `json:"model"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		queue := scripts[body.Model]
		if len(queue) == 0 {
			http.Error(w, `{"error":{"message":"script exhausted for `+body.Model+`"}}`, http.StatusBadRequest)
			return
		}
		content := queue[0]
		scripts[body.Model] = queue[1:]
		resp := map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "created": 1767225600, "model": body.Model,
			"choices": []map[string]any{{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": content}}},
			"usage":   map[string]any{"prompt_tokens": 1200, "completion_tokens": 300, "total_tokens": 1500},
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
	}))
	t.Cleanup(srv.Close)
	return srv, &requests
}

func TestRunAgainstLoopbackOpenAIWith429(t *testing.T) {
	ctx := context.Background()
	srv, requests := fakeOpenAI(t)
	dir := filepath.Join(t.TempDir(), "s")
	c, out, errb := newTestCLI()
	c.getenv = func(k string) string {
		if k == "OPENAI_API_KEY" {
			return "test-key"
		}
		return ""
	}
	code := c.main(ctx, []string{"run", "--spec", "testdata/basic/spec.md", "--gaps", "testdata/basic/gaps.md", "--dir", dir,
		"--llm", "openai", "--base-url", srv.URL + "/v1", "--engineer-model", "eng", "--reviewer-model", "rev", "--auto", "--backoff-base", "10ms", "--no-integrate"})
	if code != exitOK {
		t.Fatalf("run exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errb)
	}
	if *requests != 6 {
		t.Errorf("server saw %d requests, want 6 (one 429 then five answers)", *requests)
	}
	if !strings.Contains(errb.String(), "transport error, retrying") {
		t.Errorf("progress did not report the 429 retry:\n%s", errb)
	}
	c, out, _ = newTestCLI()
	c.main(ctx, []string{"status", "--dir", dir, "--json"})
	var st struct {
		Outcome string `json:"outcome"`
		Round   int    `json:"round"`
		Usage   struct {
			PromptTokens, CompletionTokens, Calls int
		} `json:"usage"`
	}
	if err := json.Unmarshal(out.Bytes(), &st); err != nil {
		t.Fatal(err)
	}
	var raw map[string]map[string]int
	json.Unmarshal(out.Bytes(), &raw)
	if st.Outcome != "COMPLETE" || st.Round != 2 || raw["usage"]["prompt_tokens"] != 5*1200 || raw["usage"]["calls"] != 6 {
		t.Errorf("status = %+v usage %v", st, raw["usage"])
	}
}

func TestRunOpenAIFailuresAreClearAndResumable(t *testing.T) {
	ctx := context.Background()
	srv, _ := fakeOpenAI(t)
	tests := []struct {
		name, baseURL, key string
		want               []string
	}{
		{"bad key", srv.URL + "/v1", "wrong", []string{"401", "API key"}},
		{"unreachable", "http://127.0.0.1:1/v1", "test-key", []string{"127.0.0.1:1"}},
		{"bad base url", "ftp://example", "test-key", []string{"base URL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "s")
			c, out, errb := newTestCLI()
			c.getenv = func(k string) string {
				if k == "OPENAI_API_KEY" {
					return tt.key
				}
				return ""
			}
			args := []string{"run", "--spec", "testdata/basic/spec.md", "--gaps", "testdata/basic/gaps.md", "--dir", dir,
				"--llm", "openai", "--base-url", tt.baseURL, "--model", "eng", "--auto", "--quiet", "--backoff-base", "5ms", "--transport-retries", "2"}
			code := c.main(ctx, args)
			if tt.name == "bad base url" {
				if code != exitUsage {
					t.Errorf("exit %d, want 2", code)
				}
			} else if code != exitFailed {
				t.Errorf("exit %d, want 1\n%s\n%s", code, out, errb)
			}
			for _, w := range tt.want {
				if !strings.Contains(errb.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, errb)
				}
			}
			if tt.name != "bad base url" {
				if _, err := os.Stat(filepath.Join(dir, "state.json")); err != nil {
					t.Errorf("state not kept: %v", err)
				}
				if !strings.Contains(errb.String(), "refine resume --dir") {
					t.Errorf("no resume hint:\n%s", errb)
				}
			}
		})
	}
}
