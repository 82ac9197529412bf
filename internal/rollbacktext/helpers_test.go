package rollbacktext

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/rollback"
)

// t0 is the spec's rollback timestamp, 2026-01-12T14:30:00Z.
var t0 = time.Date(2026, 1, 12, 14, 30, 0, 0, time.UTC)

// store is a test double for the engine's Store: a map with atomic apply.
type store map[string][]byte

func (s store) keys() []string { return slices.Sorted(maps.Keys(s)) }

func (s store) apply(ops []rollback.Op) {
	for _, op := range ops {
		if op.Delete {
			delete(s, op.Key)
		} else {
			s[op.Key] = op.Value
		}
	}
}

func (s store) read(t *testing.T, keys []string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, k := range keys {
		v, ok := s[k]
		if !ok {
			t.Fatalf("store has no %s", k)
		}
		out[k] = v
	}
	return out
}

// rotate applies a backup rotation at the start of round n, as the engine does.
func (s store) rotate(n int) {
	r := rollback.Rotate(n, rollback.DefaultRetention, s.keys())
	for _, k := range r.Delete {
		delete(s, k)
	}
	for _, c := range r.Copies {
		s[c.To] = slices.Clone(s[c.From])
	}
}

// session builds a store as it is at the end of round `current`: every
// round ran with the rotation at its start, and each round folder holds an
// engineer output, a reviewer output and a journaled attempt.
func session(t *testing.T, current int) store {
	t.Helper()
	s := store{rollback.StatusKey: []byte("# Status\n\nround 0\n"), rollback.DecisionsKey: []byte("# Decisions\n"), rollback.StateKey: []byte(`{"schema":1,"round":0}`)}
	for n := 1; n <= current; n++ {
		s.rotate(n)
		p := rollback.RoundPrefix(n)
		s[p+"engineer.md"] = []byte(fmt.Sprintf("## Gap Resolution: GAP-FLOW-00%d\n\nround %d output\n", n%10, n))
		s[p+"reviewer.md"] = []byte(fmt.Sprintf("## Review: round %d\n\nNO_ISSUES_FOUND\n", n))
		s[p+"attempts/engineer-1.md"] = []byte(fmt.Sprintf("raw response of round %d\n", n))
		s[rollback.StatusKey] = []byte(fmt.Sprintf("# Status\n\nround %d\n", n))
		s[rollback.DecisionsKey] = []byte(fmt.Sprintf("# Decisions\n\nthrough round %d\n", n))
		s[rollback.StateKey] = []byte(fmt.Sprintf(`{"schema":1,"round":%d}`, n))
	}
	return s
}

func specHistory() rollback.History {
	return rollback.History{Records: []rollback.Record{
		{
			Round: 5, Attempt: 1, Target: 4, At: t0, Mode: rollback.ModeAutoRetry, Trigger: rollback.TriggerUser,
			Reason: "Proposals too abstract", Patterns: []rollback.Pattern{rollback.AbstractOutput},
			Adjustments: []string{"Added explicit value requirements to prompt", "Required minimum 3 examples"},
			Archive:     "round_005_rolled_back_1.tar.gz", Outcome: "Retry successful", Succeeded: true,
		},
		{
			Round: 5, Attempt: 2, Target: 4, At: time.Date(2026, 1, 12, 15, 45, 0, 0, time.UTC), Mode: rollback.ModeInteractive, Trigger: rollback.TriggerUser,
			Reason:       "Still missing concrete trade-offs",
			Analysis:     &rollback.AnalysisRecord{Detected: "Gap scope too large", Recommendation: "Split gap"},
			UserDecision: "Split gap into 007a, 007b, 007c",
			Split:        &rollback.SplitRecord{Parent: "GAP-FLOW-007", Children: []gap.ID{"GAP-FLOW-007a", "GAP-FLOW-007b", "GAP-FLOW-007c"}},
			Archive:      "round_005_rolled_back_2.tar.gz", Outcome: "Proceeded with split gaps", Succeeded: true,
		},
		{Round: 6, Attempt: 1, Target: 5, At: time.Date(2026, 1, 12, 17, 0, 0, 0, time.UTC), Mode: rollback.ModeInteractive, Trigger: rollback.TriggerDivergence, Reason: "Diverging", Archive: "round_006_rolled_back_1.tar.gz"},
	}}
}

var specArchives = []rollback.ArchiveInfo{
	{Name: "round_003_rolled_back_1.tar.gz", Size: 2150, At: t0.Add(-48 * time.Hour)},
	{Name: "round_005_rolled_back_1.tar.gz", Size: 1843, At: t0},
	{Name: "round_005_rolled_back_2.tar.gz", Size: 2048, At: t0.Add(time.Hour)},
}

// gapSectionText is a complete gap section with n vague words in its prose.
func gapSectionText(id string, vague int) string {
	words := []string{"appropriate", "reasonable", "sufficient", "adequate", "properly", "correctly", "typically", "generally"}
	var b strings.Builder
	b.WriteString("## Gap Resolution: " + id + "\n\n### Proposed Solution\n\n")
	b.WriteString("Keep three backups and delete the fourth before each round starts; restore status.md and decisions.md together so state stays consistent across the session. ")
	for i := 0; i < vague; i++ {
		b.WriteString("The limit is " + words[i%len(words)] + ". ")
	}
	b.WriteString("\n\n```\nappropriate reasonable sufficient adequate properly correctly\n```\n")
	b.WriteString("Inline `appropriate may might could` code is not prose.\n\n")
	b.WriteString("### Examples\n\n**Example 1:** round 5 rolls back to 4.\n\n**Example 2:** edge case: round 1 rolls back to 0.\n\n")
	b.WriteString("### Trade-offs\n\nMore storage, full restore.\n\n")
	return b.String()
}

// specReportOutput reproduces the spec's sample report: GAP-FLOW-007
// partly addressed (Solution and Examples, one example, vague language, no
// trade-offs), GAP-FLOW-008 not addressed.
const specReportOutput = `## Gap Resolution: GAP-FLOW-007

### Solution

Roll back to an appropriate round as needed. Keep a reasonable number of
backups and delete them when necessary. Archives are compressed properly so
that storage stays sufficient for typical sessions, and the Mediator restores
the state correctly after every rollback.

### Examples

**Example 1:** Round 5 is rolled back to Round 4.
`
