package rollback

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/refine-spec/refine/gap"
)

// specHistory is the spec's "Recording in status.md" example; the third
// rollback is not shown there but counted in its summary.
func specHistory() History {
	return History{Records: []Record{
		{
			Round: 5, Attempt: 1, Target: 4, At: t0, Mode: ModeAutoRetry, Trigger: TriggerUser,
			Reason: "Proposals too abstract", Patterns: []Pattern{AbstractOutput},
			Adjustments: []string{"Added explicit value requirements to prompt", "Required minimum 3 examples"},
			Archive:     "round_005_rolled_back_1.tar.gz", Outcome: "Retry successful", Succeeded: true,
		},
		{
			Round: 5, Attempt: 2, Target: 4, At: time.Date(2026, 1, 12, 15, 45, 0, 0, time.UTC), Mode: ModeInteractive, Trigger: TriggerUser,
			Reason:       "Still missing concrete trade-offs",
			Analysis:     &AnalysisRecord{Detected: "Gap scope too large", Recommendation: "Split gap"},
			UserDecision: "Split gap into 007a, 007b, 007c",
			Split:        &SplitRecord{Parent: "GAP-FLOW-007", Children: []gap.ID{"GAP-FLOW-007a", "GAP-FLOW-007b", "GAP-FLOW-007c"}},
			Archive:      "round_005_rolled_back_2.tar.gz", Outcome: "Proceeded with split gaps", Succeeded: true,
		},
		{Round: 6, Attempt: 1, Target: 5, At: time.Date(2026, 1, 12, 17, 0, 0, 0, time.UTC), Mode: ModeInteractive, Trigger: TriggerDivergence, Reason: "Diverging", Archive: "round_006_rolled_back_1.tar.gz"},
	}}
}

func TestHistoryJSONRoundTrip(t *testing.T) {
	h := specHistory()
	h.Records[0].Decisions = []RoundDecision{{ID: "DECISION-R5-001", Choice: "x"}}
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var back History
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(h, back); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if !strings.Contains(string(b), `"user_decision":"Split gap into 007a, 007b, 007c"`) {
		t.Errorf("json: %s", b)
	}
}

func TestHistoryHelpers(t *testing.T) {
	h := specHistory()
	if h.Used() != 3 || h.Attempts(5) != 2 || h.Attempts(9) != 0 {
		t.Errorf("used %d attempts(5) %d", h.Used(), h.Attempts(5))
	}
	if !cmp.Equal(h.Rounds(), []int{5, 6}) {
		t.Errorf("rounds %v", h.Rounds())
	}
	if !h.setOutcome(6, 1, "Retry successful", true) || h.setOutcome(6, 2, "x", true) {
		t.Error("SetOutcome")
	}
	if s := h.Summarize(0); s.SuccessfulRetries != 3 || s.Remaining != 4 || s.Limit != 7 {
		t.Errorf("summary %+v", s)
	}
}
