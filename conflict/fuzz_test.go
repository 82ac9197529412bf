package conflict

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/scaling"
)

// specSeeds adds the shared spec documents as corpus seeds, if present.
func specSeeds(f *testing.F, add func(string)) {
	paths, _ := filepath.Glob(filepath.Join("..", "testdata", "spec", "*.md"))
	if len(paths) == 0 {
		f.Log("no ../testdata/spec/*.md seeds; using built-in seeds only")
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err == nil {
			add(string(b))
		}
	}
}

func builtinSeeds() []string {
	return []string{
		"",
		"## DISAGREE: ISSUE-R5-003\n**Reviewer Concern:**\n> q\n**Rationale:** r\n",
		"## DISAGREE:ISSUE-R1-001 ISSUE-R1-002\n- **Engineer Position**: x\n---\n",
		"## Response to ISSUE-R2-001\n**Engineer Position:** DISAGREE\n",
		"```\n## DISAGREE: ISSUE-R1-001\n",
		"## Disagree: `ISSUE-R1-001`\n| ISSUE-R1-001 | TBD |\n> ISSUE-R1-001 out of scope\n",
		"\uFEFF## Gap Resolution: GAP-FLOW-001\r\nISSUE-R1-001 deferred\r",
	}
}

func FuzzParseDisagreements(f *testing.F) {
	for _, s := range builtinSeeds() {
		f.Add(s)
	}
	specSeeds(f, func(s string) { f.Add(s) })
	f.Fuzz(func(t *testing.T, s string) {
		for _, d := range parseEngineerDisagreements(s) {
			// IDs are returned as written (ISSUE-R1-000 included, for
			// validate to reject), but always as one whole ID token.
			if d.IssueID != "" && !slices.Equal(gap.FindIssueIDs(d.IssueID), []string{d.IssueID}) {
				t.Errorf("IssueID %q is not an issue ID token", d.IssueID)
			}
			if d.Line < 1 {
				t.Errorf("line %d", d.Line)
			}
		}
		res := DetectExplicit(ExplicitInput{Round: 2, EngineerOutput: s, Issues: fuzzIssues()})
		if len(res.Conflicts)+len(res.Logged)+len(res.Unmatched) != res.Submitted {
			t.Errorf("%d conflicts + %d logged + %d unmatched != %d submitted", len(res.Conflicts), len(res.Logged), len(res.Unmatched), res.Submitted)
		}
		_ = CheckCompliance(s, []Ruling{{ID: "DECISION-R2-001", IssueID: "ISSUE-R1-001", ChosenOption: "A", Subject: "Retry budget unbounded", EngineerPosition: "Unbounded retries keep the loop simple and fast."}})
	})
}

func fuzzIssues() []Issue {
	return []Issue{
		{ID: "ISSUE-R1-001", Round: 1, Severity: gap.Critical, Gap: "GAP-FLOW-001", Summary: "Retry budget unbounded", Suggestion: "Cap retries at two", Location: "Section 4"},
		{ID: "ISSUE-R1-002", Round: 1, Severity: gap.High, Gap: "GAP-FLOW-002", Summary: "Threshold arbitrary", Suggestion: "Use schema validation"},
		{ID: "ISSUE-R1-003", Round: 1, Severity: gap.Low, Summary: "Typo"},
	}
}

func FuzzImplicit(f *testing.F) {
	for _, s := range builtinSeeds() {
		f.Add(s, "## Gap Resolution: GAP-FLOW-001\nold text\n")
	}
	specSeeds(f, func(s string) { f.Add(s, s) })
	f.Fuzz(func(t *testing.T, out, prev string) {
		for _, fd := range DetectImplicit(ImplicitInput{Round: 2, EngineerOutput: out, PreviousOutput: prev, Issues: fuzzIssues()}) {
			n := len(fd.Heuristics)
			switch {
			case n == 0:
				t.Errorf("%s: finding without heuristics", fd.IssueID)
			case (n >= 2 || fd.Heuristics[0] == unaddressedID && fd.Issue.Severity == gap.Critical) != (fd.Confidence == gap.ConfidenceHigh):
				t.Errorf("%s: confidence %s for %v", fd.IssueID, fd.Confidence, fd.Heuristics)
			case fd.Escalate != (fd.Issue.Severity.AtLeastHigh() && fd.Confidence == gap.ConfidenceHigh):
				t.Errorf("%s: escalate %v", fd.IssueID, fd.Escalate)
			}
			p := ImplicitQuestion(fd)
			if err := validateAnswer(p, p.Default, ""); err != nil {
				t.Error(err)
			}
		}
	})
}

// TestLinearTime guards against super-linear work on adversarial inputs.
// Growing an input 8x must grow the bytes allocated (deterministic, immune
// to machine load) by at most 12x, and the best-of-three time by at most
// 24x; quadratic code would take 64x.
func TestLinearTime(t *testing.T) {
	units := map[string]string{
		"headings":   "## DISAGREE: ISSUE-R1-001\n**Rationale:** x\n",
		"informal":   "## Disagree\n**Engineer Position:** DISAGREE ISSUE-R1-001\n",
		"references": "ISSUE-R1-001 out of scope ISSUE-R1-002 TBD\n",
		"one line":   "ISSUE-R1-001 `x` deferred retry budget ",
		"tables":     "| ISSUE-R1-001 | future work |\n",
		"lists":      "- ISSUE-R1-002 threshold\n  continued schema\n",
		"backticks":  "`` ` ``` ` ",
		"gap blocks": "## Gap Resolution: GAP-FLOW-001\nRetry budget unbounded is TBD.\n",
	}
	work := func(s string) {
		parseEngineerDisagreements(s)
		DetectExplicit(ExplicitInput{EngineerOutput: s, Issues: fuzzIssues()})
		DetectImplicit(ImplicitInput{Round: 2, EngineerOutput: s, PreviousOutput: s, Issues: fuzzIssues()})
		CheckCompliance(s, []Ruling{{ID: "DECISION-R2-001", IssueID: "ISSUE-R1-001", ChosenOption: "A", EngineerPosition: "Unbounded retries keep the loop simple."}})
	}
	for name, u := range units {
		t.Run(name, func(t *testing.T) {
			scaling.Linear(t, name, 500, 8, func(n int) string { return strings.Repeat(u, n) }, work)
		})
	}
}
