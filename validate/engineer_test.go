package validate

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/gap"
)

func TestEngineerFailures(t *testing.T) {
	valid := gapSection("GAP-FLOW-001")
	tests := []struct {
		name string
		src  string
		opt  Options
		want outcome
	}{
		// Tier 1: presence, size, encoding.
		{"empty", "", Options{}, failed(EmptyOutput, 0, "File exists but is empty")},
		{"whitespace only", " \n\t \r\n", Options{}, failed(EmptyOutput, 0, "File exists but is empty (only whitespace)")},
		{"BOM only", "\uFEFF\n", Options{}, failed(EmptyOutput, 0, "File exists but is empty (only whitespace)")},
		{"above the size limit", valid, Options{MaxOutputBytes: 100},
			failed(WrongFormat, 0, fmt.Sprintf("output is %d bytes, above the 100-byte limit (MaxOutputBytes)", len(valid)))},
		{"NUL byte", "## Gap Resolution: GAP-FLOW-001\n**Confidence:** HIGH\n\x00\x01", Options{},
			failed(WrongFormat, 3, "line 3: output contains a NUL byte: it is binary data, not markdown text")},
		{"invalid UTF-8 after CRLF", "## Gap Resolution: GAP-FLOW-001\r\n**Confidence:** \xc3\x28", Options{},
			failed(WrongFormat, 2, "line 2: output is not valid UTF-8 text (invalid byte 0xC3)")},

		// Tier 1: required markers, outside code.
		{"no header", "# Proposal\n\nSome prose about GAP-FLOW-001.\n**Confidence:** HIGH\n", Options{},
			failed(WrongFormat, 0, "Missing required header: '## Gap Resolution:'")},
		{"header only inside a fence", "Example:\n\n```markdown\n## Gap Resolution: GAP-FLOW-001\n```\n\n**Confidence:** HIGH\n", Options{},
			failed(WrongFormat, 4, "Missing required header: '## Gap Resolution:' (line 4 has it only inside code, where it is an example and does not count)")},
		{"header only inside a tilde fence", "~~~\n## Gap Resolution: GAP-FLOW-001\n~~~\n**Confidence:** HIGH\n", Options{},
			failed(WrongFormat, 2, "Missing required header: '## Gap Resolution:' (line 2 has it only inside code, where it is an example and does not count)")},
		{"header only in inline code", "Write `## Gap Resolution: GAP-FLOW-001` first.\n**Confidence:** HIGH\n", Options{},
			failed(WrongFormat, 1, "Missing required header: '## Gap Resolution:' (line 1 has it only inside code, where it is an example and does not count)")},
		{"header inside an unterminated fence", "Intro\n```\n## Gap Resolution: GAP-FLOW-001\n**Confidence:** HIGH\n", Options{},
			failed(WrongFormat, 2, "line 2: the fence \"```\" opens a code block that is never closed, so everything after it reads as code: close it with a matching fence line, or remove it")},
		// Levels 1 to 4, other separators and cases are read (TestNormalizeEngineer).
		{"header at level 5", "##### Gap Resolution: GAP-FLOW-001\n\n**Confidence:** HIGH\n", Options{},
			failed(WrongFormat, 1, `Missing required header: '## Gap Resolution:' (line 1 has "##### Gap Resolution: GAP-FLOW-001", which does not read as the header: write it as '## Gap Resolution: …', a heading of level 1 to 4)`)},
		{"header misspelt", "## Gap Resolutions GAP-FLOW-001\n**Confidence:** HIGH\n", Options{},
			failed(WrongFormat, 1, `Missing required header: '## Gap Resolution:' (line 1 has "## Gap Resolutions GAP-FLOW-001", which does not read as the header: write it as '## Gap Resolution: …', a heading of level 1 to 4)`)},
		{"header without a separator or an ID", "## Gap Resolution\n**Confidence:** HIGH\n", Options{},
			failed(WrongFormat, 1, `Missing required header: '## Gap Resolution:' (line 1 has "## Gap Resolution", which does not read as the header: write it as '## Gap Resolution: …', a heading of level 1 to 4)`)},
		{"header in running text", "Start with ## Gap Resolution: GAP-FLOW-001 please.\n", Options{},
			failed(WrongFormat, 1, "Missing required header: '## Gap Resolution:' (line 1 mentions it in running text, not as a heading of its own)")},
		{"missing confidence", "## Gap Resolution: GAP-FLOW-001\n\n" + filler + "\n", Options{},
			failed(WrongFormat, 0, "Missing required: '**Confidence:**' statement")},
		{"confidence only in a fence", "## Gap Resolution: GAP-FLOW-001\n\n```\n**Confidence:** HIGH\n```\n", Options{},
			failed(WrongFormat, 4, "Missing required: '**Confidence:**' statement (line 4 has it only inside code, where it is an example and does not count)")},
		{"confidence misspelt", "## Gap Resolution: GAP-FLOW-001\n\n**Confidense:** HIGH\n", Options{},
			failed(WrongFormat, 0, "Missing required: '**Confidence:**' statement")},

		// Tier 2: gaps addressed. Every malformed ID is a header naming no gap.
		{"header names no gap", "## Gap Resolution: Retry handling\n\n**Confidence:** HIGH\n", Options{},
			failed(NoGapsAddressed, 1, noGap(1, "## Gap Resolution: Retry handling", true))},
		{"placeholder GAP-XXX", "## Gap Resolution: GAP-XXX\n\n**Confidence:** HIGH\n", Options{},
			failed(NoGapsAddressed, 1, noGap(1, "## Gap Resolution: GAP-XXX", true))},
		{"category of 11 letters", "## Gap Resolution: GAP-ABCDEFGHIJK-001\n**Confidence:** HIGH\n", Options{},
			failed(NoGapsAddressed, 1, noGap(1, "## Gap Resolution: GAP-ABCDEFGHIJK-001", true))},
		{"category of 1 letter", "## Gap Resolution: GAP-A-001\n**Confidence:** HIGH\n", Options{},
			failed(NoGapsAddressed, 1, noGap(1, "## Gap Resolution: GAP-A-001", true))},
		{"lower-case category", "## Gap Resolution: GAP-flow-001\n**Confidence:** HIGH\n", Options{},
			failed(NoGapsAddressed, 1, noGap(1, "## Gap Resolution: GAP-flow-001", true))},
		{"2-digit number", "## Gap Resolution: GAP-FLOW-01\n**Confidence:** HIGH\n", Options{},
			failed(NoGapsAddressed, 1, noGap(1, "## Gap Resolution: GAP-FLOW-01", true))},
		{"4-digit number is not GAP-FLOW-001", "## Gap Resolution: GAP-FLOW-0012\n**Confidence:** HIGH\n", Options{},
			failed(NoGapsAddressed, 1, noGap(1, "## Gap Resolution: GAP-FLOW-0012", true))},
		{"two suffix letters", "## Gap Resolution: GAP-FLOW-007ab\n**Confidence:** HIGH\n", Options{},
			failed(NoGapsAddressed, 1, noGap(1, "## Gap Resolution: GAP-FLOW-007ab", true))},
		{"ID only in inline code", "## Gap Resolution: `GAP-FLOW-001`\n**Confidence:** HIGH\n", Options{},
			failed(NoGapsAddressed, 1, noGap(1, "## Gap Resolution: `GAP-FLOW-001`", true))},
		{"a later header names no gap", valid + "\n## Gap Resolution: TBD\n\n**Confidence:** LOW\n", Options{},
			failed(NoGapsAddressed, 21, noGap(21, "## Gap Resolution: TBD", false))},

		// Tier 2: cross-references (round-09 §2 message, with the line of the first).
		{"addressed gap unknown", gapSection("GAP-FLOW-099"), Options{KnownGaps: ids("GAP-FLOW-001")},
			failed(InconsistentRefs, 1, "line 1: Invalid gap references: [GAP-FLOW-099]. These do not exist in status.md.")},
		{"unknown references sorted, first line named",
			valid + "\nSee GAP-QA-002 and GAP-FLOW-100, then GAP-QA-002 again.\n", Options{KnownGaps: ids("GAP-FLOW-001")},
			failed(InconsistentRefs, 21, "line 21: Invalid gap references: [GAP-FLOW-100, GAP-QA-002]. These do not exist in status.md.")},
		{"split sub-gap is its own ID", valid + "\nGAP-FLOW-007a splits GAP-FLOW-007.\n", Options{KnownGaps: ids("GAP-FLOW-001", "GAP-FLOW-007")},
			failed(InconsistentRefs, 21, "line 21: Invalid gap references: [GAP-FLOW-007a]. These do not exist in status.md.")},
		{"empty known list makes every reference invalid", valid, Options{KnownGaps: []gap.ID{}},
			failed(InconsistentRefs, 1, "line 1: Invalid gap references: [GAP-FLOW-001]. These do not exist in status.md.")},
		{"an ID inside a new-gap entry is a reference",
			strings.Replace(valid, "None.", "- Follow-up of GAP-FLOW-050 on retries", 1), Options{KnownGaps: ids("GAP-FLOW-001")},
			failed(InconsistentRefs, 19, "line 19: Invalid gap references: [GAP-FLOW-050]. These do not exist in status.md.")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Engineer(tt.src, tt.opt)
			if diff := cmp.Diff(tt.want, outcomeOf(got)); diff != "" {
				t.Errorf("Engineer outcome (-want +got):\n%s", diff)
			}
		})
	}
}

// noGap is the NO_GAPS_ADDRESSED message for a header line; alone adds the
// spec's sentence for an output that addresses no gap at all.
func noGap(line int, header string, alone bool) string {
	msg := fmt.Sprintf("line %d: %q carries no valid gap ID (want GAP-{2-10 uppercase letters}-{3 digits}, e.g. GAP-FLOW-001; IDs in `code` do not count)", line, header)
	if alone {
		msg += ". No gap IDs found in output. Expected references like GAP-FLOW-001."
	}
	return msg
}

func TestEngineerIDBoundaries(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		known []gap.ID
		want  []gap.ID
	}{
		{"category of 2 letters", gapSection("GAP-UX-001"), ids("GAP-UX-001"), ids("GAP-UX-001")},
		{"category of 10 letters", gapSection("GAP-ABCDEFGHIJ-001"), ids("GAP-ABCDEFGHIJ-001"), ids("GAP-ABCDEFGHIJ-001")},
		{"split suffix", gapSection("GAP-FLOW-007a"), ids("GAP-FLOW-007a"), ids("GAP-FLOW-007a")},
		{"highest number", gapSection("GAP-FLOW-999"), ids("GAP-FLOW-999"), ids("GAP-FLOW-999")},
		{"sorted by category then number then suffix",
			doc(gapSection("GAP-UX-001"), gapSection("GAP-FLOW-007a"), gapSection("GAP-FLOW-007"), gapSection("GAP-FLOW-002"), gapSection("GAP-ABCDEFGHIJ-001")),
			ids("GAP-UX-001", "GAP-FLOW-007a", "GAP-FLOW-007", "GAP-FLOW-002", "GAP-ABCDEFGHIJ-001"),
			ids("GAP-ABCDEFGHIJ-001", "GAP-FLOW-002", "GAP-FLOW-007", "GAP-FLOW-007a", "GAP-UX-001")},
		// Word boundaries: longer tokens are no reference to a known gap,
		// and not a reference at all, so they cannot fail the check.
		{"longer tokens are not references",
			gapSection("GAP-FLOW-001") + "\nGAP-FLOW-0012, xGAP-FLOW-002, GAP-FLOW-003X, GAP-FLOW-003_1, GAP-FLOW-004ab and GAP-ABCDEFGHIJK-001 are not IDs.\n",
			ids("GAP-FLOW-001"), ids("GAP-FLOW-001")},
		{"references in code are examples",
			gapSection("GAP-FLOW-001") + "\n```\n## Gap Resolution: GAP-FLOW-900\nGAP-FLOW-901\n```\nand `GAP-FLOW-902` inline.\n",
			ids("GAP-FLOW-001"), ids("GAP-FLOW-001")},
		{"headers with a trailing ATX closing sequence", "## Gap Resolution: GAP-FLOW-001 ##\n\n**Confidence:** HIGH\n", ids("GAP-FLOW-001"), ids("GAP-FLOW-001")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Engineer(tt.src, Options{KnownGaps: tt.known})
			if !got.Success {
				t.Fatalf("Engineer failed: %s %s", got.FailureType, got.Message)
			}
			if diff := cmp.Diff(tt.want, got.GapsAddressed); diff != "" {
				t.Errorf("GapsAddressed (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEngineerSkipsCrossRefsWithoutGapList(t *testing.T) {
	src := gapSection("GAP-FLOW-001") + "\nSee GAP-FLOW-500.\n"
	if got := Engineer(src, Options{}); !got.Success {
		t.Errorf("nil KnownGaps: %s %s, want success (check skipped)", got.FailureType, got.Message)
	}
	if got := Engineer(src, Options{KnownGaps: ids("GAP-FLOW-001")}); got.FailureType != InconsistentRefs {
		t.Errorf("with KnownGaps: %q, want INCONSISTENT_REFS", got.FailureType)
	}
}

// TestEngineerParse checks every parsed field on one document that has
// several sections, warnings, new gaps, a DISAGREE block and responses.
func TestEngineerParse(t *testing.T) {
	src := `# Engineer Proposals - Round 3

## Gap Resolution: GAP-FLOW-002 (Revised)

**Confidence:** medium — depends on the tokenizer

### Proposed Solution

Short.

## Gap Resolution: GAP-FLOW-003 and GAP-FLOW-004 ##

Body mentions GAP-FLOW-002.

### Details

#### Trade-offs

- none really

### New Gaps Introduced

- GAP-FLOW-019: Plain title
- GAP-FLOW-020 (HIGH): With severity
- **GAP-FLOW-021** [CRITICAL] — Bold with brackets
* GAP-FLOW-022: Trailing severity (LOW)
1. GAP-FLOW-023 (Severity: high): Numbered
- None
- A new gap without an ID
  - GAP-FLOW-002 is a reference in a nested item
- GAP-FLOW-019: Listed twice

## Gap Resolution: GAP-FLOW-002

**Confidence:** LOW

Second pass, still short; GAP-FLOW-019 is referenced before it is known.

### Trade-offs

Fine.

## Response to ISSUE-R2-001 and ISSUE-R2-002

Answered in the sections above.

### Response to ISSUE-R2-001 again

Repeat.
`
	got := Engineer(src, Options{KnownGaps: ids("GAP-FLOW-002", "GAP-FLOW-003", "GAP-FLOW-004", "GAP-FLOW-020")})
	body := func(from, to string) string {
		i := strings.Index(src, from)
		j := strings.Index(src, to)
		return src[i+len(from) : j]
	}
	chars := func(s string) int { return utf8.RuneCountInString(strings.TrimSpace(s)) }
	s1 := body("## Gap Resolution: GAP-FLOW-002 (Revised)\n", "## Gap Resolution: GAP-FLOW-003")
	s2 := body("## Gap Resolution: GAP-FLOW-003 and GAP-FLOW-004 ##\n", "## Gap Resolution: GAP-FLOW-002\n")
	s3 := body("## Gap Resolution: GAP-FLOW-002\n", "## Response to")
	want := Result{
		Success: true,
		Message: "Content valid with warnings: 2 gaps addressed",
		Tier:    Content,
		Text:    src,
		Warnings: []string{
			"line 3: Gap GAP-FLOW-002 section is thin (" + fmt.Sprint(chars("(Revised)\n"+s1)) + " chars)",
			"line 3: Missing ### Trade-offs section (recommended) for GAP-FLOW-002",
			"line 11: header names several gaps (GAP-FLOW-003, GAP-FLOW-004); only GAP-FLOW-003 counts as addressed: give each gap its own section",
			"line 11: Gap Resolution for GAP-FLOW-003 has no '**Confidence:**' statement",
			"line 24: new gap GAP-FLOW-020 already exists in the gap list",
			"line 29: entry under \"New Gaps Introduced\" does not start with a gap ID, so it is not recorded as a new gap (write \"- GAP-AREA-NNN: title\")",
			"line 31: new gap GAP-FLOW-019 is listed again (first at line 23); the first entry counts",
			"line 33: second Gap Resolution section for GAP-FLOW-002 (first at line 3)",
			"line 33: Gap GAP-FLOW-002 section is thin (" + fmt.Sprint(chars(s3)) + " chars)",
		},
		GapsAddressed: ids("GAP-FLOW-002", "GAP-FLOW-003"),
		Sections: []GapSection{
			{ID: "GAP-FLOW-002", Suffix: "(Revised)", Confidence: "MEDIUM", Body: s1, Line: 3, EndLine: 10,
				Subsections: []string{"Proposed Solution"}, Chars: chars("(Revised)\n" + s1)},
			{ID: "GAP-FLOW-003", Suffix: "and GAP-FLOW-004", Body: s2, Line: 11, EndLine: 32,
				Subsections: []string{"Details", "New Gaps Introduced"}, Chars: chars("and GAP-FLOW-004 ##\n" + s2)},
			{ID: "GAP-FLOW-002", Confidence: "LOW", Body: s3, Line: 33, EndLine: 42,
				Subsections: []string{"Trade-offs"}, Chars: chars(s3)},
		},
		NewGaps: []NewGap{
			{ID: "GAP-FLOW-019", Severity: gap.Medium, Title: "Plain title", Line: 23, FromGap: "GAP-FLOW-003"},
			{ID: "GAP-FLOW-020", Severity: gap.High, Title: "With severity", Line: 24, FromGap: "GAP-FLOW-003"},
			{ID: "GAP-FLOW-021", Severity: gap.Critical, Title: "Bold with brackets", Line: 25, FromGap: "GAP-FLOW-003"},
			{ID: "GAP-FLOW-022", Severity: gap.Low, Title: "Trailing severity", Line: 26, FromGap: "GAP-FLOW-003"},
			{ID: "GAP-FLOW-023", Severity: gap.High, Title: "Numbered", Line: 27, FromGap: "GAP-FLOW-003"},
		},
		Responses: []string{"ISSUE-R2-001", "ISSUE-R2-002"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Engineer (-want +got):\n%s", diff)
	}
}
