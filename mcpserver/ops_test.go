package mcpserver

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/llm/replay"
	"github.com/refine-spec/refine/store/memory"
)

// pausedDemo starts the demo with a client that samples but does not
// elicit, so it pauses at its first question (round 2).
func pausedDemo(t *testing.T) (*Server, *client, report) {
	t.Helper()
	ctx := context.Background()
	s := newServer(t, Config{})
	c := connect(t, s, clientOpts{protocol: "2025-11-25", sampling: true})
	rep, _ := c.call(ctx, "refine_start", startArgs(t))
	rep = c.untilStops(ctx, rep)
	if rep.Outcome != string(refine.StatusPaused) || len(rep.Pending) == 0 {
		t.Fatalf("want a paused session, got %+v", rep)
	}
	return s, c, rep
}

// refine_approve ends the session as USER_APPROVED with the final spec
// written.
func TestApproveWritesTheFinalSpec(t *testing.T) {
	ctx := context.Background()
	s, c, rep := pausedDemo(t)
	rep, res := c.call(ctx, "refine_approve", map[string]any{"session_id": rep.SessionID, "note": "good enough for v1", "acknowledge_high": true})
	if res.IsError {
		t.Fatal(textOf(res))
	}
	for len(rep.Pending) > 0 { // the archive cleanup question, if any
		q := rep.Pending[0]
		rep, _ = c.call(ctx, "refine_answer", map[string]any{"session_id": rep.SessionID, "question_id": q.ID, "key": q.Default})
	}
	if rep.Outcome != string(refine.StatusUserApproved) {
		t.Fatalf("after approve: %+v", rep)
	}
	st, err := s.statusOf(ctx, rep.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(st.Reason, "good enough for v1") {
		t.Errorf("reason %q lacks the note", st.Reason)
	}
	if !strings.Contains(strings.Join(rep.Resources, " "), "final_spec.md") {
		t.Errorf("resources %v lack final_spec.md", rep.Resources)
	}
	if _, res := c.call(ctx, "refine_approve", map[string]any{"session_id": rep.SessionID}); !res.IsError {
		t.Error("approving a finished session succeeded")
	}
}

func TestAbandon(t *testing.T) {
	ctx := context.Background()
	_, c, rep := pausedDemo(t)
	rep, res := c.call(ctx, "refine_abandon", map[string]any{"session_id": rep.SessionID, "note": "wrong spec"})
	if res.IsError || rep.Outcome != string(refine.StatusAbandoned) || rep.Running {
		t.Fatalf("after abandon: %s", textOf(res))
	}
}

// refine_rollback with adjustments undoes the rounds after to_round and
// archives them; a target beyond the rounds played names to_round.
func TestRollback(t *testing.T) {
	ctx := context.Background()
	_, c, rep := pausedDemo(t)
	id := rep.SessionID
	if _, res := c.call(ctx, "refine_rollback", map[string]any{"session_id": id, "to_round": 9, "reason": "r"}); !res.IsError || !strings.Contains(textOf(res), "to_round") {
		t.Errorf("rollback beyond the rounds played: %s", textOf(res))
	}
	rep, res := c.call(ctx, "refine_rollback", map[string]any{"session_id": id, "to_round": 1, "reason": "redo round 2",
		"adjustments": []string{"sign the cursors"}})
	if res.IsError {
		t.Fatal(textOf(res))
	}
	if rep.Round != 1 || !strings.Contains(rep.Note, "rolled back") || !strings.Contains(rep.Note, "round_002_rolled_back_1.tar.gz") {
		t.Errorf("after rollback: round %d, note %q", rep.Round, rep.Note)
	}
}

// Sessions the store holds when the server starts are listed and read
// like those it starts.
func TestExistingSessionsAreResources(t *testing.T) {
	ctx := context.Background()
	b := memory.NewBackend()
	id, st, err := b.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cfg := refine.DefaultConfig()
	r := replay.Dir(filepath.Join(demoDir, "replay"))
	cfg.Store, cfg.Engineer, cfg.Reviewer, cfg.Asker = st, r, r, refine.DeferAsker{}
	cfg.Spec = "# Spec\n\n## Orders\nText.\n"
	cfg.Gaps = []gap.Gap{{ID: "GAP-API-001", Severity: gap.High, Title: "Pagination is unspecified"}}
	if _, err := refine.New(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	closeStore(st)
	s := newServer(t, Config{Backend: b})
	c := connect(t, s, clientOpts{protocol: "2025-11-25"})
	list, err := c.cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, res := range list.Resources {
		found = found || res.URI == uriPrefix+id+"/status.md"
	}
	if !found {
		t.Fatalf("the existing session %s is not listed", id)
	}
	res, err := c.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uriPrefix + id + "/status.md"})
	if err != nil || !strings.Contains(res.Contents[0].Text, "GAP-API-001") {
		t.Fatalf("read status.md: %v", err)
	}
	var out sessionsOutput
	sres, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "refine_sessions", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := json.Marshal(sres.StructuredContent)
	_ = json.Unmarshal(b2, &out)
	if len(out.Sessions) != 1 || out.Sessions[0].ID != id || out.Sessions[0].Running {
		t.Errorf("refine_sessions = %+v", out.Sessions)
	}
}

// One tool call drives a session at a time: a second one says so and
// returns.
func TestOneDriverAtATime(t *testing.T) {
	ctx := context.Background()
	s := newServer(t, Config{})
	second := make(chan report, 1)
	var c2 *client
	c := connect(t, s, clientOpts{protocol: "2025-11-25", sampling: true, elicit: scripted,
		onSample: func(n int) {
			if n == 2 {
				ids := s.runningIDs()
				rep, _ := c2.call(ctx, "refine_continue", map[string]any{"session_id": ids[0]})
				second <- rep
			}
		}})
	c2 = connect(t, s, clientOpts{protocol: "2025-11-25", sampling: true})
	rep, _ := c.call(ctx, "refine_start", startArgs(t))
	got := <-second
	if !got.Running || !strings.Contains(got.Note, "another tool call is driving") {
		t.Errorf("second driver: %+v", got)
	}
	checkDemoComplete(t, s, c, c.untilStops(ctx, rep))
}
