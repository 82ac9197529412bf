package convergence

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/gap"
)

func summaryLedger(t *testing.T) *gap.Ledger {
	l := ledgerOf(t,
		gap.Gap{ID: "GAP-UX-003", Title: "Example session incomplete", Severity: gap.Low, State: gap.Open},
		gap.Gap{ID: "GAP-AUTO-002", Title: "No CI/CD integration", Severity: gap.Medium, State: gap.Deferred},
		gap.Gap{ID: "GAP-FLOW-001", Title: "Validation", Severity: gap.Critical, State: gap.Accepted},
		gap.Gap{ID: "GAP-FLOW-002", Title: "Stall detection", Severity: gap.High, State: gap.Accepted},
		gap.Gap{ID: "GAP-FLOW-007", Title: "Rollback", Severity: gap.High, State: gap.Superseded},
		gap.Gap{ID: "GAP-FLOW-007a", Title: "Rollback storage", Severity: gap.High, State: gap.Accepted, Parent: "GAP-FLOW-007"},
		gap.Gap{ID: "GAP-UX-001", Title: "Progress output", Severity: gap.Medium, State: gap.NeedsRevision},
	)
	return l
}

func TestSummary(t *testing.T) {
	start := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	got := Summary(SummaryInput{
		Outcome:  UserApproved,
		Reason:   "the user approved the spec with known gaps",
		Rounds:   5,
		Started:  start,
		Finished: start.Add(2 * time.Hour),
		Ledger:   summaryLedger(t),
		Extra:    []Limitation{{ID: "ISSUE-R4-002", Severity: gap.Medium, Title: "Retry jitter", Note: "unresolved conflict"}},
		SpecKey:  "specs/refine_v1.0.md",
	})
	want := "## Session Complete\n" +
		"\n" +
		"**Status:** USER_APPROVED\n" +
		"**Reason:** the user approved the spec with known gaps\n" +
		"**Rounds:** 5\n" +
		"**Duration:** 2 hours\n" +
		"\n" +
		"### Gap Summary\n" +
		"| Status             | Count | Critical | High | Medium | Low |\n" +
		"|--------------------|-------|----------|------|--------|-----|\n" +
		"| Resolved           | 3     | 1        | 2    | 0      | 0   |\n" +
		"| Accepted as-is     | 2     | 0        | 0    | 1      | 1   |\n" +
		"| Deferred           | 1     | 0        | 0    | 1      | 0   |\n" +
		"| Superseded (split) | 1     | 0        | 1    | 0      | 0   |\n" +
		"| Total              | 7     | 1        | 3    | 2      | 1   |\n" +
		"\n" +
		"### Known Limitations\n" +
		"- GAP-AUTO-002: No CI/CD integration (MEDIUM, deferred)\n" +
		"- GAP-UX-001: Progress output (MEDIUM, open)\n" +
		"- GAP-UX-003: Example session incomplete (LOW, open)\n" +
		"- ISSUE-R4-002: Retry jitter (MEDIUM, unresolved conflict)\n" +
		"\n" +
		"### Output\n" +
		"Final spec written to: `specs/refine_v1.0.md`\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Summary (-want +got):\n%s", diff)
	}
}

func TestSummaryComplete(t *testing.T) {
	l := ledgerOf(t, gap.Gap{ID: "GAP-FLOW-001", Title: "Validation", Severity: gap.High, State: gap.Accepted})
	got := Summary(SummaryInput{Outcome: Complete, Rounds: 1, Ledger: l})
	want := "## Session Complete\n" +
		"\n" +
		"**Status:** COMPLETE\n" +
		"**Rounds:** 1\n" +
		"**Duration:** unknown\n" +
		"\n" +
		"### Gap Summary\n" +
		"| Status   | Count | Critical | High | Medium | Low |\n" +
		"|----------|-------|----------|------|--------|-----|\n" +
		"| Resolved | 1     | 0        | 1    | 0      | 0   |\n" +
		"| Open     | 0     | 0        | 0    | 0      | 0   |\n" +
		"| Deferred | 0     | 0        | 0    | 0      | 0   |\n" +
		"| Total    | 1     | 0        | 1    | 0      | 0   |\n" +
		"\n" +
		"### Known Limitations\n" +
		"- None\n" +
		"\n" +
		"### Output\n" +
		"Final spec written to: `final_spec.md`\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Summary (-want +got):\n%s", diff)
	}
}

func TestDuration(t *testing.T) {
	start := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0 seconds"},
		{time.Second, "1 second"},
		{59 * time.Second, "59 seconds"},
		{time.Minute, "1 minute"},
		{45*time.Minute + 30*time.Second, "45 minutes"},
		{time.Hour, "1 hour"},
		{2 * time.Hour, "2 hours"},
		{26*time.Hour + 5*time.Minute, "26 hours 5 minutes"},
		{-time.Minute, "unknown"},
	}
	for _, tt := range tests {
		if got := duration(start, start.Add(tt.d)); got != tt.want {
			t.Errorf("duration(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
	if got := duration(time.Time{}, start); got != "unknown" {
		t.Errorf("zero start: %q", got)
	}
}

func TestLimitations(t *testing.T) {
	got := Limitations(summaryLedger(t))
	want := []Limitation{
		{ID: "GAP-AUTO-002", Severity: gap.Medium, Title: "No CI/CD integration", Note: "deferred"},
		{ID: "GAP-UX-001", Severity: gap.Medium, Title: "Progress output", Note: "open"},
		{ID: "GAP-UX-003", Severity: gap.Low, Title: "Example session incomplete", Note: "open"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Limitations (-want +got):\n%s", diff)
	}
	if got := (Limitation{ID: "X"}).String(); got != "X" {
		t.Errorf("bare limitation = %q", got)
	}
}

func TestFinalSpec(t *testing.T) {
	got := FinalSpec("# Spec\n\nBody.\n\n",
		[]Resolution{
			{ID: "GAP-FLOW-002", Title: "Stall detection", Text: "\nTrack convergence per round.\n"},
			{ID: "GAP-FLOW-001", Title: "Validation", Text: "Validate in two tiers."},
		},
		[]string{"### ISSUE-R2-001: Error threshold\n**Decision:** 3 retries\n"},
		[]Limitation{{ID: "GAP-UX-003", Severity: gap.Low, Title: "Example session incomplete", Note: "deferred"}},
	)
	want := "# Spec\n\nBody.\n\n---\n\n" +
		"## Resolved Gaps\n\n" +
		"### GAP-FLOW-001: Validation\n\nValidate in two tiers.\n\n" +
		"### GAP-FLOW-002: Stall detection\n\nTrack convergence per round.\n\n" +
		"## Decisions\n\n" +
		"### ISSUE-R2-001: Error threshold\n**Decision:** 3 retries\n\n" +
		"## Known Limitations\n\n" +
		"- GAP-UX-003: Example session incomplete (LOW, deferred)\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FinalSpec (-want +got):\n%s", diff)
	}
	empty := FinalSpec("# Spec", nil, nil, nil)
	wantEmpty := "# Spec\n\n---\n\n## Resolved Gaps\n\nNone.\n\n## Decisions\n\nNone.\n\n## Known Limitations\n\nNone.\n"
	if diff := cmp.Diff(wantEmpty, empty); diff != "" {
		t.Errorf("FinalSpec empty (-want +got):\n%s", diff)
	}
}
