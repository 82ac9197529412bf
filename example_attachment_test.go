package refine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/refinetest"
)

// exampleBetween returns the example block of a retry prompt: the text
// between "Source: …" + its rule line and the closing heavy rule.
func exampleBetween(t *testing.T, prompt string) (source, example string) {
	t.Helper()
	i := strings.Index(prompt, "Source: ")
	if i < 0 {
		t.Fatalf("retry prompt has no Source: line:\n%s", prompt)
	}
	rest := prompt[i+len("Source: "):]
	nl := strings.IndexByte(rest, '\n')
	source, rest = rest[:nl], rest[nl+1:]
	rest = rest[strings.IndexByte(rest, '\n')+1:] // the light rule
	end := strings.Index(rest, "═══")
	if end < 0 {
		t.Fatalf("no closing rule")
	}
	return source, strings.TrimSpace(rest[:end])
}

func TestRetryAttachesTemplateAndLogsIt(t *testing.T) {
	eng := refinetest.Script("no headers here", engineerDoc("GAP-TEST-001"))
	rev := refinetest.Script(reviewerDoc(1, "GAP-TEST-001"))
	cfg := refinetest.Config(eng, rev, auto())
	run(t, cfg)
	prompt := get(t, cfg, "round_001/prompts/engineer-2.md")
	for _, want := range []string{"RETRY ATTEMPT 1 of 2", "FORMAT CORRECTION REQUIRED:", "EXAMPLE OUTPUT"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("retry prompt lacks %q", want)
		}
	}
	_, ex := exampleBetween(t, prompt)
	if n := (refine.CharTokenizer{}).Count(ex); n == 0 || n > 2000 {
		t.Errorf("example is %d tokens, want 1..2000", n)
	}
	status := get(t, cfg, "status.md")
	for _, want := range []string{"## Example Attachment Log", "### Round 1 - Engineer Retry 1", "Tier 3", "### Example Source Statistics"} {
		if !strings.Contains(status, want) {
			t.Errorf("status.md lacks %q:\n%s", want, status)
		}
	}
}

func TestCanonicalExampleFromSpecSection7IsTruncatedToBudget(t *testing.T) {
	huge := strings.Repeat("The retry schedule is exponential with full jitter and a cap. ", 1700) // ~100 KB
	spec := "# Orders API\n\nPagination is unspecified.\n\n## 7. Examples\n\n### 7.1 Engineer output\n\n```markdown\n## Gap Resolution: GAP-XXX\n\n**Confidence:** HIGH\n\n### Proposed Solution\n" +
		huge + "\n\n### Examples\nOne.\n\n### Trade-offs\n**Pros:** a\n**Cons:** b\n\n### New Gaps Introduced\n- None\n```\n"
	eng := refinetest.Script("no headers here", engineerDoc("GAP-TEST-001"))
	rev := refinetest.Script(reviewerDoc(1, "GAP-TEST-001"))
	cfg := refinetest.Config(eng, rev, auto())
	cfg.Spec = spec
	s, out := run(t, cfg)
	if out.Status != refine.StatusComplete {
		t.Fatalf("outcome %+v", out)
	}
	source, ex := exampleBetween(t, get(t, cfg, "round_001/prompts/engineer-2.md"))
	if !strings.Contains(strings.ToLower(source), "canonical") {
		t.Errorf("source = %q, want the canonical example", source)
	}
	if n := (refine.CharTokenizer{}).Count(ex); n > 2000 || !strings.Contains(ex, "## Gap Resolution:") {
		t.Errorf("canonical example is %d tokens (want ≤ 2000) or lost its header", n)
	}
	if !strings.Contains(get(t, cfg, "status.md"), "Tier 1") {
		t.Errorf("status.md attachment log lacks Tier 1")
	}
	// The initial prompt carries the canonical format within 1000 tokens.
	first := get(t, cfg, "round_001/prompts/engineer-1.md")
	i := strings.Index(first, "## Format example")
	if i < 0 {
		t.Fatalf("initial prompt has no format example")
	}
	block := first[i:]
	if j := strings.Index(block, "## Spec excerpt"); j > 0 {
		block = block[:j]
	}
	if j := strings.Index(block, "<!-- user -->"); j > 0 { // the example ends the stable prefix
		block = block[:j]
	}
	if n := (refine.CharTokenizer{}).Count(block); n > 1100 {
		t.Errorf("initial format block is %d tokens, budget 1000", n)
	}
	_ = s
	_ = context.Background()
}
