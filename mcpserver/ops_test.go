package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/refine-spec/refine"
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
