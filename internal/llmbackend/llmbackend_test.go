package llmbackend

import (
	"strings"
	"testing"

	"github.com/refine-spec/refine/llm/replay"
)

func TestRoles(t *testing.T) {
	dir := t.TempDir()
	eng, rev, err := Choice{Kind: "replay", ReplayDir: dir}.Roles(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := eng.(*replay.Role); !ok || eng != rev {
		t.Errorf("replay gave %T and %T, want one *replay.Role for both", eng, rev)
	}
	for _, tc := range []struct {
		c    Choice
		want string
	}{
		{Choice{Kind: "replay"}, "--llm replay needs --replay DIR"},
		{Choice{Kind: "replay", ReplayDir: dir + "/missing"}, "not a folder"},
		{Choice{Kind: "gpt"}, `--llm "gpt": want openai, ollama or replay`},
		{Choice{Kind: "openai"}, "set --model (or --engineer-model and --reviewer-model) or OPENAI_MODEL"},
		{Choice{Kind: "openai", Model: "m"}, "set OPENAI_API_KEY, or --base-url"},
		{Choice{Kind: "ollama"}, "set --model (or --engineer-model and --reviewer-model)"},
	} {
		_, _, err := tc.c.Roles(func(string) string { return "" })
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error containing %q", tc.c, err, tc.want)
		}
	}
}
