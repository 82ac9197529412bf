package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// realModelServer is a loopback OpenAI-compatible server that answers the
// basic scenario's recorded answers as chat models write them: every one
// in a ```markdown fence with a preamble (the commonest habit), and the
// Engineer's first answer cut by the token limit before its full answer
// comes (finish_reason "length", then the whole answer). It counts the
// requests and keeps each request's max_tokens.
func realModelServer(t *testing.T) (*httptest.Server, func() (int, []int)) {
	t.Helper()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("testdata/basic/replay", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	fenced := func(s string) string {
		return "Here is my answer:\n\n```markdown\n" + s + "\n```\n\nLet me know if you need more.\n"
	}
	first := read("engineer-001.md")
	type answer struct{ content, finish string }
	scripts := map[string][]answer{
		"eng": {{fenced(first[:len(first)/2]), "length"}, {fenced(first), "stop"},
			{fenced(read("engineer-002.md")), "stop"}, {fenced(read("engineer-003.md")), "stop"}},
		"rev": {{fenced(read("reviewer-001.md")), "stop"}, {fenced(read("reviewer-002.md")), "stop"}},
	}
	var mu sync.Mutex
	requests := 0
	var maxTokens []int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		requests++
		var body struct {
			Model     string `json:"model"`
			MaxTokens int    `json:"max_tokens"`
			MaxCompl  int    `json:"max_completion_tokens"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		maxTokens = append(maxTokens, max(body.MaxTokens, body.MaxCompl))
		queue := scripts[body.Model]
		if len(queue) == 0 {
			http.Error(w, `{"error":{"message":"script exhausted"}}`, http.StatusBadRequest)
			return
		}
		a := queue[0]
		scripts[body.Model] = queue[1:]
		resp := map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "created": 1767225600, "model": body.Model,
			"choices": []map[string]any{{"index": 0, "finish_reason": a.finish, "message": map[string]any{"role": "assistant", "content": a.content}}},
			"usage":   map[string]any{"prompt_tokens": 1200, "completion_tokens": 300, "total_tokens": 1500},
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
	}))
	t.Cleanup(srv.Close)
	return srv, func() (int, []int) {
		mu.Lock()
		defer mu.Unlock()
		return requests, append([]int(nil), maxTokens...)
	}
}

// Issue #38 end to end: a session played by answers written as chat
// models write them (fenced, with a preamble) reads them as meant and
// completes exactly as the recorded session does in 5 calls; the answer
// the token limit cut costs one more call, whose cap is twice the cut
// answer's tokens; status --json and status.md count what was normalized
// per role.
func TestRunReadsWhatRealModelsWrite(t *testing.T) {
	ctx := context.Background()
	srv, seen := realModelServer(t)
	dir := filepath.Join(t.TempDir(), "s")
	c, out, errb := newTestCLI()
	c.getenv = func(k string) string {
		if k == "OPENAI_API_KEY" {
			return "test-key"
		}
		return ""
	}
	code := c.main(ctx, []string{"run", "--spec", "testdata/basic/spec.md", "--gaps", "testdata/basic/gaps.md", "--dir", dir,
		"--llm", "openai", "--base-url", srv.URL + "/v1", "--engineer-model", "eng", "--reviewer-model", "rev", "--auto", "--no-integrate"})
	if code != exitOK {
		t.Fatalf("run exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errb)
	}
	requests, caps := seen()
	if requests != 6 {
		t.Errorf("server saw %d requests, want 6 (the 5 of the recorded session and one for the cut answer)", requests)
	}
	if len(caps) < 2 || caps[1] != 600 {
		t.Errorf("max_tokens of the requests %v: the retry after the cut answer (300 tokens) should ask for 600", caps)
	}
	c, out, _ = newTestCLI()
	c.main(ctx, []string{"status", "--dir", dir, "--json"})
	var st struct {
		Outcome    string `json:"outcome"`
		Round      int    `json:"round"`
		Normalized []struct {
			Role, Kind     string
			Count, Answers int
		} `json:"normalized"`
	}
	if err := json.Unmarshal(out.Bytes(), &st); err != nil {
		t.Fatal(err)
	}
	if st.Outcome != "COMPLETE" || st.Round != 2 {
		t.Errorf("outcome %s after round %d, want COMPLETE after round 2 as recorded", st.Outcome, st.Round)
	}
	fences := map[string]int{}
	for _, n := range st.Normalized {
		if n.Kind == "wrapper-fence" {
			fences[n.Role] = n.Answers
		}
	}
	if fences["engineer"] < 2 || fences["reviewer"] != 2 {
		t.Errorf("normalized wrapper fences per role %v (all %+v), want every answer's", fences, st.Normalized)
	}
	md, err := os.ReadFile(filepath.Join(dir, "status.md"))
	if err != nil || !strings.Contains(string(md), "## Normalized Answers") || !strings.Contains(string(md), "| engineer | wrapper-fence |") {
		t.Errorf("status.md lacks the normalization counts:\n%s", md)
	}
	// The Reviewer's prompt quoted the Engineer's answer as read: no fence.
	b, err := os.ReadFile(filepath.Join(dir, "round_001", "engineer.md"))
	if err != nil || strings.Contains(string(b), "```markdown") || !strings.Contains(string(b), "## Gap Resolution: GAP-HOOK-001") {
		t.Errorf("round_001/engineer.md is not the answer as read:\n%s", b)
	}
}
