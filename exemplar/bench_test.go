package exemplar

import (
	"fmt"
	"strings"
	"testing"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/validate"
)

// benchHistory is a 15-round session of 10 KB Engineer outputs.
func benchHistory() []HistoryItem {
	var history []HistoryItem
	for round := 1; round <= 15; round++ {
		var b strings.Builder
		fmt.Fprintf(&b, "## Gap Resolution: GAP-FLOW-%03d\n\n**Confidence:** HIGH\n\n### Proposed Solution\n\n", round)
		for b.Len() < 6000 {
			fmt.Fprintf(&b, "The tracker for GAP-FLOW-%03d records each round and warns on stalls.\n\n", round)
		}
		b.WriteString("### Examples\n\n```go\ntracker.Record(round)\n```\n\n### Trade-offs\n\n")
		for b.Len() < 10_000 {
			b.WriteString("- A trade-off line that explains one consequence of the design.\n")
		}
		b.WriteString("\n### New Gaps Introduced\n\n- None\n")
		history = append(history, HistoryItem{Round: round, Role: gap.Engineer, Content: b.String(), LedToAccepted: round%3 == 0, RolledBack: round == 14})
	}
	return history
}

// BenchmarkSelect measures selection plus truncation over a 15-round
// history of 10 KB outputs, for the failure types that read the history.
func BenchmarkSelect(b *testing.B) {
	req := Request{
		Role: gap.Engineer, CurrentRound: 16, Gaps: []gap.ID{"GAP-FLOW-001", "GAP-FLOW-002"},
		Canonical: Canonical{Reviewer: canonicalReviewer}, History: benchHistory(), Budget: RetryBudget,
	}
	for _, failure := range []validate.FailureType{validate.NoGapsAddressed, validate.EmptyOutput, validate.InconsistentRefs} {
		b.Run(string(failure), func(b *testing.B) {
			req.FailureType = failure
			if sel := Select(req); sel.Tier != TierSession || sel.Truncation != TruncatedStructurally {
				b.Fatalf("tier %d, %v: the benchmark must select and truncate a session example", sel.Tier, sel.Truncation)
			}
			b.ReportAllocs()
			for b.Loop() {
				Select(req)
			}
		})
	}
}

func BenchmarkTruncate100KB(b *testing.B) {
	doc := strings.Repeat(benchHistory()[0].Content, 10)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		Truncate(doc, RetryBudget, nil)
	}
}

func BenchmarkExtractCanonical(b *testing.B) {
	src := strings.Repeat("## 6. Other\n\n"+benchHistory()[0].Content, 10) + workflowSpec()
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ExtractCanonical(src); err != nil {
			b.Fatal(err)
		}
	}
}
