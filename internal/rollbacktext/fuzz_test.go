package rollbacktext

import (
	"fmt"
	"strings"
	"testing"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/scaling"
	"github.com/refine-spec/refine/rollback"
)

// FuzzAnalysisText renders the analysis report and the root-cause question
// over whatever pattern detection makes of arbitrary outputs.
func FuzzAnalysisText(f *testing.F) {
	f.Add(specReportOutput, "### High Priority\n- undefined term; contradicts itself")
	f.Add(gapSectionText("GAP-FLOW-001", 6), "")
	f.Add("## Gap Resolution: GAP-FLOW-001\n```\n## Gap Resolution: GAP-FLOW-002\n", "`")
	f.Add("\ufeff## Gap Resolution: GAP-A-001\r\n### Examples\r\n- a\r\n", "\xff\xfe")
	f.Fuzz(func(t *testing.T, engineer, reviewer string) {
		d := rollback.DetectPatterns(rollback.Input{
			Engineer: engineer, Reviewer: reviewer,
			Assigned: []gap.ID{"GAP-FLOW-001", "GAP-FLOW-007"},
			Known:    []gap.ID{"GAP-FLOW-001", "GAP-FLOW-007"},
			Context:  "ROUND_COMPLETE",
		})
		report := AnalysisReport(ReportInput{Round: 3, Attempt: 2, Reason: reviewer, At: t0, Detection: d, Previous: [][]rollback.Pattern{d.Patterns()}})
		if !strings.HasPrefix(report, "## Rollback Analysis - Round 3\n") {
			t.Fatalf("report header: %q", report[:min(len(report), 60)])
		}
		diag := rollback.Diagnose([]rollback.AttemptInfo{
			{Attempt: 1, Reason: reviewer, Engineer: engineer, Reviewer: reviewer, Patterns: d.Patterns()},
			{Attempt: 2, Reason: engineer, Engineer: reviewer, Reviewer: engineer},
		})
		p := AnalysisQuestion(RCAInput{Round: 3, Attempts: nil, Diagnosis: diag, Gap: "GAP-FLOW-007", Split: []SplitChild{{Title: engineer}, {Title: reviewer}}})
		if _, ok := p.Option(p.Default); !ok {
			t.Fatalf("default %q is not an option", p.Default)
		}
	})
}

// TestAnalysisReportScalesLinearly renders the report over inputs with
// thousands of distinct sections, terms and IDs at two sizes and checks
// that the work grows linearly.
func TestAnalysisReportScalesLinearly(t *testing.T) {
	cat := func(i int) string { // distinct gap categories AA, AB, …
		return string(rune('A'+i/26%26)) + string(rune('A'+i%26)) + string(rune('A'+i/676%26))
	}
	input := func(n int) rollback.Input {
		var gaps strings.Builder
		for i := 0; i < n; i++ {
			fmt.Fprintf(&gaps, "## Gap Resolution: GAP-%s-%03d\n### S%d\nSee GAP-%s-%03d, T_%d.\n", cat(i), i%1000, i, cat(i+1), (i+1)%1000, i)
		}
		return rollback.Input{Engineer: gaps.String(), Assigned: []gap.ID{"GAP-FLOW-001"}, Known: []gap.ID{"GAP-FLOW-001"}, Context: "spec"}
	}
	scaling.Linear(t, "report", 500, 16, input, func(in rollback.Input) {
		d := rollback.DetectPatterns(in)
		_ = AnalysisReport(ReportInput{Round: 1, Attempt: 1, At: t0, Detection: d})
	})
}
