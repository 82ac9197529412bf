package rollback

import (
	"fmt"
	"strings"
	"testing"

	"github.com/refine-spec/refine/internal/scaling"

	"github.com/google/go-cmp/cmp"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/markdown"
)

func TestCountVague(t *testing.T) {
	for _, tc := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"appropriate", 1},
		{"Appropriate APPROPRIATE appropriately", 2},
		{"use as needed", 1},
		{"use as\n  needed", 1},       // phrases span any whitespace
		{"use as, needed", 0},         // but not punctuation
		{"some somewhat handsome", 1}, // whole words only
		{"some-thing", 0},
		{"it is context-dependent", 1},
		{"context dependent", 0},
		{"It depends.", 1},
		{"'appropriate threshold'", 1},
		{"you should consider it", 1},
		{"should", 0},
		{"may might could", 3},
		{"when necessary if applicable as required", 3},
		{"typically generally various certain", 4},
		{"sufficient adequate properly correctly reasonable", 5},
		{"naïve somé", 0},
		{"\xff\xfesome\xff", 1},
	} {
		if got := countVagueWords(tc.text); got != tc.want {
			t.Errorf("CountVague(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
	if n := len(vagueWordList()); n != 21 {
		t.Errorf("%d vague words, the spec lists 21", n)
	}
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

func TestAbstractOutputThreshold(t *testing.T) {
	for _, tc := range []struct {
		vague int
		fire  bool
	}{{0, false}, {5, false}, {6, true}, {8, true}} {
		d := DetectPatterns(Input{Engineer: gapSectionText("GAP-FLOW-007", tc.vague), Assigned: []gap.ID{"GAP-FLOW-007"}})
		if got := d.Gaps[0].vague; got != tc.vague {
			t.Errorf("%d vague words counted as %d (code must not count)", tc.vague, got)
		}
		_, fired := d.finding(AbstractOutput)
		if fired != tc.fire {
			t.Errorf("%d vague words: ABSTRACT_OUTPUT fired = %v, want %v", tc.vague, fired, tc.fire)
		}
		if len(d.Findings) != map[bool]int{true: 1, false: 0}[tc.fire] {
			t.Errorf("%d vague words: findings %v", tc.vague, d.Patterns())
		}
	}
	// The threshold is per gap: two gaps with 4 each do not fire.
	two := gapSectionText("GAP-FLOW-001", 4) + gapSectionText("GAP-FLOW-002", 4)
	d := DetectPatterns(Input{Engineer: two})
	if _, fired := d.finding(AbstractOutput); fired {
		t.Errorf("4 + 4 vague words in two gaps fired ABSTRACT_OUTPUT")
	}
	three := gapSectionText("GAP-FLOW-001", 4) + gapSectionText("GAP-FLOW-002", 6)
	d = DetectPatterns(Input{Engineer: three})
	f, fired := d.finding(AbstractOutput)
	if !fired || !cmp.Equal(f.gaps, []gap.ID{"GAP-FLOW-002"}) {
		t.Errorf("finding = %+v", f)
	}
	if want := `Solution uses vague language ("appropriate", "reasonable", "sufficient", "adequate", "properly", "correctly") — GAP-FLOW-002: 6 vague terms, more than 5 per gap`; f.Detail != want {
		t.Errorf("detail = %q\nwant     %q", f.Detail, want)
	}
	if f.short != "6 vague terms in GAP-FLOW-002" {
		t.Errorf("short = %q", f.short)
	}
	// Without gap sections, the whole output counts.
	d = DetectPatterns(Input{Engineer: "may may may may may may"})
	if f, ok := d.finding(AbstractOutput); !ok || f.short != "6 vague terms" {
		t.Errorf("whole output: %+v %v", f, ok)
	}
}

func TestDetectPatterns(t *testing.T) {
	complete := gapSectionText("GAP-FLOW-001", 0)
	for _, tc := range []struct {
		name  string
		in    Input
		want  []Pattern
		check func(t *testing.T, d Detection)
	}{
		{name: "clean", in: Input{Engineer: complete, Assigned: []gap.ID{"GAP-FLOW-001"}, Known: []gap.ID{"GAP-FLOW-001"}, Context: "x"}},
		{
			name: "no gap headers",
			in:   Input{Engineer: "# Proposal\n\n**Example 1:** a\n\n**Example 2:** b\n"},
			want: []Pattern{MissingSections},
			check: func(t *testing.T, d Detection) {
				f, _ := d.finding(MissingSections)
				if f.Detail != "## Gap Resolution headers absent" {
					t.Errorf("detail %q", f.Detail)
				}
			},
		},
		{
			name: "missing examples section, tradeoffs spelled differently",
			in: Input{Engineer: "## Gap Resolution: GAP-FLOW-001\n\n### Tradeoffs\n\nx\n\n**Example 1:** a\n\n**Example 2:** b\n\n" +
				"## Gap Resolution: GAP-FLOW-002\n\n### Trade offs\n\n### Examples\n\n- one\n- two\n"},
			want: []Pattern{MissingSections},
			check: func(t *testing.T, d Detection) {
				f, _ := d.finding(MissingSections)
				if f.Detail != "Examples section absent (GAP-FLOW-001)" || f.short != "Examples absent in GAP-FLOW-001" {
					t.Errorf("finding %+v", f)
				}
			},
		},
		{
			name: "narrow examples",
			in:   Input{Engineer: "## Gap Resolution: GAP-FLOW-001\n\n### Examples\n\n**Example 1:** one\n\n### Trade-offs\n\nx\n"},
			want: []Pattern{NarrowExamples},
			check: func(t *testing.T, d Detection) {
				f, _ := d.finding(NarrowExamples)
				if f.Detail != "Only 1 example, no edge cases" || f.short != "1 example" {
					t.Errorf("finding %+v", f)
				}
			},
		},
		{
			name: "examples counted from headings, list items and code blocks",
			in: Input{Engineer: "## Gap Resolution: GAP-FLOW-001\n\n### Examples\n\n#### Example: a\n\n#### Example: b\n\n### Trade-offs\n\nx\n" +
				"## Gap Resolution: GAP-FLOW-002\n\n### Examples\n\n- a\n  - nested\n- b\n\n### Trade-offs\n\nx\n" +
				"## Gap Resolution: GAP-FLOW-003\n\n### Examples\n\n```\na\n```\n\n```\nb\n```\n\n### Trade-offs\n\nx\n"},
			check: func(t *testing.T, d Detection) {
				for _, g := range d.Gaps {
					if g.Examples != 2 {
						t.Errorf("%s: %d examples, want 2", g.Gap, g.Examples)
					}
				}
			},
		},
		{
			name: "inconsistent refs",
			in: Input{
				Engineer: complete + "See GAP-FLOW-099 and `GAP-FLOW-098`.\n\n### New Gaps Introduced\n\n- GAP-FLOW-050: new\n",
				Reviewer: "## Review: GAP-FLOW-001\n\nCompare GAP-ROLE-007.\n",
				Known:    []gap.ID{"GAP-FLOW-001"},
			},
			want: []Pattern{inconsistentRefs},
			check: func(t *testing.T, d Detection) {
				f, _ := d.finding(inconsistentRefs)
				if !cmp.Equal(f.terms, []string{"GAP-FLOW-099", "GAP-ROLE-007"}) {
					t.Errorf("terms %v", f.terms)
				}
			},
		},
		{name: "refs unchecked without a gap list", in: Input{Engineer: complete + "GAP-FLOW-099\n"}},
		{
			name: "domain confusion: undefined term",
			in:   Input{Engineer: complete + "Move to ROLLBACK_PENDING, then ROUND_COMPLETE.\n\n| STATE_X | defined here |\n\nUse STATE_X.\n", Context: "ROUND_COMPLETE is a state"},
			want: []Pattern{domainConfusion},
			check: func(t *testing.T, d Detection) {
				f, _ := d.finding(domainConfusion)
				if f.Detail != "Terms used but not defined: ROLLBACK_PENDING" {
					t.Errorf("detail %q", f.Detail)
				}
			},
		},
		{
			name: "domain confusion: reviewer flag",
			in:   Input{Engineer: complete, Reviewer: "### High Priority\n\n- ISSUE-R5-001: the term archive tier is undefined\n"},
			want: []Pattern{domainConfusion},
		},
		{
			name: "scope drift: other gap instead",
			in:   Input{Engineer: strings.ReplaceAll(complete, "GAP-FLOW-001", "GAP-FLOW-002"), Assigned: []gap.ID{"GAP-FLOW-001"}},
			want: []Pattern{scopeDrift},
			check: func(t *testing.T, d Detection) {
				f, _ := d.finding(scopeDrift)
				if f.Detail != "Addressed GAP-FLOW-002 instead of assigned GAP-FLOW-001" {
					t.Errorf("detail %q", f.Detail)
				}
				if d.Gaps[0].Gap != "GAP-FLOW-001" || d.Gaps[0].Addressed != coverageUnaddressed || d.Gaps[1].Gap != "GAP-FLOW-002" {
					t.Errorf("gaps %+v", d.Gaps)
				}
			},
		},
		{
			name: "scope drift: extra gap",
			in:   Input{Engineer: complete + strings.ReplaceAll(complete, "GAP-FLOW-001", "GAP-FLOW-002"), Assigned: []gap.ID{"GAP-FLOW-001"}},
			want: []Pattern{scopeDrift},
			check: func(t *testing.T, d Detection) {
				f, _ := d.finding(scopeDrift)
				if f.Detail != "Addressed GAP-FLOW-002, which was not assigned (assigned: GAP-FLOW-001)" {
					t.Errorf("detail %q", f.Detail)
				}
			},
		},
		{
			name: "headers in code blocks do not count",
			in:   Input{Engineer: "```\n## Gap Resolution: GAP-FLOW-001\n### Trade-offs\n```\n"},
			want: []Pattern{MissingSections, NarrowExamples},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := DetectPatterns(tc.in)
			if diff := cmp.Diff(tc.want, d.Patterns(), cmp.Comparer(func(a, b []Pattern) bool { return len(a) == 0 && len(b) == 0 || cmp.Equal([]Pattern(a), []Pattern(b)) })); diff != "" {
				t.Errorf("patterns (-want +got):\n%s\nfindings: %+v", diff, d.Findings)
			}
			if tc.check != nil {
				tc.check(t, d)
			}
		})
	}
}

func TestExampleLine(t *testing.T) {
	for line, want := range map[string]bool{
		"**Example 1: Auto-Retry Success**": true,
		"- *Example:* a":                    true,
		"Example 2: b":                      true,
		"Example usage follows":             false,
		"**Examples**":                      false,
		"An example":                        false,
		"> **Example**":                     true,
		"":                                  false,
	} {
		if got := exampleLine(line); got != want {
			t.Errorf("exampleLine(%q) = %v", line, got)
		}
	}
}

func TestNormTitle(t *testing.T) {
	for _, s := range []string{"Trade-offs", "Tradeoffs", "trade offs", "TRADE-OFF", "Trade-offs and Risks"} {
		if !strings.HasPrefix(normTitle(s), normTitle("Trade-offs")) {
			t.Errorf("%q does not satisfy Trade-offs", s)
		}
	}
	if strings.HasPrefix(normTitle("Trades"), normTitle("Trade-offs")) {
		t.Error("Trades satisfies Trade-offs")
	}
}

func TestTokenizeLinear(t *testing.T) {
	// A pathological input stays linear: one long word, many separators.
	long := func(n int) string { return strings.Repeat("a", n) + strings.Repeat(" -", n) }
	if n := len(tokenize(long(1 << 16))); n != 1 {
		t.Errorf("%d tokens", n)
	}
	scaling.Linear(t, "tokenize", 1<<13, 16, long, func(s string) { tokenize(s) })
	scaling.Linear(t, "markdown", 1<<13, 16, long, func(s string) { markdown.Parse(s) })
}

// TestAdversarialInputsScaleLinearly feeds inputs that would be quadratic
// for naive de-duplication (thousands of distinct sections, terms and
// IDs) at two sizes and checks that the work grows linearly.
func TestAdversarialInputsScaleLinearly(t *testing.T) {
	cat := func(i int) string { // distinct gap categories AA, AB, …
		return string(rune('A'+i/26%26)) + string(rune('A'+i%26)) + string(rune('A'+i/676%26))
	}
	inputs := func(n int) map[string]Input {
		var gaps, subs, terms, refs strings.Builder
		subs.WriteString("## Gap Resolution: GAP-FLOW-001\n")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&gaps, "## Gap Resolution: GAP-%s-%03d\n### S%d\n", cat(i), i%1000, i)
			fmt.Fprintf(&subs, "### Title %d\nsome text\n", i)
			fmt.Fprintf(&terms, "Use T_%d here.\n", i)
			fmt.Fprintf(&refs, "See GAP-%s-%03d.\n", cat(i), i%1000)
		}
		return map[string]Input{
			"gap sections": {Engineer: gaps.String(), Assigned: []gap.ID{"GAP-FLOW-001"}},
			"subsections":  {Engineer: subs.String()},
			"terms":        {Engineer: terms.String(), Context: terms.String()[:1000]},
			"refs":         {Engineer: refs.String(), Known: []gap.ID{"GAP-FLOW-001"}},
		}
	}
	for _, name := range []string{"gap sections", "subsections", "terms", "refs"} {
		scaling.Linear(t, name, 500, 16, func(n int) Input { return inputs(n)[name] }, func(in Input) {
			_ = DetectPatterns(in)
			_ = Diagnose([]AttemptInfo{{Attempt: 1, Reason: in.Engineer, Engineer: in.Engineer}, {Attempt: 2, Reason: in.Engineer, Engineer: in.Engineer}})
		})
	}
}
