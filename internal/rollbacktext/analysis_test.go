package rollbacktext

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/rollback"
)

func specReport(t *testing.T) (string, rollback.Detection) {
	t.Helper()
	d := rollback.DetectPatterns(rollback.Input{
		Engineer: specReportOutput,
		Assigned: []gap.ID{"GAP-FLOW-007", "GAP-FLOW-008"},
		Known:    []gap.ID{"GAP-FLOW-007", "GAP-FLOW-008"},
	})
	return AnalysisReport(ReportInput{Round: 5, Attempt: 1, Reason: "User request - proposals too abstract", At: t0, Detection: d}), d
}

func TestAnalysisReportMatchesSpec(t *testing.T) {
	report, d := specReport(t)
	if diff := cmp.Diff([]rollback.Pattern{rollback.AbstractOutput, rollback.MissingSections, rollback.NarrowExamples}, d.Patterns()); diff != "" {
		t.Fatalf("patterns (-want +got):\n%s", diff)
	}
	// Each block below is copied from the spec's report.
	for _, block := range []string{
		"## Rollback Analysis - Round 5\n\n### Failure Summary\n",
		"- **Attempt Number:** 1 of this round\n- **Timestamp:** 2026-01-12T14:30:00Z\n",
		`#### What Was Produced
| Gap | Addressed | Sections Present | Example Count |
|-----|-----------|------------------|---------------|
| GAP-FLOW-007 | Partial | Solution, Examples | 1 |
| GAP-FLOW-008 | No | None | 0 |
`,
		`#### Structural Completeness
| Check | Status |
|-------|--------|
| Has ## Gap Resolution headers | PASS |
| Has ### Trade-offs | FAIL |
| Has ### Examples | PASS |
| Min length per gap (200 chars) | PASS |
| Valid cross-references | PASS |
`,
		`#### Detected Patterns
- **ABSTRACT_OUTPUT:** Solution uses vague language ("appropriate", "as needed"`,
		"- **MISSING_SECTIONS:** Trade-offs section absent\n- **NARROW_EXAMPLES:** Only 1 example, no edge cases\n",
		`#### Historical Comparison
| Pattern | This Attempt | Previous Attempts |
|---------|--------------|-------------------|
| ABSTRACT_OUTPUT | Yes | N/A (first attempt) |
| MISSING_SECTIONS | Yes | N/A |
`,
		`### Recommended Adjustments

Based on detected patterns:

1. **For ABSTRACT_OUTPUT:**
   Add to prompt: "Replace vague terms with specific values. Instead of
   'appropriate threshold', say 'threshold of 5 attempts'."

2. **For MISSING_SECTIONS:**
   Add to prompt: "Your response MUST include a ### Trade-offs section."

3. **For NARROW_EXAMPLES:**
   Add to prompt: "Include at least 2 examples: one success case, one edge case."

### Adjustment Confidence
- Adjustment 1: HIGH (pattern clearly detected)
- Adjustment 2: HIGH (structural, easily enforced)
- Adjustment 3: MEDIUM (may require domain knowledge)
`,
	} {
		if !strings.Contains(report, block) {
			t.Errorf("report lacks the spec's block:\n%s\n--- report:\n%s", block, report)
		}
	}
	if !strings.HasSuffix(report, "- Adjustment 3: MEDIUM (may require domain knowledge)\n") {
		t.Errorf("report does not end with the confidence list")
	}
}

// TestAnalysisReportSpecText cross-checks the recommended-adjustments
// block against the spec file itself, when it is available.
func TestAnalysisReportSpecText(t *testing.T) {
	spec, err := os.ReadFile("../../testdata/spec/round-06-rollback.md")
	if err != nil {
		t.Fatal("spec corpus (testdata/spec):", err)
	}
	start := strings.Index(string(spec), "### Recommended Adjustments")
	end := strings.Index(string(spec), "- Adjustment 3: MEDIUM (may require domain knowledge)\n")
	if start < 0 || end < 0 {
		t.Fatal("spec report block not found")
	}
	want := string(spec[start : end+len("- Adjustment 3: MEDIUM (may require domain knowledge)\n")])
	report, _ := specReport(t)
	if !strings.Contains(report, want) {
		t.Errorf("report differs from the spec's block:\n%s\n--- report:\n%s", want, report)
	}
}

func TestHistoricalComparison(t *testing.T) {
	var b strings.Builder
	writeHistorical(&b, []rollback.Pattern{rollback.MissingSections}, [][]rollback.Pattern{{rollback.AbstractOutput, rollback.MissingSections}, {rollback.MissingSections}})
	want := `| Pattern | This Attempt | Previous Attempts |
|---------|--------------|-------------------|
| ABSTRACT_OUTPUT | No | Yes (attempt 1) |
| MISSING_SECTIONS | Yes | Yes (attempts 1, 2) |
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestAnalysisReportNothingDetected(t *testing.T) {
	d := rollback.DetectPatterns(rollback.Input{Engineer: gapSectionText("GAP-FLOW-001", 0), Assigned: []gap.ID{"GAP-FLOW-001"}})
	r := AnalysisReport(ReportInput{Round: 2, Attempt: 1, At: t0, Detection: d})
	for _, s := range []string{
		"- **Rollback Reason:** Not stated\n",
		"- None detected\n",
		"No patterns detected in this or earlier attempts.\n",
		"No pattern-specific adjustments.",
		"### Adjustment Confidence\n- None\n",
		"| Valid cross-references | SKIPPED |",
	} {
		if !strings.Contains(r, s) {
			t.Errorf("report lacks %q:\n%s", s, r)
		}
	}
}
