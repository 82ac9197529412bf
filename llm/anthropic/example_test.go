package anthropic_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/llm/anthropic"
	"github.com/refine-spec/refine/llm/anthropic/anthropictest"
)

// A Role over a loopback fake of the API: the second call reads the
// stable prefix (system text and spec) from the prompt cache.
func ExampleNew() {
	srv := anthropictest.NewServer()
	defer srv.Close()
	role, err := anthropic.New(anthropic.Config{BaseURL: srv.URL, Model: "claude-sonnet-4-5", APIKey: "key"})
	if err != nil {
		fmt.Println(err)
		return
	}
	req := llm.Request{Role: llm.Engineer, Stable: 1, Messages: []llm.Message{
		{Role: "system", Content: "You are the Engineer.\n\n" + strings.Repeat("The spec. ", 500)},
		{Role: "user", Content: "Resolve GAP-API-001."},
	}}
	for range 2 {
		resp, err := role.Respond(context.Background(), req)
		fmt.Println(resp.Usage.PromptTokens, resp.Usage.CacheWriteTokens, resp.Usage.CachedPromptTokens, err)
	}
	// Output:
	// 1261 1256 0 <nil>
	// 1261 0 1256 <nil>
}
