package rollbacktext

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/refine-spec/refine/internal/rollbackfmt"
	"github.com/refine-spec/refine/rollback"
)

func TestRenderHistoryMatchesSpec(t *testing.T) {
	got := RenderHistory(specHistory(), rollback.DefaultLimit)
	want := `## Rollback History

### Round 5 - Rollback 1
- **Timestamp:** 2026-01-12T14:30:00Z
- **Mode:** AUTO_RETRY
- **Reason:** Proposals too abstract (detected pattern: ABSTRACT_OUTPUT)
- **Adjustments Applied:**
  - Added explicit value requirements to prompt
  - Required minimum 3 examples
- **Archive:** round_005_rolled_back_1.tar.gz
- **Outcome:** Retry successful

### Round 5 - Rollback 2
- **Timestamp:** 2026-01-12T15:45:00Z
- **Mode:** INTERACTIVE (second attempt)
- **Reason:** Still missing concrete trade-offs
- **Root Cause Analysis:** Performed
  - Detected: Gap scope too large
  - Recommendation: Split gap
- **User Decision:** Split gap into 007a, 007b, 007c
- **Archive:** round_005_rolled_back_2.tar.gz
- **Outcome:** Proceeded with split gaps

### Round 6 - Rollback 1
- **Timestamp:** 2026-01-12T17:00:00Z
- **Mode:** INTERACTIVE
- **Reason:** Diverging
- **Archive:** round_006_rolled_back_1.tar.gz
- **Outcome:** Pending

### Session Rollback Summary
| Metric | Value |
|--------|-------|
| Total Rollbacks | 3 |
| Successful Retries | 2 |
| Root Cause Analyses | 1 |
| Gaps Split | 1 (GAP-FLOW-007 -> 3 sub-gaps) |
| Remaining Rollbacks | 4 of 7 |
`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestRenderHistoryEdges covers an empty history and a multi-round record.
func TestRenderHistoryEdges(t *testing.T) {
	if got := RenderHistory(rollback.History{}, 7); !strings.Contains(got, "No rollbacks in this session.") || !strings.Contains(got, "| Remaining Rollbacks | 7 of 7 |") {
		t.Errorf("empty history:\n%s", got)
	}
	multi := RenderRecord(rollback.Record{Round: 8, Attempt: 1, Target: 5, At: t0, Mode: rollback.ModeInteractive, Reason: "bad\n## injected", Archive: "a"})
	if !strings.Contains(multi, "- **Rolled Back To:** Round 5\n") || !strings.Contains(multi, "- **Reason:** bad ## injected\n") {
		t.Errorf("multi-round record:\n%s", multi)
	}
}

func TestNotices(t *testing.T) {
	got := DecisionsNotice(5, t0, "User request - proposals too abstract")
	want := `## Rollback Notice - Round 5

Round 5 was rolled back at 2026-01-12T14:30:00Z.
Decisions from round 5 have been archived to:
  round_005_rolled_back/decisions_from_round_5.md

Reason: User request - proposals too abstract
`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decisions notice (-want +got):\n%s", diff)
	}
	got = StatusNotice([]int{5}, []int{2}, 4, t0, "Still missing trade-offs", []string{"round_005_rolled_back_2.tar.gz"})
	want = `## Rollback Notice - Round 5

Round 5 was rolled back at 2026-01-12T14:30:00Z (rollback 2 of this round).
Restored status.md, decisions.md and state.json from the Round 4 backups.
Archived to:
  round_005_rolled_back_2.tar.gz

Reason: Still missing trade-offs
`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status notice (-want +got):\n%s", diff)
	}
	got = AutoRetryBlock(AutoRetry{Round: 4, Attempt: 1, FailurePattern: "MISSING_SECTIONS (Trade-offs absent)", Adjustments: []string{"a", "b"}})
	want = `## Round 4 Auto-Retry

**Attempt:** 1 of 2 before user prompt
**Failure Pattern:** MISSING_SECTIONS (Trade-offs absent)
**Auto-Adjustments Applied:**
- a
- b

**Note:** User not prompted. Second failure will trigger interactive mode.
`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("auto-retry block (-want +got):\n%s", diff)
	}
	got = rollback.DecisionsFromRound(5, []rollback.RoundDecision{{ID: "DECISION-R5-001", Summary: "Severity weights", Choice: "Severity weights remain as defined in GAP-FLOW-012", Rationale: "Weights are working well in practice"}})
	want = `# Decisions Made During Round 5 (Rolled Back)

**Note:** These decisions were made during Round 5, which was subsequently rolled back.
They are preserved for reference but are NOT active in the session.

### DECISION-R5-001: Severity weights
- **Choice:** Severity weights remain as defined in GAP-FLOW-012
- **Rationale:** Weights are working well in practice
`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decisions_from_round (-want +got):\n%s", diff)
	}
	if got := rollbackfmt.AppendBlock([]byte("no newline"), "## B\n"); string(got) != "no newline\n\n## B\n" {
		t.Errorf("appendBlock = %q", got)
	}
}
