package mcpserver

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/refine-spec/refine"
)

// refine_start without gaps discovers them (DESIGN §19): the discovery
// call goes through sampling like any role call, and the list is
// confirmed by elicitation or, without it, with refine_answer; the demo
// then plays to the same end as when given its gaps.
func TestStartWithoutGapsDiscovers(t *testing.T) {
	for _, elicit := range []bool{true, false} {
		t.Run(fmt.Sprintf("elicitation=%v", elicit), func(t *testing.T) {
			ctx := context.Background()
			s := newServer(t, Config{})
			o := clientOpts{sampling: true}
			if elicit {
				o.elicit = scripted
			}
			c := connect(t, s, o)
			args := startArgs(t)
			delete(args, "gaps")
			rep, res := c.call(ctx, "refine_start", args)
			if res.IsError {
				t.Fatalf("refine_start without gaps: %s", textOf(res))
			}
			var kinds []string
			for i := 0; ; i++ {
				rep = c.untilStops(ctx, rep)
				if len(rep.Pending) == 0 {
					break
				}
				if i > 20 {
					t.Fatalf("still asking after 20 answers: %+v", rep.Pending)
				}
				q := rep.Pending[0]
				kinds = append(kinds, q.Kind)
				if q.Kind == string(refine.KindDiscovery) {
					for _, id := range []string{"GAP-API-001", "GAP-API-005"} {
						if !strings.Contains(q.Body, id) {
							t.Errorf("the discovery question does not list %s:\n%s", id, q.Body)
						}
					}
				}
				a, ok := demoAnswers[fmt.Sprintf("%s/%d", q.Kind, q.Round)]
				if !ok {
					a.Key = q.Default
				}
				var res *mcp.CallToolResult
				rep, res = c.call(ctx, "refine_answer", map[string]any{"session_id": rep.SessionID, "question_id": q.ID, "key": a.Key, "text": a.Text})
				if res.IsError {
					t.Fatalf("refine_answer %s: %s", q.ID, textOf(res))
				}
			}
			c.mu.Lock()
			for _, q := range c.asked {
				kinds = append(kinds, q.Kind)
			}
			c.mu.Unlock()
			if !slices.Contains(kinds, string(refine.KindDiscovery)) {
				t.Fatalf("the gap list was never put to the user (asked %v)", kinds)
			}
			st := checkDemoComplete(t, s, c, rep)
			if len(st.Gaps) != 5 {
				t.Errorf("%d gaps after discovery, want the demo's 5: %+v", len(st.Gaps), st.Gaps)
			}
		})
	}
}
