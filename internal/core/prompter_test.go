package core

import (
	"strings"
	"testing"

	"github.com/refine-spec/refine/exemplar"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/llm"
)

// TestPrompterPlacesTheSpec builds Engineer prompts from a state and a
// config alone (no Store, no session): the spec goes whole into the stable
// prefix when it fits in half of PromptBudget, else its excerpt for the
// gaps goes into the user message; ExcerptPrompts keeps the system text
// alone in front.
func TestPrompterPlacesTheSpec(t *testing.T) {
	small := "# Spec\n\n## Retries\n\nRetries are open (GAP-PT-001).\n"
	large := "# Spec\n\n## Retries\n\nRetries are open (GAP-PT-001).\n\n## Other\n\n" + strings.Repeat("Unrelated prose. ", 200) + "\n"
	st := &state.State{Current: &state.RoundState{N: 2, Engineer: state.RolePhase{Budget: 3}}}
	if err := st.Ledger.Add(gap.Gap{ID: "GAP-PT-001", Title: "Retry policy", Severity: gap.High}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		source     string
		excerpt    bool
		wholeSpec  bool // the stable prefix carries the spec
		userHas    []string
		userHasNot []string
	}{
		{"small spec whole in the prefix", small, false, true, []string{"GAP-PT-001 (HIGH): Retry policy"}, []string{"## Spec excerpt"}},
		{"large spec as an excerpt", large, false, false, []string{"## Spec excerpt", "Retries are open (GAP-PT-001)."}, []string{"Unrelated prose."}},
		{"excerpt prompts", small, true, false, []string{"## Spec excerpt", "Retries are open (GAP-PT-001)."}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &Params{Settings: Settings{PromptBudget: 1000}, ExcerptPrompts: tt.excerpt}
			p := Prompter{St: st, Cfg: cfg, Tok: exemplar.CharTokenizer{}}
			stable, user, err := p.Build(llm.Engineer, 1, []gap.ID{"GAP-PT-001"}, nil, PromptInputs{Source: tt.source})
			if err != nil {
				t.Fatal(err)
			}
			if len(stable) == 0 || !strings.HasPrefix(stable[0].Content, EngineerSystem) {
				t.Fatalf("stable prefix %q does not start with the Engineer's system text", stable)
			}
			if got := strings.Contains(stable[0].Content, StableSpecHeading); got != tt.wholeSpec {
				t.Errorf("stable prefix carries the whole spec = %v, want %v", got, tt.wholeSpec)
			}
			if tt.excerpt && (len(stable) != 1 || stable[0].Content != EngineerSystem) {
				t.Errorf("ExcerptPrompts: stable prefix = %q, want the system text alone", stable)
			}
			for _, s := range tt.userHas {
				if !strings.Contains(user, s) {
					t.Errorf("user message lacks %q:\n%s", s, user)
				}
			}
			for _, s := range tt.userHasNot {
				if strings.Contains(user, s) {
					t.Errorf("user message has %q:\n%s", s, user)
				}
			}
		})
	}
}
