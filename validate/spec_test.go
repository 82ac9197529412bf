package validate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/gap"
)

// specDir holds the spec's five engineer proposals, beside the repository.
const specDir = "../testdata/spec"

func specFiles(t testing.TB) map[string]string {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(specDir, "*.md"))
	if len(paths) == 0 {
		t.Fatal("spec corpus testdata/spec is missing")
	}
	out := map[string]string{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = string(b)
	}
	return out
}

// The spec documents are real Engineer outputs: each validates, and their
// fenced examples (template headers, GAP-XXX, ISSUE-RN-001, "## Review:"
// blocks) count for nothing.
func TestSpecDocumentsAreValidEngineerOutputs(t *testing.T) {
	type found struct {
		Addressed []gap.ID
		New       []gap.ID
		Disagree  int
	}
	want := map[string]found{
		"round-01-flow-gaps.md": {
			Addressed: ids("GAP-FLOW-001", "GAP-FLOW-002", "GAP-FLOW-003", "GAP-FLOW-004", "GAP-FLOW-005", "GAP-FLOW-006", "GAP-FLOW-007"),
			New:       ids("GAP-FLOW-008", "GAP-FLOW-009", "GAP-FLOW-010", "GAP-FLOW-011", "GAP-ROLE-006", "GAP-FLOW-012", "GAP-FLOW-013", "GAP-FLOW-014", "GAP-FLOW-015"),
		},
		"round-06-rollback.md":            {Addressed: ids("GAP-FLOW-007"), New: ids("GAP-FLOW-017")},
		"round-07-example-attachment.md":  {Addressed: ids("GAP-FLOW-008"), New: ids("GAP-FLOW-018")},
		"round-09-error-recovery.md":      {Addressed: ids("GAP-FLOW-001")},
		"round-10-conflict-resolution.md": {Addressed: ids("GAP-FLOW-006")},
	}
	files := specFiles(t)
	for name, src := range files {
		t.Run(name, func(t *testing.T) {
			r := Engineer(src, Options{KnownGaps: gap.FindIDs(src)})
			if !r.Success || r.FailureType != "" {
				t.Fatalf("Engineer: %s %s", r.FailureType, r.Message)
			}
			got := found{Addressed: r.GapsAddressed, Disagree: len(r.Disagreements)}
			for _, ng := range r.NewGaps {
				got.New = append(got.New, ng.ID)
			}
			if diff := cmp.Diff(want[name], got); diff != "" {
				t.Errorf("found (-want +got):\n%s", diff)
			}
			// Without the gap list the check is skipped and nothing else changes.
			if r2 := Engineer(src, Options{}); !r2.Success || !cmp.Equal(r.GapsAddressed, r2.GapsAddressed) {
				t.Errorf("without KnownGaps: %s %s", r2.FailureType, r2.Message)
			}
			// They are not Reviewer outputs: their "## Review:" headers are all fenced.
			if r3 := Reviewer(src, Options{}); r3.FailureType != WrongFormat {
				t.Errorf("as Reviewer: %q, want WRONG_FORMAT", r3.FailureType)
			}
		})
	}
	if len(files) != len(want) {
		t.Errorf("found %d spec documents, want %d", len(files), len(want))
	}
}

// fenced returns the body of the first fenced block after marker in src.
func fenced(t *testing.T, src, marker string) string {
	t.Helper()
	i := strings.Index(src, marker)
	if i < 0 {
		t.Fatalf("marker %q not in spec", marker)
	}
	rest := src[i:]
	open := strings.Index(rest, "```markdown\n")
	end := strings.Index(rest[open+12:], "\n```")
	return rest[open+12 : open+12+end+1]
}

// The canonical examples of round-07 §2, taken out of their fences, are
// templates: their placeholders are no IDs.
func TestSpecTemplatesAreNotValidOutputs(t *testing.T) {
	src := specFiles(t)["round-07-example-attachment.md"]
	eng := fenced(t, src, "**Engineer Canonical Example:**")
	rev := fenced(t, src, "**Reviewer Canonical Example:**")
	if got := outcomeOf(Engineer(eng, Options{})); got != failed(NoGapsAddressed, 1, noGap(1, "## Gap Resolution: GAP-XXX", true)) {
		t.Errorf("canonical Engineer template: %+v", got)
	}
	want := failed(WrongFormat, 4, `line 4: issue entry under "Critical Issues" has no issue ID: "**ISSUE-RN-001**: [Description]" (want ISSUE-R{N}-NNN, e.g. "- **ISSUE-R{N}-001**: summary")`)
	if diff := cmp.Diff(want, outcomeOf(Reviewer(rev, Options{}))); diff != "" {
		t.Errorf("canonical Reviewer template (-want +got):\n%s", diff)
	}
	tmpl := fenced(t, src, "**Reviewer Template:**")
	r := Reviewer(tmpl, Options{})
	if !r.Success || r.Verdict != Approve || len(r.Issues) != 0 {
		t.Errorf("Reviewer template (placeholders only): %s %s, verdict %s", r.FailureType, r.Message, r.Verdict)
	}
}
