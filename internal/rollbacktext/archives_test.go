package rollbacktext

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSessionEndQuestion(t *testing.T) {
	p, ok := SessionEndQuestion(specArchives, "/srv/refine/archive")
	if !ok {
		t.Fatal("no prompt")
	}
	want := `ARCHIVE CLEANUP

Session complete. Rolled-back round archives found:
- round_003_rolled_back_1.tar.gz (2.1 KB)
- round_005_rolled_back_1.tar.gz (1.8 KB)
- round_005_rolled_back_2.tar.gz (2.0 KB)
Total: 5.9 KB

Options:
1. Keep all archives (for debugging/analysis)
2. Delete all archives (clean finish)
3. Keep recent only (last 7 days of this session)
4. Move to cold storage (/srv/refine/archive)
`
	if diff := cmp.Diff(want, p.Text()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if p.Default != "4" {
		t.Errorf("default %q, the spec's automated default is cold storage", p.Default)
	}
	p, _ = SessionEndQuestion(specArchives, "")
	if _, ok := p.Option("4"); ok || p.Default != "1" {
		t.Errorf("without a cold root: default %q, options %v", p.Default, p.Options)
	}
	if _, ok := SessionEndQuestion(nil, "/x"); ok {
		t.Error("prompt without archives")
	}
}
