package conflict

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/gap"
)

func retryIssue(sev gap.Severity) Issue {
	return Issue{
		ID: "ISSUE-R3-004", Round: 3, Severity: sev, Gap: "GAP-FLOW-002",
		Summary:    "Retry budget is not bounded per gap",
		Suggestion: "Cap validation retries at two attempts per gap and escalate afterwards",
		Location:   "Section 4 Retry Policy",
	}
}

const prevRetry = `# Engineer Proposals - Round 3

## Gap Resolution: GAP-FLOW-002

### Proposed Solution

Failed outputs are retried until they validate. Each retry carries the
failure message so that the role can correct itself.
`

// revised is a GAP-FLOW-002 section that takes the suggestion up.
const revised = `## Gap Resolution: GAP-FLOW-002

### Proposed Solution

Validation retries are capped at two attempts per gap. After the second
failed attempt the Mediator escalates to the user with the failure history.
`

func TestImplicitHeuristics(t *testing.T) {
	tests := []struct {
		name  string
		sev   gap.Severity
		out   string
		want  []Heuristic // nil: no finding
		conf  gap.Confidence
		evide string // a substring of the evidence, when set
	}{
		{
			name: "addressed in substance: response heading",
			out: revised + `
### Response to ISSUE-R3-004

Retries are now bounded as suggested: two attempts, then escalation.
`,
		},
		{
			name: "addressed in substance: ID in a paragraph",
			out: `## Gap Resolution: GAP-FLOW-002

We address ISSUE-R3-004 by capping validation retries at two attempts per
gap; afterwards the Mediator escalates to the user.
`,
		},
		{
			name: "addressed in substance: quotes the location",
			out: `## Gap Resolution: GAP-FLOW-002

ISSUE-R3-004 is answered in Section 4 (Retry Policy), rewritten below.

### Section 4: Policy

Each role gets a fixed budget; the budget is stated in the config.
`,
		},
		{
			name: "H1 only: revised without naming the issue",
			out:  revised,
			want: []Heuristic{unaddressedID}, conf: gap.ConfidenceMedium,
			evide: "Round 4 Engineer output contains no reference to ISSUE-R3-004",
		},
		{
			name: "H1 on CRITICAL is HIGH confidence",
			sev:  gap.Critical,
			out:  revised,
			want: []Heuristic{unaddressedID}, conf: gap.ConfidenceHigh,
		},
		{
			name: "ID only inside code counts as no reference",
			out:  revised + "\n```\nISSUE-R3-004 handled\n```\n\nSee `ISSUE-R3-004` above.\n",
			want: []Heuristic{unaddressedID}, conf: gap.ConfidenceMedium,
		},
		{
			name: "H2 only: answered, but the gap has no section",
			out: `## Gap Resolution: GAP-FLOW-003

ISSUE-R3-004 asks to cap validation retries at two attempts per gap; the
shared retry loop described here does that and escalates afterwards.
`,
			want: []Heuristic{gapNotRevisited}, conf: gap.ConfidenceMedium,
			evide: "has no Gap Resolution section for GAP-FLOW-002",
		},
		{
			name: "H3 only: ID only in a table row",
			out: revised + `
| Issue | Status |
|-------|--------|
| ISSUE-R3-004 | Addressed |
`,
			want: []Heuristic{ackWithoutResponse}, conf: gap.ConfidenceMedium,
			evide: "ISSUE-R3-004 appears only in list, table or quote lines (line 10)",
		},
		{
			name: "H3 only: ID only in list items",
			out:  revised + "\n- ISSUE-R3-004: noted\n- ISSUE-R3-004 (see above)\n",
			want: []Heuristic{ackWithoutResponse}, conf: gap.ConfidenceMedium,
		},
		{
			name: "H3: a heading with nothing under it is no response",
			out:  revised + "\n### ISSUE-R3-004\n",
			want: []Heuristic{ackWithoutResponse}, conf: gap.ConfidenceMedium,
		},
		{
			name: "H4 only: gap section unchanged since last round",
			out: prevRetry + `
## Responses

ISSUE-R3-004: validation retries are capped at two attempts per gap and
escalated afterwards, see the retry section.
`,
			want: []Heuristic{semanticNonResponse}, conf: gap.ConfidenceMedium,
			evide: "GAP-FLOW-002 section unchanged from Round 3 (100% token similarity)",
		},
		{
			name: "H4 only: response ignores the suggestion",
			out: `## Gap Resolution: GAP-FLOW-002

Regarding ISSUE-R3-004, the introduction was reworded for clarity and the
diagram now shows the roles in color.
`,
			want: []Heuristic{semanticNonResponse}, conf: gap.ConfidenceMedium,
			evide: "Response shares 0 of 5 keywords (0%)",
		},
		{
			name: "H5 only: deflection in the responding paragraph",
			out: `## Gap Resolution: GAP-FLOW-002

ISSUE-R3-004 is out of scope for this round; validation retries stay as
they are.
`,
			want: []Heuristic{deflection}, conf: gap.ConfidenceMedium,
			evide: `Deflection "out of scope" near the reference on line 3`,
		},
		{
			name: "H5: phrase on a later line of the paragraph",
			out: `## Gap Resolution: GAP-FLOW-002

ISSUE-R3-004 concerns validation retries. Bounding them is
TBD.
`,
			want: []Heuristic{deflection}, conf: gap.ConfidenceMedium,
			evide: `Deflection "tbd" near the reference on line 4`,
		},
		{
			name: "H5: heading reference, deflection in the block under it",
			out: revised + `
### Response to ISSUE-R3-004

Deferred to the next version.
`,
			want: []Heuristic{deflection}, conf: gap.ConfidenceMedium,
		},
		{
			name: "no H5: deflection phrase inside code",
			out: `## Gap Resolution: GAP-FLOW-002

ISSUE-R3-004: validation retries are capped at two attempts per gap and
escalated afterwards; the ` + "`out of scope`" + ` label is only a log tag.

` + "```\n# future work: out of scope, TBD, deferred\n```\n",
		},
		{
			name: "no H5: deflection far from the reference",
			out: `## Gap Resolution: GAP-FLOW-002

ISSUE-R3-004: validation retries are capped at two attempts per gap and
escalated afterwards.

Colour themes for the status page are future work.
`,
		},
		{
			name: "H1 + H5 via a soft reference in the gap section: HIGH",
			out: `## Gap Resolution: GAP-FLOW-002

Bounding the retry budget per gap is future work; validation retries
stay unlimited, and escalation is not necessary.
`,
			want: []Heuristic{unaddressedID, deflection}, conf: gap.ConfidenceHigh,
		},
		{
			name: "everything missing: H1 H2 H4",
			out:  "## Gap Resolution: GAP-FLOW-009\n\nUnrelated work on logging.\n",
			want: []Heuristic{unaddressedID, gapNotRevisited, semanticNonResponse}, conf: gap.ConfidenceHigh,
		},
		{
			name: "explicit DISAGREE is a conflict, not a finding",
			out: revised + `
## DISAGREE: ISSUE-R3-004

**Reviewer Concern:**
> Retry budget is not bounded per gap

**Engineer Position:**
Unbounded retries are out of scope.

**Rationale:**
The escalation already bounds them.
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sev := tt.sev
			if sev == 0 {
				sev = gap.High
			}
			got := DetectImplicit(ImplicitInput{Round: 4, EngineerOutput: tt.out, PreviousOutput: prevRetry, Issues: []Issue{retryIssue(sev)}})
			if tt.want == nil {
				if len(got) != 0 {
					t.Fatalf("finding %+v, want none", got[0])
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("findings = %+v, want one", got)
			}
			f := got[0]
			if diff := cmp.Diff(tt.want, f.Heuristics); diff != "" {
				t.Errorf("heuristics (-want +got):\n%s\nevidence: %q", diff, f.Evidence)
			}
			if f.Confidence != tt.conf {
				t.Errorf("confidence = %s, want %s", f.Confidence, tt.conf)
			}
			if f.Escalate != (f.Confidence == gap.ConfidenceHigh) {
				t.Errorf("Escalate = %v for a %s issue at %s confidence (only HIGH confidence asks)", f.Escalate, sev, f.Confidence)
			}
			if tt.evide != "" && !strings.Contains(strings.Join(f.Evidence, "\n"), tt.evide) {
				t.Errorf("evidence %q lacks %q", f.Evidence, tt.evide)
			}
		})
	}
}

func TestImplicitFiltering(t *testing.T) {
	medium := retryIssue(gap.Medium)
	tests := []struct {
		name     string
		in       ImplicitInput
		want     []string
		escalate []bool
	}{
		{
			name: "MEDIUM issues are only logged",
			in:   ImplicitInput{Issues: []Issue{medium}},
			want: []string{"ISSUE-R3-004"}, escalate: []bool{false},
		},
		{
			name: "ignored issues are never flagged",
			in:   ImplicitInput{Issues: []Issue{retryIssue(gap.High)}, Ignore: IgnoreSet{}.with("ISSUE-R3-004")},
		},
		{
			name: "issues of gaps not assigned this round are skipped",
			in:   ImplicitInput{Issues: []Issue{retryIssue(gap.High)}, Assigned: []gap.ID{"GAP-FLOW-009"}},
		},
		{
			name: "assigned gaps are checked; issues without a gap always",
			in: ImplicitInput{Issues: []Issue{retryIssue(gap.High), {ID: "ISSUE-R3-001", Round: 3, Severity: gap.Critical, Summary: "Missing glossary"}},
				Assigned: []gap.ID{"GAP-FLOW-002"}},
			want: []string{"ISSUE-R3-001", "ISSUE-R3-004"}, escalate: []bool{true, true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.Round = 4
			tt.in.EngineerOutput = "## Gap Resolution: GAP-FLOW-009\n\nNothing relevant.\n"
			got := DetectImplicit(tt.in)
			var ids []string
			var esc []bool
			for _, f := range got {
				ids = append(ids, f.IssueID)
				esc = append(esc, f.Escalate)
			}
			if diff := cmp.Diff(tt.want, ids); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.escalate, esc); diff != "" {
				t.Errorf("escalate (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResolveImplicit(t *testing.T) {
	f := DetectImplicit(ImplicitInput{Round: 4, EngineerOutput: revised, Issues: []Issue{retryIssue(gap.High)}})[0]
	at := mustTime(t, "2026-01-12T10:00:00Z")

	t.Run("request explicit address", func(t *testing.T) {
		out, err := ResolveImplicit(f, "1", "Keep it short.", "", at, IgnoreSet{})
		if err != nil {
			t.Fatal(err)
		}
		if out.GapState != gap.NeedsRevision || out.Conflict != nil || out.Decision != nil {
			t.Errorf("outcome = %+v", out)
		}
		for _, s := range []string{"ISSUE-R3-004 (HIGH, GAP-FLOW-002) was not addressed in Round 4", "## DISAGREE: ISSUE-R3-004", "User note: Keep it short."} {
			if !strings.Contains(out.Instruction, s) {
				t.Errorf("instruction %q lacks %q", out.Instruction, s)
			}
		}
	})
	t.Run("convert", func(t *testing.T) {
		out, err := ResolveImplicit(f, "2", "", "", at, IgnoreSet{})
		if err != nil {
			t.Fatal(err)
		}
		c := out.Conflict
		if c == nil || c.Type != implicitConverted || c.Round != 4 || !c.DetectedAt.Equal(at) || c.Status != StatusUnresolved {
			t.Fatalf("conflict = %+v", c)
		}
		if diff := cmp.Diff([]string{"A", "B"}, keys(c.Options)); diff != "" {
			t.Errorf("HIGH implicit options (-want +got):\n%s", diff)
		}
		if !strings.Contains(present(*c), "Not explicitly stated. Engineer did not address this HIGH issue in Round 4.") {
			t.Error("presentation lacks the implicit position")
		}
	})
	t.Run("waive", func(t *testing.T) {
		out, err := ResolveImplicit(f, "3", "Reviewer was too strict.", "DECISION-R4-002", at, IgnoreSet{})
		if err != nil {
			t.Fatal(err)
		}
		d := out.Decision
		if d == nil || d.ID != "DECISION-R4-002" || d.Round != 4 || d.ChosenOption != OptionWaive || d.Type != implicitWaived || d.Rationale != "Reviewer was too strict." {
			t.Fatalf("decision = %+v", d)
		}
		entry := renderDecision(*d)
		for _, s := range []string{"**Conflict Type:** Implicit (waived via GAP-FLOW-013)", "- **Chosen Option:** Waive (issue closed)"} {
			if !strings.Contains(entry, s) {
				t.Errorf("entry lacks %q:\n%s", s, entry)
			}
		}
		if _, err := ResolveImplicit(f, "3", "", "", at, IgnoreSet{}); err == nil {
			t.Error("waiver without a decision ID: no error")
		}
	})
	t.Run("ignore", func(t *testing.T) {
		out, err := ResolveImplicit(f, "4", "", "", at, IgnoreSet{IssueIDs: []string{"ISSUE-R2-001"}})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"ISSUE-R2-001", "ISSUE-R3-004"}, out.Ignore.IssueIDs); diff != "" {
			t.Errorf("ignore set (-want +got):\n%s", diff)
		}
		again := DetectImplicit(ImplicitInput{Round: 4, EngineerOutput: revised, Issues: []Issue{retryIssue(gap.High)}, Ignore: out.Ignore})
		if len(again) != 0 {
			t.Errorf("ignored issue flagged again: %+v", again)
		}
	})
	t.Run("option not offered", func(t *testing.T) {
		if _, err := ResolveImplicit(f, "5", "", "", at, IgnoreSet{}); err == nil || !strings.Contains(err.Error(), "want one of 1, 2, 3, 4") {
			t.Errorf("err = %v", err)
		}
	})
}
