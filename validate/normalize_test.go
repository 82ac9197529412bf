package validate

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/gap"
)

// engineerAnswer is a valid Engineer answer with two resolutions (the
// first holding an ```http example), new gaps in both, a response and a
// DISAGREE block: what the quirks below are applied to.
const engineerAnswer = `## Gap Resolution: GAP-FLOW-001

**Confidence:** HIGH

### Proposed Solution

` + filler + `

` + "```http" + `
GET /v1/orders?cursor=abc HTTP/1.1
` + "```" + `

### Trade-offs

- Simple, at the cost of one more field.

### New Gaps Introduced

- GAP-FLOW-009 (LOW): Tune the backoff ceiling

## Gap Resolution: GAP-FLOW-002

**Confidence:** MEDIUM

### Proposed Solution

` + filler + `

### Trade-offs

- Needs a clock.

### New Gaps Introduced

- GAP-FLOW-010: Jitter policy

### Response to ISSUE-R1-001

Addressed above.

## DISAGREE: ISSUE-R1-002

**Reviewer Concern:**
> "Use a queue."

**Engineer Position:**
A queue is not needed.

**Rationale:**
One process, one retry loop.
`

// reading is what a validation read: what must not change under a benign quirk.
type reading struct {
	Success     bool
	FailureType FailureType
	Gaps        []gap.ID
	Confidence  []string
	NewGaps     []string
	Disagree    []string
	Responses   []string
	Issues      []string
	Verdict     Verdict
}

func readingOf(r Result) reading {
	rd := reading{Success: r.Success, FailureType: r.FailureType, Gaps: r.GapsAddressed, Responses: r.Responses, Verdict: r.Verdict}
	for _, s := range r.Sections {
		rd.Confidence = append(rd.Confidence, string(s.ID)+"="+string(s.Confidence))
	}
	for _, ng := range r.NewGaps {
		rd.NewGaps = append(rd.NewGaps, string(ng.ID)+"/"+ng.Severity.String()+"/"+string(ng.FromGap))
	}
	for _, dg := range r.Disagreements {
		rd.Disagree = append(rd.Disagree, dg.IssueID+"/"+boolMark(dg.ReviewerConcern != "")+boolMark(dg.EngineerPosition != "")+boolMark(dg.Rationale != ""))
	}
	for _, is := range r.Issues {
		rd.Issues = append(rd.Issues, is.ID+"/"+is.Severity.String()+"/"+string(is.Gap))
	}
	return rd
}

func boolMark(b bool) string {
	if b {
		return "+"
	}
	return "-"
}

func kindsOf(r Result) []string {
	var out []string
	for _, n := range r.Normalized {
		out = append(out, n.Kind)
	}
	slices.Sort(out)
	return out
}

// checkNormalized checks that a variant reads as the canonical answer and
// says which kinds were normalized, each as one NORMALIZED warning.
func checkNormalized(t *testing.T, want, got Result, kinds []string) {
	t.Helper()
	if diff := cmp.Diff(readingOf(want), readingOf(got)); diff != "" {
		t.Errorf("reading changed (-canonical +variant):\n%s\nmessage: %s\ntext:\n%s", diff, got.Message, got.Text)
	}
	slices.Sort(kinds)
	if diff := cmp.Diff(kinds, kindsOf(got)); diff != "" {
		t.Errorf("normalized kinds (-want +got):\n%s", diff)
	}
	n := 0
	for _, w := range got.Warnings {
		if strings.HasPrefix(w, "NORMALIZED: ") {
			n++
		}
	}
	if n != len(got.Normalized) {
		t.Errorf("%d NORMALIZED warnings for %d kinds: %q", n, len(got.Normalized), got.Warnings)
	}
	if strings.Count(got.Text, "\n") != strings.Count(strings.ReplaceAll(got.Text, "\r", ""), "\n") {
		t.Errorf("text keeps a CR")
	}
}

// sub replaces the n-th (1-based; 0 for all) occurrence of old.
func sub(s, old, new string, n int) string {
	if n == 0 {
		return strings.ReplaceAll(s, old, new)
	}
	i := -1
	for k := 0; k < n; k++ {
		j := strings.Index(s[i+1:], old)
		if j < 0 {
			return s + "\n<missing " + old + ">"
		}
		i += 1 + j
	}
	return s[:i] + new + s[i+len(old):]
}

func TestNormalizeEngineer(t *testing.T) {
	opt := Options{KnownGaps: ids("GAP-FLOW-001", "GAP-FLOW-002"), KnownIssues: []string{"ISSUE-R1-001", "ISSUE-R1-002"}}
	want := Engineer(engineerAnswer, opt)
	if !want.Success || len(want.Normalized) != 0 || len(want.GapsAddressed) != 2 || len(want.NewGaps) != 2 || len(want.Disagreements) != 1 {
		t.Fatalf("canonical answer: %s %s %+v", want.FailureType, want.Message, readingOf(want))
	}
	a := engineerAnswer
	tests := []struct {
		name  string
		src   string
		kinds []string
	}{
		{"wrapped in ```markdown, with an inner ```http example", "```markdown\n" + a + "```\n", []string{KindWrapperFence}},
		{"wrapped in ````markdown", "````markdown\n" + a + "````", []string{KindWrapperFence}},
		{"wrapped in ~~~", "\n~~~\n" + a + "~~~\n\n", []string{KindWrapperFence}},
		{"wrapped in ```md", "```md\n" + a + "```\n", []string{KindWrapperFence}},
		{"wrapped in a bare fence", "```\n" + a + "```", []string{KindWrapperFence}},
		{"a closed <think> block first", "<think>\nThe user wants two gaps.\n## Gap Resolution: GAP-FLOW-404\n</think>\n" + a, []string{KindThinkBlock}},
		{"a closed <thinking> block, then a wrapper", "<thinking>plan</thinking>\n```markdown\n" + a + "```\n", []string{KindThinkBlock, KindWrapperFence}},
		{"an unclosed <think> block", "<think>\nLet me plan: GAP-FLOW-404 is not mine.\n\n" + a, []string{KindThinkBlock}},
		{"headers at level 3", sub(a, "## Gap Resolution:", "### Gap Resolution:", 0), []string{KindHeadingLevel}},
		{"headers at level 1", sub(a, "## Gap Resolution:", "# Gap Resolution:", 0), []string{KindHeadingLevel}},
		{"second header demoted", sub(a, "## Gap Resolution:", "### Gap Resolution:", 2), []string{KindHeadingLevel}},
		{"em dash", sub(a, "Gap Resolution:", "Gap Resolution —", 0), []string{KindSeparator}},
		{"en dash", sub(a, "Gap Resolution:", "Gap Resolution –", 0), []string{KindSeparator}},
		{"hyphen", sub(a, "Gap Resolution:", "Gap Resolution -", 0), []string{KindSeparator}},
		{"no separator before the ID", sub(a, "Gap Resolution:", "Gap Resolution", 0), []string{KindSeparator}},
		{"lower case", sub(a, "Gap Resolution:", "gap resolution:", 0), []string{KindKeywordCase}},
		{"upper case", sub(a, "Gap Resolution:", "GAP RESOLUTION:", 0), []string{KindKeywordCase}},
		{"numbered 1.", sub(sub(a, "## Gap Resolution:", "## 1. Gap Resolution:", 1), "## Gap Resolution:", "## 2) Gap Resolution:", 1), []string{KindNumbered}},
		{"lettered A.", sub(a, "## Gap Resolution:", "## A. Gap Resolution:", 0), []string{KindNumbered}},
		{"emoji", sub(a, "## Gap Resolution:", "## ✅ Gap Resolution:", 0), []string{KindEmoji}},
		{"emphasis inside the heading", sub(a, "## Gap Resolution: GAP-FLOW-001", "## **Gap Resolution:** GAP-FLOW-001", 1), []string{KindEmphasis}},
		{"bold line", sub(a, "## Gap Resolution: GAP-FLOW-002", "**Gap Resolution: GAP-FLOW-002**", 1), []string{KindBoldHeader}},
		{"bold label and ID", sub(a, "## Gap Resolution: GAP-FLOW-002", "**Gap Resolution:** GAP-FLOW-002", 1), []string{KindBoldHeader}},
		{"setext ---", sub(a, "## Gap Resolution: GAP-FLOW-002\n", "Gap Resolution: GAP-FLOW-002\n-----------------------------\n", 1), []string{KindSetext}},
		{"setext ===", sub(a, "## Gap Resolution: GAP-FLOW-001\n", "Gap Resolution: GAP-FLOW-001\n====\n", 1), []string{KindSetext}},
		{"a title after the ID", sub(a, "GAP-FLOW-001\n", "GAP-FLOW-001 — Retry policy\n", 1), nil},
		{"closing #s", sub(a, "GAP-FLOW-002\n", "GAP-FLOW-002 ##\n", 1), nil},
		{"**Confidence: HIGH**", sub(a, "**Confidence:** HIGH", "**Confidence: HIGH**", 1), []string{KindConfidence}},
		{"**Confidence**: HIGH", sub(a, "**Confidence:** HIGH", "**Confidence**: HIGH", 1), []string{KindConfidence}},
		{"Confidence Level: High", sub(a, "**Confidence:** HIGH", "Confidence Level: High", 1), []string{KindConfidence}},
		{"**Confidence Level:** MEDIUM", sub(a, "**Confidence:** MEDIUM", "**Confidence Level:** MEDIUM", 1), []string{KindConfidence}},
		{"- Confidence: HIGH", sub(a, "**Confidence:** HIGH", "- Confidence: HIGH", 1), []string{KindConfidence}},
		{"### Confidence: HIGH", sub(a, "**Confidence:** HIGH", "### Confidence: HIGH", 1), []string{KindConfidence}},
		{"confidence in lower case", sub(a, "**Confidence:** HIGH", "**Confidence:** high", 1), nil},
		{"### New Gaps", sub(a, "### New Gaps Introduced", "### New Gaps", 0), []string{KindSectionTitle}},
		{"### 4. New Gaps Introduced", sub(a, "### New Gaps Introduced", "### 4. New Gaps Introduced", 0), []string{KindNumbered}},
		{"bold New Gaps", sub(a, "### New Gaps Introduced", "**New Gaps Introduced:**", 0), []string{KindBoldHeader}},
		{"Tradeoffs and Trade offs", sub(sub(a, "### Trade-offs", "### Tradeoffs", 1), "### Trade-offs", "### Trade offs", 1), nil},
		{"### 3. Trade-offs", sub(a, "### Trade-offs", "### 3. Trade-offs", 0), []string{KindNumbered}},
		{"a commented-out header", sub(a, "## Gap Resolution: GAP-FLOW-002", "<!-- ## Gap Resolution: GAP-FLOW-404\ndraft -->\n## Gap Resolution: GAP-FLOW-002", 1), []string{KindHTMLComment}},
		{"U+2011 in IDs", strings.ReplaceAll(strings.ReplaceAll(a, "GAP-FLOW-", "GAP\u2011FLOW\u2011"), "ISSUE-R1-", "ISSUE\u2011R1\u2011"), []string{KindIDHyphen}},
		{"zero-width space in an ID", sub(a, "GAP-FLOW-002\n", "GAP-FL\u200bOW-002\n", 1), []string{KindIDHyphen}},
		{"## Disagree:", sub(a, "## DISAGREE:", "## Disagree:", 1), []string{KindKeywordCase}},
		{"### DISAGREE —", sub(a, "## DISAGREE:", "### DISAGREE —", 1), []string{KindHeadingLevel, KindSeparator}},
		{"bold DISAGREE line", sub(a, "## DISAGREE: ISSUE-R1-002", "**DISAGREE: ISSUE-R1-002**", 1), []string{KindBoldHeader}},
		{"**Rationale**:", sub(a, "**Rationale:**", "**Rationale**:", 1), []string{KindDisagreeLabel}},
		{"labels in lower case", sub(sub(a, "**Rationale:**", "**rationale:**", 1), "**Engineer Position:**", "Engineer position:", 1), []string{KindDisagreeLabel}},
		{"labels as headings", sub(a, "**Reviewer Concern:**", "### Reviewer Concern", 1), []string{KindDisagreeLabel}},
		{"CRLF and a BOM", "\uFEFF" + strings.ReplaceAll(a, "\n", "\r\n"), nil},
		{"preamble and closing remark", "Here is my proposal.\n\n" + a + "\nLet me know if anything is unclear.\n", []string{KindClosingRemark}},
		{"a closing-like list item is content", a + "\n- Let me know of any change by email.\n", nil},
		{"a closing-like line in the last paragraph is content", a + "Receivers let me know\nhope this helps\n", nil},
		{"a wrapper after a preamble, with an inner ```http example", "Here you go:\n\n```markdown\n" + a + "```\n", []string{KindWrapperFence}},
		{"a wrapper between a preamble and a closing remark", "Sure! Here is the resolution.\n```md\n" + a + "```\nLet me know if you need changes.\n", []string{KindWrapperFence}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Engineer(tt.src, opt)
			checkNormalized(t, want, got, tt.kinds)
			if lines := strings.Count(strings.ReplaceAll(strings.ReplaceAll(tt.src, "\r\n", "\n"), "\r", "\n"), "\n"); strings.Count(got.Text, "\n") != lines {
				t.Errorf("text has %d line breaks, the answer %d: lines must be kept", strings.Count(got.Text, "\n"), lines)
			}
			if u := Unread(got); u != nil {
				t.Errorf("Unread: %q", u)
			}
			// Normalize gives the text the validator read.
			if text, _ := Normalize(tt.src); text != got.Text {
				t.Errorf("Normalize differs from Result.Text:\n%s\n---\n%s", text, got.Text)
			}
		})
	}
}

func TestNormalizeLinesPointIntoTheAnswer(t *testing.T) {
	src := "<think>\nplan\n</think>\n```markdown\n" + sub(engineerAnswer, "## Gap Resolution:", "### Gap Resolution —", 2) + "```\n"
	r := Engineer(src, Options{})
	if !r.Success {
		t.Fatalf("%s: %s", r.FailureType, r.Message)
	}
	lines := strings.Split(src, "\n")
	for _, s := range r.Sections {
		if !strings.Contains(lines[s.Line-1], string(s.ID)) || !strings.Contains(lines[s.Line-1], "Gap Resolution") {
			t.Errorf("section %s at line %d, which reads %q", s.ID, s.Line, lines[s.Line-1])
		}
	}
	want := []Normalization{
		{Kind: KindThinkBlock, Count: 1, Line: 1, First: "<think>"},
		{Kind: KindWrapperFence, Count: 1, Line: 4, First: "```markdown"},
		{Kind: KindHeadingLevel, Count: 1, Line: 25, First: "### Gap Resolution — GAP-FLOW-002"},
		{Kind: KindSeparator, Count: 1, Line: 25, First: "### Gap Resolution — GAP-FLOW-002"},
	}
	if diff := cmp.Diff(want, r.Normalized); diff != "" {
		t.Errorf("Normalized (-want +got):\n%s", diff)
	}
	if r.Warnings[0] != `NORMALIZED: think-block ×1 (first at line 1: "<think>")` {
		t.Errorf("first warning %q", r.Warnings[0])
	}
}

// failCase is an answer that must still fail, with its type, line and a
// part of its message.
type failCase struct {
	name string
	src  string
	opt  Options
	want FailureType
	line int
	msg  string
}

func runFailCases(t *testing.T, tests []failCase, validate func(string, Options) Result) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := validate(tt.src, tt.opt)
			if r.FailureType != tt.want || r.Line != tt.line || !strings.Contains(r.Message, tt.msg) || !r.Retriable {
				t.Errorf("got %s at line %d (retriable %v): %s\nwant %s at line %d with %q", r.FailureType, r.Line, r.Retriable, r.Message, tt.want, tt.line, tt.msg)
			}
		})
	}
}

// lineOf returns the 1-based line of the first occurrence of sub in s.
func lineOf(s, sub string) int { return strings.Count(s[:strings.Index(s, sub)], "\n") + 1 }

func TestEngineerStillFails(t *testing.T) {
	a := engineerAnswer
	end := strings.Count(a, "\n") + 2 // the line after a blank one appended to a
	runFailCases(t, []failCase{
		// The inner ```http closes the ```markdown fence: what follows is
		// read, and the wrapper's closing fence is left open.
		{"four lines of remark before a fence: the fence is an example", "One.\nTwo.\nThree.\nFour.\n\n```markdown\n" + a + "```\n", Options{}, WrongFormat, end + 5, "never closed"},
		{"an example after a remark, fenced", "Here is an example of the format:\n\n```markdown\n" + gapSection("GAP-FLOW-001") + "```\n", Options{}, WrongFormat, 4, "only inside code"},
		{"an untagged fence after a preamble", "Here you go:\n\n```\n" + gapSection("GAP-FLOW-001") + "```\n", Options{}, WrongFormat, 4, "only inside code"},
		{"an inner fence left open", sub(a, "```\n\n### Trade-offs", "\n### Trade-offs", 1), Options{}, WrongFormat, 9, "never closed"},
		{"a gap heading without the keyword", a + "\n## GAP-FLOW-003: Caching\n\n" + filler + "\n", Options{}, AmbiguousStructure, end, "GAP-FLOW-003"},
		{"a level-5 resolution header", a + "\n##### Gap Resolution: GAP-FLOW-003\n", Options{}, AmbiguousStructure, end, "GAP-FLOW-003"},
		{"a DISAGREE list item", a + "\n- DISAGREE: ISSUE-R1-003 (too strict)\n", Options{}, AmbiguousStructure, end, "not a DISAGREE block"},
		{"a wrapper with a fence left open inside", "```markdown\n" + sub(a, "```\n\n### Trade-offs", "\n### Trade-offs", 1) + "```\n", Options{}, WrongFormat, 10, "inside it is never closed"},
		{"no confidence anywhere", strings.ReplaceAll(strings.ReplaceAll(a, "**Confidence:** HIGH", ""), "**Confidence:** MEDIUM", ""), Options{}, WrongFormat, 0, "Confidence"},
		{"a think block only", "<think>\nI should write the resolution.\n</think>\n", Options{}, EmptyOutput, 0, "think-block"},
		{"comments only", "<!-- nothing yet -->\n", Options{}, EmptyOutput, 0, "html-comment"},
		{"unknown ID", sub(a, "GAP-FLOW-002", "GAP-FLOW-404", 1), Options{KnownGaps: ids("GAP-FLOW-001", "GAP-FLOW-002")}, InconsistentRefs, lineOf(a, "## Gap Resolution: GAP-FLOW-002"), "GAP-FLOW-404"},
		{"a refusal", "I'm sorry, but I can't help with that request.", Options{}, Refusal, 0, "declines"},
		{"a refusal with an apology first", "I apologize, but I won't produce this document.", Options{}, Refusal, 0, "declines"},
		{"a question back", "Before I start: could you clarify which of the two retry policies the spec should keep?", Options{}, Clarification, 0, "asks a question back"},
		{"an offer to do more", "Would you like me to draft the resolutions for all three gaps, or only GAP-FLOW-001?", Options{}, Clarification, 0, "asks a question back"},
		{"a long answer without the header is a format error", strings.ReplaceAll(a, "## Gap Resolution:", "Resolution of") + "\nWould you like more detail?\n", Options{}, WrongFormat, 0, "Missing required header"},
		{"cut by the token limit", a, Options{FinishReason: "length"}, Truncated, 0, "cut by the token limit"},
		{"max_tokens", a, Options{FinishReason: "max_tokens"}, Truncated, 0, "max_tokens"},
		{"MCP maxTokens", a[:200], Options{FinishReason: "maxTokens"}, Truncated, 0, ""},
		{"a provider refusal", a, Options{FinishReason: "refusal"}, Refusal, 0, "the provider refused"},
		{"a content filter", a, Options{FinishReason: "content_filter"}, Refusal, 0, ""},
		{"over MaxOutputBytes stays WRONG_FORMAT even when cut", a, Options{FinishReason: "length", MaxOutputBytes: 100}, WrongFormat, 0, "MaxOutputBytes"},
	}, Engineer)
}

const reviewAnswer = `## Review: GAP-FLOW-001 and GAP-FLOW-002

### Critical Issues

- **ISSUE-R2-001**: The retry loop has no bound (GAP-FLOW-001)
  - Location: Section 2

### High Priority

- **ISSUE-R2-002**: Timestamps are local time (GAP-FLOW-002)

### Medium Priority

- **ISSUE-R2-003**: The table header is misleading

### Low Priority

- **ISSUE-R2-004**: Typo in the example

### Previously raised

- ISSUE-R1-004: fixed in this round.

### New Gaps Identified

- GAP-FLOW-011 (LOW): Clock skew
`

func TestNormalizeReviewer(t *testing.T) {
	opt := Options{Round: 2, KnownGaps: ids("GAP-FLOW-001", "GAP-FLOW-002")}
	want := Reviewer(reviewAnswer, opt)
	if !want.Success || len(want.Normalized) != 0 || len(want.Issues) != 4 || want.Verdict != Revise {
		t.Fatalf("canonical review: %s %s %+v", want.FailureType, want.Message, readingOf(want))
	}
	a := reviewAnswer
	high := func(title string) string { return sub(a, "### High Priority", title, 1) }
	tests := []struct {
		name  string
		src   string
		kinds []string
	}{
		{"wrapped in ```markdown", "```markdown\n" + a + "```\n", []string{KindWrapperFence}},
		{"### High", high("### High"), []string{KindSeverityTitle}},
		{"### High-Priority Issues", high("### High-Priority Issues"), []string{KindSeverityTitle}},
		{"## High Priority", high("## High Priority"), []string{KindHeadingLevel}},
		{"### 2. High Priority", high("### 2. High Priority"), []string{KindNumbered}},
		{"### High Severity", high("### High Severity"), []string{KindSeverityTitle}},
		{"### Major Issues", high("### Major Issues"), []string{KindSeverityTitle}},
		{"**High Priority** as a bold line", high("**High Priority**"), []string{KindBoldHeader}},
		{"### 🔴 High Priority", high("### 🔴 High Priority"), []string{KindEmoji}},
		{"#### High Priority", high("#### High Priority"), []string{KindHeadingLevel}},
		{"### HIGH PRIORITY", high("### HIGH PRIORITY"), nil},
		{"### High Priority Issues", high("### High Priority Issues"), nil},
		{"every severity by its word", sub(sub(sub(high("### High"), "### Critical Issues", "### Critical", 1), "### Medium Priority", "### Medium", 1), "### Low Priority", "### Low / Nits", 1), []string{KindSeverityTitle}},
		{"### Review:", sub(a, "## Review:", "### Review:", 1), []string{KindHeadingLevel}},
		{"# Review —", sub(a, "## Review:", "# Review —", 1), []string{KindHeadingLevel, KindSeparator}},
		{"bold review header", sub(a, "## Review: GAP-FLOW-001 and GAP-FLOW-002", "**Review: GAP-FLOW-001 and GAP-FLOW-002**", 1), []string{KindBoldHeader}},
		{"review title over the review", "# Review - Round 2\n\n" + a, nil},
		{"issues as #### headings", sub(sub(a, "- **ISSUE-R2-003**: The table header is misleading", "#### ISSUE-R2-003: The table header is misleading", 1), "- **ISSUE-R2-004**: Typo", "#### ISSUE-R2-004 — Typo", 1), nil},
		{"### New Gaps", sub(a, "### New Gaps Identified", "### New Gaps", 1), []string{KindSectionTitle}},
		{"* and + bullets", sub(sub(a, "- **ISSUE-R2-003**", "* **ISSUE-R2-003**", 1), "- **ISSUE-R2-004**", "+ **ISSUE-R2-004**", 1), nil},
		{"U+2011 in issue IDs", strings.ReplaceAll(a, "ISSUE-R2-", "ISSUE\u2011R2\u2011"), []string{KindIDHyphen}},
		{"a thinking block", "<thinking>\nFour issues.\n</thinking>\n\n" + a, []string{KindThinkBlock}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Reviewer(tt.src, opt)
			checkNormalized(t, want, got, tt.kinds)
			if u := Unread(got); u != nil {
				t.Errorf("Unread: %q", u)
			}
		})
	}
}

func TestReviewerStillFails(t *testing.T) {
	a := reviewAnswer
	other := sub(a, "### Previously raised", "### Other observations\n\n- **ISSUE-R2-005**: Naming\n", 1)
	runFailCases(t, []failCase{
		{"an issue under a heading that is not a severity", other, Options{Round: 2}, AmbiguousStructure, lineOf(other, "- **ISSUE-R2-005**"), "ISSUE-R2-005"},
		{"round unknown: the round of the issues read", other, Options{}, AmbiguousStructure, lineOf(other, "- **ISSUE-R2-005**"), "not an entry of a severity section"},
		{"a gap heading the review does not name", a + "\n## GAP-FLOW-003: Caching\n", Options{}, AmbiguousStructure, strings.Count(a, "\n") + 2, "GAP-FLOW-003"},
		{"a severity heading at level 5", sub(a, "### High Priority", "##### High Priority", 1), Options{Round: 2}, WrongFormat, lineOf(a, "### High Priority"), `no issue ID: "High Priority"`},
		{"a refusal", "I'm not able to help with reviewing this document.", Options{}, Refusal, 0, ""},
		{"cut", a, Options{FinishReason: "MAX_TOKENS"}, Truncated, 0, ""},
	}, Reviewer)
}

func TestNormalizeIntegration(t *testing.T) {
	in := integrationInput()
	want := Integration(integratedSpec, in)
	if !want.Success {
		t.Fatalf("canonical: %s", want.Message)
	}
	s := integratedSpec
	tests := []struct {
		name  string
		src   string
		kinds []string
	}{
		{"wrapped", "```markdown\n" + s + "```\n", []string{KindWrapperFence}},
		{"log at level 3", sub(s, "## Resolution Log", "### Resolution Log", 1), []string{KindHeadingLevel}},
		{"log as a bold line", sub(s, "## Resolution Log", "**Resolution Log**", 1), []string{KindBoldHeader}},
		{"numbered limitations", sub(s, "## Known Limitations", "## 4. Known Limitations", 1), nil},
		{"limitations in capitals", sub(s, "## Known Limitations", "## KNOWN LIMITATIONS", 1), nil},
		{"a think block", "<think>merge</think>\n" + s, []string{KindThinkBlock}},
		{"U+2011 in the log's IDs", sub(s, "| GAP-API-001 |", "| GAP\u2011API\u2011001 |", 1), []string{KindIDHyphen}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Integration(tt.src, in)
			if !got.Success || !cmp.Equal(want.Log, got.Log, cmp.Comparer(func(a, b LogEntry) bool { return a.Item == b.Item && slices.Equal(a.Sections, b.Sections) })) {
				t.Errorf("%s %s; log %+v", got.FailureType, got.Message, got.Log)
			}
			k := kindsOf(got.Result)
			slices.Sort(tt.kinds)
			if !slices.Equal(k, tt.kinds) {
				t.Errorf("kinds %q, want %q", k, tt.kinds)
			}
		})
	}
	if r := Integration("I can't help with rewriting this specification.", in); r.FailureType != Refusal {
		t.Errorf("refusal: %s %s", r.FailureType, r.Message)
	}
	if r := Integration(integratedSpec, IntegrationInput{Source: in.Source, FinishReason: "length"}); r.FailureType != Truncated {
		t.Errorf("cut: %s %s", r.FailureType, r.Message)
	}
	if r := Integration(sub(s, "## Known Limitations", "```\n## Known Limitations", 1), in); r.FailureType != IntegrationStructure || !strings.Contains(r.Message, "never closed") {
		t.Errorf("unclosed fence: %s %s", r.FailureType, r.Message)
	}
}

// An Engineer's "### Known Limitations" subsection is not an integrated
// spec's section, and a "**High**" line in its prose is no severity.
func TestNormalizeKeepsOtherRolesHeaders(t *testing.T) {
	src := sub(engineerAnswer, "### Trade-offs", "# Known Limitations\n\nNone.\n\n**High**\n\n### Trade-offs", 1)
	r := Engineer(src, Options{})
	if !r.Success || len(r.Normalized) != 0 {
		t.Errorf("%s %s %v", r.FailureType, r.Message, r.Normalized)
	}
	text, notes := Normalize(src)
	if text != src || notes != nil {
		t.Errorf("Normalize changed an Engineer answer's other headers: %v", notes)
	}
}

// A "Disagree:" heading naming no issue is an informal disagreement (the
// conflict package logs it), not a DISAGREE block to map or to fail.
func TestInformalDisagreeIsLeftAsWritten(t *testing.T) {
	src := engineerAnswer + "\n## Disagree: glossary wording\n\nThe terms are fine as written.\n"
	r := Engineer(src, Options{})
	if !r.Success || len(r.Normalized) != 0 || len(r.Disagreements) != 1 || r.Text != src {
		t.Errorf("%s %s, normalized %v, %d disagreements", r.FailureType, r.Message, r.Normalized, len(r.Disagreements))
	}
}

func TestFinishReasons(t *testing.T) {
	for _, tt := range []struct {
		reason                 string
		cut, refused, exceeded bool
	}{
		{"length", true, false, false}, {"LENGTH", true, false, false}, {"max_tokens", true, false, false},
		{"maxTokens", true, false, false}, {"MAX_TOKENS", true, false, false}, {"stop", false, false, false},
		{"end_turn", false, false, false}, {"", false, false, false}, {"tool_use", false, false, false},
		{"refusal", false, true, false}, {"content_filter", false, true, false}, {"SAFETY", false, true, false},
		{"model_context_window_exceeded", false, false, true}, {"context_length_exceeded", false, false, true},
	} {
		if CutByTokenLimit(tt.reason) != tt.cut || ProviderRefusal(tt.reason) != tt.refused || ContextExceeded(tt.reason) != tt.exceeded {
			t.Errorf("%q: cut %v refused %v exceeded %v", tt.reason, CutByTokenLimit(tt.reason), ProviderRefusal(tt.reason), ContextExceeded(tt.reason))
		}
	}
	r := NoText("only a tool_use block")
	if r.FailureType != MissingFile || r.Message != "the backend returned no text: only a tool_use block" || !r.Retriable || r.Tier != Structure {
		t.Errorf("NoText: %+v", r)
	}
	if r := Engineer(" \n\t", Options{}); r.FailureType != EmptyOutput {
		t.Errorf("whitespace: %s", r.FailureType)
	}
}

// A closing remark is not read into the last section: its line is blank
// in the text as read, so later checks (a section's likeness to the last
// round's) see the section as written.
func TestClosingRemarkLeavesTheLastSection(t *testing.T) {
	in := "# Engineer Proposals\n\n## Gap Resolution: GAP-FLOW-404\n\n**Confidence:** HIGH\n\n### Proposed Solution\n\nBound retries at 5.\n\nI hope this helps.\n"
	got, notes := Normalize(in)
	if strings.Contains(got, "hope") || strings.Count(got, "\n") != strings.Count(in, "\n") {
		t.Errorf("Normalize kept the remark or changed the line count: %q", got)
	}
	if len(notes) != 1 || notes[0].Kind != KindClosingRemark || notes[0].Line != 11 {
		t.Errorf("notes = %+v, want one closing-remark at line 11", notes)
	}
}

// An answer whose last line holds only a space TrimSpace removes (U+2000,
// a CR) is no closing remark and no panic: FuzzDiscovery found the blank
// line read as a remark's first byte.
func TestClosingRemarkCheckOnABlankLastLine(t *testing.T) {
	for _, in := range []string{"- \r--\r\r\u2000", "## Gap Resolution: GAP-FLOW-001\n\nx\n\n\u2000\n", "a\n\n\u3000\u2000 \n", "x\n\n\u00a0\n", "x\n\n\v\f\n"} {
		got, notes := Normalize(in)
		for _, n := range notes {
			if n.Kind == KindClosingRemark {
				t.Errorf("%q: a blank line read as a closing remark: %+v", in, notes)
			}
		}
		if strings.Count(got, "\n") != strings.Count(strings.ReplaceAll(strings.ReplaceAll(in, "\r\n", "\n"), "\r", "\n"), "\n") {
			t.Errorf("%q: line count changed: %q", in, got)
		}
		Engineer(in, Options{Round: 1})
		Reviewer(in, Options{Round: 1})
		Discovery(in, DiscoveryOptions{Spec: " "})
	}
}
