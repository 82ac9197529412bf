package exemplar

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/gap"
)

// The spec's canonical examples (GAP-FLOW-008 §2), as a workflow spec's
// Section 7 would hold them.
const (
	canonicalEngineer = "## Gap Resolution: GAP-XXX\n\n**Confidence:** HIGH | MEDIUM | LOW\n\n### Proposed Solution\n[1-3 paragraphs describing the solution]\n\n### Examples\n[Concrete code/YAML/config examples with explanations]\n\n### Trade-offs\n**Pros:**\n- [Benefit 1]\n- [Benefit 2]\n\n**Cons:**\n- [Drawback 1]\n- [Drawback 2]\n\n### New Gaps Introduced\n- [GAP-YYY: Description] OR \"None\""
	canonicalReviewer = "## Review: [Gap ID or Section]\n\n### Critical Issues\n- **ISSUE-RN-001**: [Description]\n  - Location: [Exact text or section reference]\n  - Impact: [What breaks if not addressed]\n  - Suggestion: [How to fix]\n\n### High Priority\n[Same format as Critical]\n\n### Medium Priority\n[Same format]\n\n### Low Priority / Nits\n[Same format]\n\n### Consistency Checks\n- [ ] Consistent with related specs?\n- [ ] Migration path addressed?\n- [ ] Performance implications considered?"
)

// workflowSpec is a source document with Section 7 holding both examples
// as session artifacts: fenced, with YAML frontmatter, among other files.
func workflowSpec() string {
	return "# Refinement Workflow\n\n## 6. Roles\n\nThe Engineer writes `## Gap Resolution:` sections.\n\n```markdown\n## Gap Resolution: GAP-NOT-001\n\nAn example in section 6 is not canonical.\n```\n\n" +
		"## 7. Examples\n\n### 7.1 Example Session Artifacts\n\n#### status.md\n\n```markdown\n# Status\n\n## Gaps\n- GAP-FLOW-001 (HIGH): Error recovery\n```\n\n" +
		"#### engineer.md\n\n````markdown\n---\nround: 1\nrole: engineer\n---\n\n" + canonicalEngineer + "\n````\n\n" +
		"#### reviewer.md\n\n```markdown\n---\nround: 1\nrole: reviewer\n---\n" + canonicalReviewer + "\n```\n\n" +
		"## 8. Glossary\n\n## Review: this review heading is outside Section 7\n\nIgnored.\n"
}

func TestExtractCanonical(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want Canonical
	}{
		{
			name: "section 7 with both examples as fenced artifacts with frontmatter",
			src:  workflowSpec(),
			want: Canonical{Engineer: canonicalEngineer, Reviewer: canonicalReviewer},
		},
		{
			name: "unfenced examples at the level of the section do not end it",
			src:  "## 7. Examples\n\nThe format:\n\n" + canonicalEngineer + "\n\n---\n\n" + canonicalReviewer + "\n\n## 8. Next\n\ntext\n",
			want: Canonical{Engineer: canonicalEngineer, Reviewer: canonicalReviewer},
		},
		{
			name: "Section 7 wording, level 1, CRLF and BOM",
			src:  "\uFEFF# Section 7: Worked output\r\n\r\n" + strings.ReplaceAll("```\n"+canonicalEngineer+"\n```\n", "\n", "\r\n"),
			want: Canonical{Engineer: canonicalEngineer},
		},
		{
			name: "numbered 7 is preferred to an earlier Examples heading",
			src:  "## Examples\n\n```\n## Gap Resolution: GAP-OLD-001\n\nOld.\n```\n\n## 7 Format\n\n```\n## Gap Resolution: GAP-NEW-001\n\nNew.\n```\n",
			want: Canonical{Engineer: "## Gap Resolution: GAP-NEW-001\n\nNew."},
		},
		{
			name: "Examples heading when there is no section 7",
			src:  "# Spec\n\n### Worked examples\n\n~~~\n## Review: GAP-FLOW-001\n\n### Critical Issues\nNone found.\n~~~\n",
			want: Canonical{Reviewer: "## Review: GAP-FLOW-001\n\n### Critical Issues\nNone found."},
		},
		{
			name: "first block of each role wins, in document order",
			src:  "## 7. Examples\n\n```\n## Gap Resolution: GAP-A-001\n\nFirst.\n```\n\n### Gap Resolution: GAP-B-001\n\nSecond.\n",
			want: Canonical{Engineer: "## Gap Resolution: GAP-A-001\n\nFirst."},
		},
		{
			name: "a fenced artifact holding two resolutions yields the first",
			src:  "## 7. Examples\n\n```\n## Gap Resolution: GAP-A-001\n\nFirst.\n\n## Gap Resolution: GAP-A-002\n\nSecond.\n```\n",
			want: Canonical{Engineer: "## Gap Resolution: GAP-A-001\n\nFirst."},
		},
		{
			name: "indented fence content is de-indented",
			src:  "## 7. Examples\n\n1. Engineer:\n   ```\n   ## Gap Resolution: GAP-A-001\n\n   Body.\n   ```\n",
			want: Canonical{Engineer: "## Gap Resolution: GAP-A-001\n\nBody."},
		},
		{
			name: "malformed block skipped for a later well-formed one",
			src:  "## 7. Examples\n\n```\n## Gap Resolution: GAP-A-001\n```\n\n```\n## Gap Resolution: GAP-A-002\n\nBody.\n```\n",
			want: Canonical{Engineer: "## Gap Resolution: GAP-A-002\n\nBody."},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ExtractCanonical(tt.src)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Canonical mismatch (-want +got):\n%s", diff)
			}
			// An error exactly when a role is missing, naming that role.
			for _, role := range []gap.Role{gap.Engineer, gap.Reviewer} {
				missing := tt.want.For(role) == ""
				var ee *ExtractError
				found := roleError(err, role) != nil
				if missing != found {
					t.Errorf("%s missing=%v, but error %v", role, missing, err)
				}
				if found && (!errors.As(err, &ee) || !errors.Is(err, ErrNoExamples)) {
					t.Errorf("error %v is not an *ExtractError wrapping ErrNoExamples", err)
				}
			}
		})
	}
}

func TestExtractCanonicalErrors(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		wantIs  error
		wantErr string
	}{
		{
			name:    "empty source",
			src:     "",
			wantIs:  ErrNoExamplesSection,
			wantErr: `exemplar: no examples section: no heading of level 1-3 numbered 7 ("7.", "Section 7") or titled "Examples"`,
		},
		{
			name:    "no section 7: fall through",
			src:     "# Spec\n\n## 6. Roles\n\n## 70. Appendix\n\n#### 7. Too deep\n\n```\n## 7. In a fence\n```\n",
			wantIs:  ErrNoExamplesSection,
			wantErr: `exemplar: no examples section: no heading of level 1-3 numbered 7 ("7.", "Section 7") or titled "Examples"`,
		},
		{
			name:    "frontmatter comments are not headings",
			src:     "---\n# 7. Examples\ntitle: spec\n---\n\n# Spec\n\nNo examples.\n",
			wantIs:  ErrNoExamplesSection,
			wantErr: `exemplar: no examples section: no heading of level 1-3 numbered 7 ("7.", "Section 7") or titled "Examples"`,
		},
		{
			name:    "section 7 without examples",
			src:     "# Spec\n\n## 7. Examples\n\nTo be written.\n\n## Examples of use\n\nNone.\n",
			wantIs:  ErrNoExamples,
			wantErr: `exemplar: no example block: section "7. Examples" holds no "## Gap Resolution:" or "## Review:" block; 1 other candidate section(s) hold none either (line 3)`,
		},
		{
			name:    "malformed: a trailing separator is not a body (found by FuzzExtractCanonical)",
			src:     "# 7A00000\n# Review:\n\n--- ",
			wantIs:  ErrMalformedExample,
			wantErr: "exemplar: canonical engineer example: no example block: section \"7A00000\" holds no \"## Gap Resolution:\" block (line 1)\nexemplar: canonical reviewer example: malformed example: the \"## Review:\" block has nothing under its heading (line 2)",
		},
		{
			name:    "malformed: headings with nothing under them",
			src:     "## 7. Examples\n\n```\n## Gap Resolution: GAP-XXX\n```\n\n```\n## Review: X\n\n```\n",
			wantIs:  ErrMalformedExample,
			wantErr: "exemplar: canonical engineer example: malformed example: the \"## Gap Resolution:\" block has nothing under its heading (line 4)\nexemplar: canonical reviewer example: malformed example: the \"## Review:\" block has nothing under its heading (line 8)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ExtractCanonical(tt.src)
			if got != (Canonical{}) {
				t.Errorf("got examples %+v, want none", got)
			}
			if !errors.Is(err, tt.wantIs) {
				t.Fatalf("error %v, want one wrapping %v", err, tt.wantIs)
			}
			if diff := cmp.Diff(tt.wantErr, err.Error()); diff != "" {
				t.Errorf("message mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExtractCanonicalPartial(t *testing.T) {
	src := "## 7. Examples\n\n```\n" + canonicalEngineer + "\n```\n"
	got, err := ExtractCanonical(src)
	if got.Engineer != canonicalEngineer || got.Reviewer != "" {
		t.Errorf("got %+v, want the Engineer example only", got)
	}
	var ee *ExtractError
	if !errors.As(err, &ee) || ee.Role != gap.Reviewer || !errors.Is(err, ErrNoExamples) || ee.Line != 1 {
		t.Fatalf("error %#v, want a reviewer ErrNoExamples at line 1", err)
	}
	want := `exemplar: canonical reviewer example: no example block: section "7. Examples" holds no "## Review:" block (line 1)`
	if err.Error() != want {
		t.Errorf("message %q, want %q", err.Error(), want)
	}
}

func TestNumberedSeven(t *testing.T) {
	tests := []struct {
		title string
		want  bool
	}{
		{"7", true},
		{"7. Examples", true},
		{"7 Examples", true},
		{"7.1 Example session", true},
		{"7) Examples", true},
		{"Section 7", true},
		{"section 7: Examples", true},
		{"§7 Examples", true},
		{"§ 7", true},
		{"70. Appendix", false},
		{"17. Examples", false},
		{"Section 70", false},
		{"Round 7", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := numberedSeven(tt.title); got != tt.want {
			t.Errorf("numberedSeven(%q) = %v, want %v", tt.title, got, tt.want)
		}
	}
}

func TestFrontmatter(t *testing.T) {
	tests := []struct {
		name, in, blanked, stripped string
	}{
		{"yaml", "---\na: 1\n---\nbody", "\n\n\nbody", "body"},
		{"dots close it", "---\na: 1\n...\nbody", "\n\n\nbody", "body"},
		{"trailing spaces", "--- \na: 1\n---  \nbody", "\n\n\nbody", "body"},
		{"unterminated is not frontmatter", "---\na: 1\nbody", "---\na: 1\nbody", "---\na: 1\nbody"},
		{"not at the start", "x\n---\na\n---\n", "x\n---\na\n---\n", "x\n---\na\n---\n"},
		{"none", "body", "body", "body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := blankFrontmatter(tt.in); got != tt.blanked {
				t.Errorf("blankFrontmatter = %q, want %q", got, tt.blanked)
			}
			if got := stripFrontmatter(tt.in); got != tt.stripped {
				t.Errorf("stripFrontmatter = %q, want %q", got, tt.stripped)
			}
		})
	}
}

func TestExtractCanonicalMalformedAndMissing(t *testing.T) {
	// One role malformed, the other absent: both explained.
	_, err := ExtractCanonical("## 7. Examples\n\n```\n## Review: X\n```\n")
	want := "exemplar: canonical engineer example: no example block: section \"7. Examples\" holds no \"## Gap Resolution:\" block (line 1)\n" +
		"exemplar: canonical reviewer example: malformed example: the \"## Review:\" block has nothing under its heading (line 4)"
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
	if !errors.Is(err, ErrMalformedExample) || !errors.Is(err, ErrNoExamples) {
		t.Errorf("error %v should wrap both sentinels", err)
	}
}
