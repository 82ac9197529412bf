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
		"rollbacks": []any{}, "pending": []any{}, "repairs": []any{}, "usage": map[string]any{"prompt_tokens": 0.0, "completion_tokens": 0.0, "cached_prompt_tokens": 0.0, "cache_write_tokens": 0.0, "calls": 0.0},
		"roles":      map[string]any{"engineer": map[string]any{"provider": "", "model": ""}, "reviewer": map[string]any{"provider": "", "model": ""}},
		"integrated": false, "final_spec": map[string]any{"form": "", "reason": ""}, "normalized": []any{}, "running": false, "waiting": false,
		// Unset settings read as the defaults they stand for (#40).
		"settings": map[string]any{"max_rounds": 0.0, "gaps_per_round": 0.0, "parallel_gaps": 0.0, "max_retries": 0.0, "stall_rounds": 0.0,
			"rollback_mode": "INTERACTIVE", "rollback_limit": 7.0, "rollback_analysis_threshold": 1.0, "backup_retention": 0.0, "cold_storage": "",
			"archive_retention_seconds": 0.0, "integrate": false, "transport_retries": 0.0, "backoff_base_seconds": 0.0, "backoff_max_seconds": 0.0,
			"prompt_budget": 0.0, "max_tokens": 0.0, "max_tokens_cap": 0.0, "max_output_bytes": 0.0},
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

// Text from a model or a gaps file reaches the document with the
// characters a terminal obeys written as \u escapes, as text output
// escapes them (issue #24: U+009B, U+202E and DEL passed through raw),
// and decodes to the same text.
func TestWriteEscapesWhatTerminalsObey(t *testing.T) {
	const evil = "a\u009b2Jb\u202ec\x7fd"
	st := refine.Status{Outcome: refine.StatusPaused,
		Gaps:    []refine.GapStatus{{ID: "GAP-A-001", Title: evil, Severity: gap.High, State: gap.Open}},
		Pending: []refine.Question{{ID: "q1", Kind: refine.KindConflict, Title: evil, Body: evil}}}
	var buf bytes.Buffer
	if err := Write(&buf, st); err != nil {
		t.Fatal(err)
	}
	for _, raw := range []string{"\u009b", "\u202e", "\x7f"} {
		if bytes.Contains(buf.Bytes(), []byte(raw)) {
			t.Errorf("status JSON has %q raw", raw)
		}
	}
	var got Status
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Gaps[0].Title != evil || got.Pending[0].Body != evil {
		t.Errorf("decoded %q, %q; want %q", got.Gaps[0].Title, got.Pending[0].Body, evil)
	}
}

func TestRolesAndCacheUsage(t *testing.T) {
	st := refine.Status{Outcome: refine.StatusComplete, Calls: 4,
		Usage: refine.Usage{PromptTokens: 9000, CompletionTokens: 800, CachedPromptTokens: 6000, CacheWriteTokens: 2000}}
	st.Settings.Backend = refine.BackendInfo{Kind: "openai", EngineerKind: "anthropic", EngineerModel: "claude-x", ReviewerModel: "gpt-y"}
	got := From(st)
	want := Roles{Engineer: RoleBackend{Provider: "anthropic", Model: "claude-x"}, Reviewer: RoleBackend{Provider: "openai", Model: "gpt-y"}}
	if diff := cmp.Diff(want, got.Roles); diff != "" {
		t.Errorf("roles (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Usage{PromptTokens: 9000, CompletionTokens: 800, CachedPromptTokens: 6000, CacheWriteTokens: 2000, Calls: 4}, got.Usage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
}

// The session's settings are in the document as it stores them, with
// durations in seconds (#40).
func TestSettings(t *testing.T) {
	set := refine.DefaultConfig().Settings
	set.RollbackLimit, set.MaxRounds, set.BackoffBase = 9, 20, 1500*time.Millisecond
	got := From(refine.Status{Outcome: refine.StatusRunning, Settings: set}).Settings
	if got.RollbackLimit != 9 || got.MaxRounds != 20 || got.BackoffBaseSeconds != 1.5 || got.GapsPerRound != set.GapsPerRound || got.RollbackMode != "INTERACTIVE" || !got.Integrate {
		t.Errorf("settings %+v", got)
	}
}
