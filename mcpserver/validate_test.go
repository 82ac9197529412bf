package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// refine_validate reads an answer as a session does: the same
// normalization (a fence around the answer, a demoted header), reported in
// the structured result and the text, as `refine validate --json` does.
func TestValidateToolNormalizes(t *testing.T) {
	ctx := context.Background()
	s := newServer(t, Config{})
	c := connect(t, s, clientOpts{protocol: "2025-11-25"})
	answer := "```markdown\n### Gap Resolution — GAP-API-001\n\n**Confidence: HIGH**\n\nPages use an opaque cursor.\n\n" +
		"### New Gaps\n\n- GAP-API-009 (LOW): Cursor expiry\n```\n"
	args, _ := json.Marshal(map[string]any{"role": "engineer", "content": answer})
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "refine_validate", Arguments: json.RawMessage(args)})
	if err != nil || res.IsError {
		t.Fatalf("%v %s", err, textOf(res))
	}
	b, _ := json.Marshal(res.StructuredContent)
	var got struct {
		Success    bool `json:"success"`
		Sections   []struct{ ID, Confidence string }
		NewGaps    []struct{ ID string } `json:"new_gaps"`
		Normalized []struct{ Kind string }
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !got.Success || len(got.Sections) != 1 || got.Sections[0].Confidence != "HIGH" || len(got.NewGaps) != 1 || got.NewGaps[0].ID != "GAP-API-009" {
		t.Errorf("structured result %s", b)
	}
	kinds := map[string]bool{}
	for _, n := range got.Normalized {
		kinds[n.Kind] = true
	}
	for _, k := range []string{"wrapper-fence", "heading-level", "separator", "confidence-form", "section-title"} {
		if !kinds[k] {
			t.Errorf("normalized lacks %s: %s", k, b)
		}
	}
	if text := textOf(res); !strings.Contains(text, "NORMALIZED: wrapper-fence ×1") {
		t.Errorf("text %q", text)
	}
}
