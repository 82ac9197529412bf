package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/refine-spec/refine/llm/anthropic/anthropictest"
)

// fakeAnthropic is a loopback Messages API answering the basic scenario's
// Engineer outputs in order, after refusing the first call with 529
// overloaded. It caches prefixes from 1 token on (the basic spec is tiny).
func fakeAnthropic(t *testing.T) *anthropictest.Server {
	t.Helper()
	var mu sync.Mutex
	var queue []string
	for _, n := range []string{"engineer-001.md", "engineer-002.md", "engineer-003.md"} {
		b, err := os.ReadFile(filepath.Join("testdata/basic/replay", n))
		if err != nil {
			t.Fatal(err)
		}
		queue = append(queue, string(b))
	}
	srv := anthropictest.NewServer()
	srv.Key = "anthropic-key"
	srv.MinCacheTokens = 1
	srv.Failures = []anthropictest.Failure{{Status: 529, Type: "overloaded_error"}}
	srv.Answer = func(anthropictest.Call) string {
		mu.Lock()
		defer mu.Unlock()
		if len(queue) == 0 {
			return "script exhausted"
		}
		a := queue[0]
		queue = queue[1:]
		return a
	}
	t.Cleanup(srv.Close)
	return srv
}

// The Engineer on Anthropic, the Reviewer on OpenAI: the run survives a
// 529 and a 429, a resume in a new process rebuilds both roles from the
// session, and status shows which model plays which role and what the
// prompt cache saved.
func TestRunEngineerAnthropicReviewerOpenAI(t *testing.T) {
	ctx := context.Background()
	ant := fakeAnthropic(t)
	oai, _ := fakeOpenAI(t)
	dir := filepath.Join(t.TempDir(), "s")
	env := map[string]string{"ANTHROPIC_API_KEY": "wrong", "OPENAI_API_KEY": "test-key"}
	getenv := func(k string) string { return env[k] }

	// A bad Anthropic key fails the run, with the state kept.
	c, out, errb := newTestCLI()
	c.getenv = getenv
	code := c.main(ctx, []string{"run", "--spec", "testdata/basic/spec.md", "--gaps", "testdata/basic/gaps.md", "--dir", dir,
		"--engineer", "anthropic:claude-eng", "--reviewer", "openai:rev",
		"--engineer-base-url", ant.URL, "--reviewer-base-url", oai.URL + "/v1", "--auto", "--backoff-base", "5ms"})
	if code != exitFailed || !strings.Contains(errb.String(), "ANTHROPIC_API_KEY") || !strings.Contains(errb.String(), "refine resume --dir") {
		t.Fatalf("run with a bad key: exit %d, want 1 naming ANTHROPIC_API_KEY and resume\n%s\n%s", code, out, errb)
	}

	// A new process with the right key: no backend flags, the session says.
	env["ANTHROPIC_API_KEY"] = "anthropic-key"
	c, out, errb = newTestCLI()
	c.getenv = getenv
	if code := c.main(ctx, []string{"resume", "--dir", dir, "--auto", "--backoff-base", "5ms"}); code != exitOK {
		t.Fatalf("resume exit %d\n%s\n%s", code, out, errb)
	}
	for _, want := range []string{"COMPLETE", "engineer: anthropic:claude-eng; reviewer: openai:rev", "prompt cache:"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("resume summary lacks %q:\n%s", want, out)
		}
	}
	for _, want := range []string{"overloaded", "rate limited"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("progress lacks the %s retry:\n%s", want, errb)
		}
	}

	// The Engineer's calls carried the whole spec in a cached system block.
	spec, _ := os.ReadFile("testdata/basic/spec.md")
	var answered int
	for _, call := range ant.Calls() {
		if call.Usage == (anthropictest.Usage{}) {
			continue // refused
		}
		answered++
		if call.Model != "claude-eng" || len(call.System) == 0 || !call.System[0].Cached ||
			!strings.Contains(call.System[0].Text, strings.TrimSpace(string(spec))) {
			t.Errorf("engineer call: model %q, system %+v: want claude-eng and the whole spec in a cached block", call.Model, call.System)
		}
	}
	if answered != 3 {
		t.Errorf("the Anthropic server answered %d calls, want 3", answered)
	}

	c, out, errb = newTestCLI()
	if code := c.main(ctx, []string{"status", "--dir", dir, "--json"}); code != exitOK {
		t.Fatalf("status exit %d: %s", code, errb)
	}
	var st struct {
		Outcome string `json:"outcome"`
		Roles   map[string]struct {
			Provider, Model string
		} `json:"roles"`
		Usage struct {
			Cached int `json:"cached_prompt_tokens"`
			Writes int `json:"cache_write_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(out.Bytes(), &st); err != nil {
		t.Fatal(err)
	}
	if st.Outcome != "COMPLETE" || st.Roles["engineer"].Provider != "anthropic" || st.Roles["engineer"].Model != "claude-eng" ||
		st.Roles["reviewer"].Provider != "openai" || st.Roles["reviewer"].Model != "rev" {
		t.Errorf("status = %+v, want COMPLETE with anthropic:claude-eng and openai:rev", st)
	}
	total := ant.Total()
	if st.Usage.Cached != total.CacheReadTokens || st.Usage.Writes != total.CacheWriteTokens || st.Usage.Cached == 0 {
		t.Errorf("status cache usage %+v, the server billed %+v", st.Usage, total)
	}
	md, err := os.ReadFile(filepath.Join(dir, "status.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| Cached (read) | Cache writes |", "Models: Engineer: anthropic:claude-eng; Reviewer: openai:rev"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("status.md lacks %q", want)
		}
	}
}

func TestProviderFlagErrors(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--engineer", "anthropic:m"}, "--llm (or --engineer and --reviewer) are required"},
		{[]string{"--engineer", "gpt:m", "--reviewer", "openai:m"}, `--engineer "gpt:m": want PROVIDER:MODEL`},
	} {
		c, _, errb := newTestCLI()
		args := append([]string{"run", "--spec", "testdata/basic/spec.md", "--gaps", "testdata/basic/gaps.md", "--dir", t.TempDir()}, tt.args...)
		if code := c.main(ctx, args); code != exitUsage || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, code, errb, tt.want)
		}
	}
}
