package rollbacktext

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTargetsQuestion(t *testing.T) {
	p := TargetsQuestion(8, []Target{{7, 15, 2}, {6, 17, 5}, {5, 19, 8}})
	want := `ROLLBACK OPTIONS

Available rollback targets:
| Target | Gaps at Target | Decisions Since | Rounds to Undo |
|--------|----------------|-----------------|----------------|
| Round 7 | 15 open | 2 decisions | 1 |
| Round 6 | 17 open | 5 decisions | 2 |
| Round 5 | 19 open | 8 decisions | 3 |

Note: Earlier rounds cannot be rolled back (backups rotated).

Options:
1. Rollback to Round 7 (undo 1 round)
2. Rollback to Round 6 (undo 2 rounds)
3. Rollback to Round 5 (undo 3 rounds)
4. Cancel rollback (continue from Round 8)
`
	if diff := cmp.Diff(want, p.Text()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if p.Default != "1" {
		t.Errorf("default %q", p.Default)
	}
	if o, _ := p.Option("4"); o.Effect != EffectCancel {
		t.Errorf("option 4 = %+v", o)
	}
	if n, ok := TargetOf("rollback-to:05"); ok {
		t.Errorf("TargetOf accepted a non-canonical number: %d", n)
	}
	// From round 3 every round back to 0 is available: no note.
	p = TargetsQuestion(3, []Target{{2, 1, 0}, {1, 1, 0}, {0, 1, 0}})
	if strings.Contains(p.Body, "Note:") {
		t.Errorf("note shown although round 0 is available:\n%s", p.Body)
	}
}
