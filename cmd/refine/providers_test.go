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

// mixedRun runs the basic scenario with the Engineer on a fake Anthropic
// API and the Reviewer on a fake OpenAI API; extra are more flags.
func mixedRun(t *testing.T, ant *anthropictest.Server, oaiURL, dir string, extra ...string) (int, string, string) {
	t.Helper()
	c, out, errb := newTestCLI()
	c.getenv = mixedEnv
	args := append([]string{"run", "--spec", "testdata/basic/spec.md", "--gaps", "testdata/basic/gaps.md", "--dir", dir,
		"--engineer", "anthropic:claude-eng", "--reviewer", "openai:rev",
		"--engineer-base-url", ant.URL, "--reviewer-base-url", oaiURL + "/v1", "--backoff-base", "5ms", "--no-integrate"}, extra...)
	code := c.main(context.Background(), args)
	return code, out.String(), errb.String()
}

func mixedEnv(k string) string {
	return map[string]string{"ANTHROPIC_API_KEY": "anthropic-key", "OPENAI_API_KEY": "test-key"}[k]
}

// checkMixedSession checks what status, status.md and the servers show of
// a finished mixed session.
func checkMixedSession(t *testing.T, ant *anthropictest.Server, dir string) {
	t.Helper()
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
	c, out, errb := newTestCLI()
	if code := c.main(context.Background(), []string{"status", "--dir", dir, "--json"}); code != exitOK {
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

// The Engineer on Anthropic, the Reviewer on OpenAI: the run completes
// through a 529 and a 429, and status shows which model plays which role
// and what the prompt cache saved.
func TestRunEngineerAnthropicReviewerOpenAI(t *testing.T) {
	ant := fakeAnthropic(t)
	oai, _ := fakeOpenAI(t)
	dir := filepath.Join(t.TempDir(), "s")
	code, out, errb := mixedRun(t, ant, oai.URL, dir, "--auto")
	if code != exitOK {
		t.Fatalf("run exit %d\n%s\n%s", code, out, errb)
	}
	for _, want := range []string{"COMPLETE", "engineer: anthropic:claude-eng; reviewer: openai:rev", "prompt cache:"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	for _, want := range []string{"overloaded", "rate limited"} {
		if !strings.Contains(errb, want) {
			t.Errorf("progress lacks the %s retry:\n%s", want, errb)
		}
	}
	checkMixedSession(t, ant, dir)
}

// A mixed session paused at a question is resumed by a new process
// without any backend flag: the session says which provider and model
// play each role, and where they are.
func TestResumeKeepsPerRoleProviders(t *testing.T) {
	ant := fakeAnthropic(t)
	oai, _ := fakeOpenAI(t)
	dir := filepath.Join(t.TempDir(), "s")
	code, out, errb := mixedRun(t, ant, oai.URL, dir) // no --auto: the first question pauses it
	if code != exitPaused {
		t.Fatalf("run exit %d, want 3 (paused)\n%s\n%s", code, out, errb)
	}
	c, outb, errbb := newTestCLI()
	c.getenv = mixedEnv
	if code := c.main(context.Background(), []string{"resume", "--dir", dir, "--auto", "--backoff-base", "5ms"}); code != exitOK {
		t.Fatalf("resume exit %d\n%s\n%s", code, outb, errbb)
	}
	if !strings.Contains(outb.String(), "engineer: anthropic:claude-eng; reviewer: openai:rev") {
		t.Errorf("resume summary lacks the roles:\n%s", outb)
	}
	checkMixedSession(t, ant, dir)
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
