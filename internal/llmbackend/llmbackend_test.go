package llmbackend

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/llm/anthropic"
	"github.com/refine-spec/refine/llm/langchain"
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
		{Choice{Kind: "gpt"}, `--llm "gpt": want openai, anthropic, ollama or replay`},
		{Choice{Kind: "anthropic", Model: "m"}, "ANTHROPIC_API_KEY"},
		{Choice{Engineer: refine.RoleBackend{Kind: "anthropic", Model: "m"}}, "reviewer: no backend"},
		{Choice{Kind: "openai"}, "set --model (or --engineer-model and --reviewer-model, or --engineer/--reviewer PROVIDER:MODEL) or OPENAI_MODEL"},
		{Choice{Kind: "openai", Model: "m"}, "set OPENAI_API_KEY, or --base-url"},
		{Choice{Kind: "ollama"}, "set --model (or --engineer-model and --reviewer-model"},
	} {
		_, _, err := tc.c.Roles(func(string) string { return "" })
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error containing %q", tc.c, err, tc.want)
		}
	}
}

func TestParseRole(t *testing.T) {
	for in, want := range map[string]refine.RoleBackend{
		"anthropic:claude-sonnet-4-5": {Kind: "anthropic", Model: "claude-sonnet-4-5"},
		"ollama:qwen3:8b":             {Kind: "ollama", Model: "qwen3:8b"},
		"openai":                      {Kind: "openai"},
	} {
		got, err := ParseRole(in)
		if err != nil || got != want {
			t.Errorf("ParseRole(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "gpt:4", ":model"} {
		if _, err := ParseRole(bad); err == nil || !strings.Contains(err.Error(), "PROVIDER:MODEL") {
			t.Errorf("ParseRole(%q) = %v, want a PROVIDER:MODEL error", bad, err)
		}
	}
}

func TestResolvePerRole(t *testing.T) {
	tests := []struct {
		name     string
		c        Choice
		eng, rev refine.RoleBackend
	}{
		{"--llm and --model for both", Choice{Kind: "openai", Model: "m", BaseURL: "http://x"},
			refine.RoleBackend{Kind: "openai", Model: "m", BaseURL: "http://x"}, refine.RoleBackend{Kind: "openai", Model: "m", BaseURL: "http://x"}},
		{"a provider per role; --base-url goes to --llm's", Choice{Kind: "openai", BaseURL: "http://o", Engineer: refine.RoleBackend{Kind: "anthropic", Model: "c"}, ReviewerModel: "g"},
			refine.RoleBackend{Kind: "anthropic", Model: "c"}, refine.RoleBackend{Kind: "openai", Model: "g", BaseURL: "http://o"}},
		{"mixed without --llm: --base-url goes nowhere", Choice{BaseURL: "http://o", Engineer: refine.RoleBackend{Kind: "anthropic", Model: "c"}, Reviewer: refine.RoleBackend{Kind: "openai", Model: "g"}},
			refine.RoleBackend{Kind: "anthropic", Model: "c"}, refine.RoleBackend{Kind: "openai", Model: "g"}},
		{"own base URLs", Choice{Engineer: refine.RoleBackend{Kind: "anthropic", Model: "c", BaseURL: "http://a"}, Reviewer: refine.RoleBackend{Kind: "openai", Model: "g", BaseURL: "http://o"}},
			refine.RoleBackend{Kind: "anthropic", Model: "c", BaseURL: "http://a"}, refine.RoleBackend{Kind: "openai", Model: "g", BaseURL: "http://o"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := []refine.RoleBackend{tt.c.Resolve(refine.Engineer), tt.c.Resolve(refine.Reviewer)}
			if diff := cmp.Diff([]refine.RoleBackend{tt.eng, tt.rev}, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestRolesMixProviders(t *testing.T) {
	env := map[string]string{"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"}
	c := Choice{Engineer: refine.RoleBackend{Kind: "anthropic", Model: "claude-x"}, Reviewer: refine.RoleBackend{Kind: "openai", Model: "gpt-y"}}
	eng, rev, err := c.Roles(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if a, ok := eng.(*anthropic.Role); !ok || a.Model() != "claude-x" {
		t.Errorf("engineer is %T", eng)
	}
	if _, ok := rev.(*langchain.Role); !ok {
		t.Errorf("reviewer is %T", rev)
	}
}

func FuzzParseRole(f *testing.F) {
	for _, s := range []string{"anthropic:claude", "ollama:qwen3:8b", "openai", "", ":", "replay:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rb, err := ParseRole(s)
		if err != nil {
			return
		}
		if !isProvider(rb.Kind) || !strings.HasSuffix(strings.TrimSpace(s), rb.Model) {
			t.Fatalf("ParseRole(%q) = %+v", s, rb)
		}
	})
}
