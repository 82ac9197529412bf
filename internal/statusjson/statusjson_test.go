package statusjson

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
)

// The empty status has every field, with lists as [] (never null).
func TestEmptyStatusHasEveryField(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, refine.Status{Outcome: refine.StatusRunning}); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"round": 0.0, "outcome": "RUNNING", "gaps": []any{}, "convergence": []any{}, "decisions": []any{}, "conflicts": []any{},
		"rollbacks": []any{}, "pending": []any{}, "usage": map[string]any{"prompt_tokens": 0.0, "completion_tokens": 0.0, "calls": 0.0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestPendingAndHistory(t *testing.T) {
	at := time.Date(2026, 1, 12, 14, 30, 0, 0, time.UTC)
	st := refine.Status{
		Outcome: refine.StatusPaused, Round: 2,
		Gaps: []refine.GapStatus{{ID: "GAP-A-001", Title: "t", Severity: gap.High, State: gap.Open,
			History: []gap.Transition{{From: gap.Open, To: gap.Open, Round: 1, At: at, Reason: "r"}}}},
		Pending: []refine.Question{{ID: "q1", Kind: refine.KindConflict, Round: 2, Title: "T", Body: "**b**", Default: "A", AllowText: true,
			Options: []refine.Option{{Key: "A", Label: "a", Recommended: true}, {Key: "C", Label: "c", Effect: "e"}}, TextRequired: []string{"C"}}},
	}
	got := From(st)
	want := []Pending{{ID: "q1", Kind: "conflict", Round: 2, Title: "T", Body: "**b**", Default: "A", AllowText: true,
		Options: []Option{{Key: "A", Label: "a", Recommended: true}, {Key: "C", Label: "c", Effect: "e", Text: true}}}}
	if diff := cmp.Diff(want, got.Pending); diff != "" {
		t.Errorf("pending (-want +got):\n%s", diff)
	}
	if h := got.Gaps[0].History; len(h) != 1 || h[0].At != "2026-01-12T14:30:00Z" || h[0].Reason != "r" || h[0].Round != 1 {
		t.Errorf("history %+v", h)
	}
}
