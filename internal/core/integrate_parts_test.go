package core

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/exemplar"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/validate"
)

func TestPlanParts(t *testing.T) {
	src := "# Title\n\nIntro.\n\n## 1. A\n\nA is open (GAP-TE-001).\n\n### 1.1 Detail\n\nMore about A.\n\n## 2. B\n\nB (GAP-TE-002) and A (GAP-TE-001).\n\n## 3. C\n\nNothing open.\n"
	m := IntegrationMaterial{Source: src,
		Accepted:    []gap.Gap{{ID: "GAP-TE-001"}, {ID: "GAP-TE-002"}, {ID: "GAP-TE-003"}},
		Resolutions: []validate.Resolution{{ID: "GAP-TE-001", Text: strings.Repeat("a", 200)}, {ID: "GAP-TE-002", Text: strings.Repeat("b", 200)}, {ID: "GAP-TE-003", Text: strings.Repeat("c", 40)}}}
	type part struct {
		Start string
		Res   []int
		Last  bool
	}
	plan := func(budget int) ([]part, error) {
		ps, err := PlanParts(m, exemplar.CharTokenizer{}, budget)
		var out []part
		for _, p := range ps {
			first, _, _ := strings.Cut(p.Source, "\n")
			out = append(out, part{first, p.Res, p.Last})
		}
		return out, err
	}
	// Pieces are cut at level-1/2 headings; a resolution goes with the
	// first piece naming its gap, else with the last part.
	got, err := plan(80)
	if err != nil {
		t.Fatal(err)
	}
	want := []part{{"# Title", []int{0}, false}, {"## 2. B", []int{1, 2}, true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("budget 80 (-want +got):\n%s", diff)
	}
	// A large budget packs everything into one part.
	if got, _ := plan(1000); len(got) != 1 || !got[0].Last || len(got[0].Res) != 3 {
		t.Errorf("budget 1000: %+v", got)
	}
	// A piece larger than the budget cannot be integrated part by part.
	if _, err := plan(40); err == nil || !strings.Contains(err.Error(), `"## 1. A"`) {
		t.Errorf("budget 40: %v", err)
	}
	// Every byte of the source is in exactly one part, in order.
	ps, _ := PlanParts(m, exemplar.CharTokenizer{}, 80)
	var joined strings.Builder
	for _, p := range ps {
		joined.WriteString(p.Source)
	}
	if joined.String() != src {
		t.Errorf("parts do not cover the source:\n%s", joined.String())
	}
}
