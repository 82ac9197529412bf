package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/internal/termtext/termtexttest"
	"github.com/refine-spec/refine/store/memory"
)

// refine_status's text, which the client's model reads and a client may
// print, shows the hostile corpus by the escape policy; the structured
// content keeps it verbatim, as data (issue #39: the text passed ESC,
// C1 and U+202E to the agent and the user's terminal). So does the form
// an elicitation shows the user.
func TestToolTextShowsHostileTextByThePolicy(t *testing.T) {
	ctx := context.Background()
	b := memory.NewBackend()
	id, st, err := b.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	status := termtexttest.Session(t, st)
	closeStore(st)
	s := newServer(t, Config{Backend: b})
	c := connect(t, s, clientOpts{})
	rep, res := c.call(ctx, "refine_status", map[string]any{"session_id": id})
	if res.IsError {
		t.Fatal(textOf(res))
	}
	termtexttest.Check(t, "refine_status text", termtexttest.Text, textOf(res))
	if len(rep.OpenGaps) == 0 || rep.OpenGaps[0] != "GAP-EVIL-001 (HIGH, "+string(status.Gaps[0].State)+"): "+termtexttest.Title {
		t.Errorf("structured content does not keep the title verbatim: %q", rep.OpenGaps)
	}
	_, res = c.call(ctx, "refine_sessions", map[string]any{})
	termtexttest.NoRaw(t, "refine_sessions text", textOf(res))

	p := elicitParams(status.Pending[0])
	termtexttest.NoRaw(t, "elicitation message", p.Message)
	if want := "Offset <U+202E>DETAVITCA<U+202C>; " + `\x1b[2J`; !strings.Contains(p.Message, want) {
		t.Errorf("elicitation message does not show %q:\n%s", want, p.Message)
	}
	q := refine.Question{ID: "q", Title: termtexttest.Title, Options: []refine.Option{{Key: "A", Label: termtexttest.Title}}}
	p = elicitParams(q)
	termtexttest.Check(t, "elicitation title", termtexttest.Text, p.Message)
	one := p.RequestedSchema.(map[string]any)["properties"].(map[string]any)[fieldChoice].(map[string]any)["oneOf"].([]any)
	termtexttest.Check(t, "elicitation option", termtexttest.Text, one[0].(map[string]any)["title"].(string))
}
