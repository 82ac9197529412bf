package web

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/store/memory"
)

// The session page and the API say which provider and model play each
// role, and what the prompt cache saved.
func TestConsoleShowsRoleModelsAndCacheUsage(t *testing.T) {
	ctx := context.Background()
	b := memory.NewBackend()
	t.Cleanup(func() { b.Close() })
	id, st, err := b.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	usage := refine.Usage{PromptTokens: 2000, CompletionTokens: 100, CachedPromptTokens: 1500, CacheWriteTokens: 200}
	eng := refinetest.Replies(refinetest.Reply{Content: refinetest.EngineerOutput("GAP-TEST-001"), Usage: usage})
	rev := refinetest.Replies(refinetest.Reply{Content: refinetest.ReviewerOutput(1, []gap.ID{"GAP-TEST-001"}), Usage: usage})
	cfg := refinetest.Config(eng, rev, &refinetest.Asker{DefaultAfterScript: true})
	cfg.Store = st
	cfg.Backend = refine.BackendInfo{Kind: "openai", EngineerKind: "anthropic", EngineerModel: "claude-eng", ReviewerModel: "gpt-rev"}
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(ctx); err != nil {
		t.Fatal(err)
	}
	closeStore(st)
	srv, err := New(Config{Backend: b})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	for path, want := range map[string][]string{
		"/sessions/" + id: {"<dt>Engineer</dt><dd>anthropic:claude-eng</dd>", "<dt>Reviewer</dt><dd>openai:gpt-rev</dd>",
			"Prompt cache: 3000 tokens read, 400 written"},
		"/api/sessions/" + id: {`"cached_prompt_tokens": 3000`, `"cache_write_tokens": 400`, `"provider": "anthropic"`, `"model": "gpt-rev"`},
	} {
		resp, err := http.Get(hs.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		var body strings.Builder
		_, _ = io.Copy(&body, resp.Body)
		resp.Body.Close()
		for _, w := range want {
			if !strings.Contains(body.String(), w) {
				t.Errorf("%s lacks %q", path, w)
			}
		}
	}
}
