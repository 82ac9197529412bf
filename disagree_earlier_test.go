package refine_test

import (
	"strings"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/refinetest"
)

// A DISAGREE block naming an earlier round's issue passes validation (any
// issue of the session may be named), so it is a conflict with that
// issue too, not an unmatched block.
func TestDisagreeWithAnEarlierRoundsIssue(t *testing.T) {
	eng := refinetest.Script(
		engineerDoc("GAP-TEST-001"),
		revisedDoc("GAP-TEST-001", "ISSUE-R1-001"),
		revisedDoc("GAP-TEST-001", "ISSUE-R2-001")+disagreeBlock("ISSUE-R1-001", "retry bound unspecified (GAP-TEST-001)"),
	)
	rev := refinetest.Script(
		reviewerDoc(1, "GAP-TEST-001", "HIGH: retry bound unspecified"),
		reviewerDoc(2, "GAP-TEST-001", "HIGH: jitter unspecified"),
		reviewerDoc(3, "GAP-TEST-001"),
		reviewerDoc(4, "GAP-TEST-001"),
	)
	ask := &refinetest.Asker{DefaultAfterScript: true}
	cfg := refinetest.Config(eng, rev, ask)
	s, err := refine.New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := s.Step(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	st, err := s.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, c := range st.Conflicts {
		if c.IssueID == "ISSUE-R1-001" && c.Round == 3 {
			found = true
		}
	}
	if !found {
		t.Fatalf("no round-3 conflict with ISSUE-R1-001: %+v\nasked: %v", st.Conflicts, kindsOf(ask.Asked()))
	}
	asked := false
	for _, q := range ask.Asked() {
		if q.Kind == refine.KindConflict && strings.Contains(q.ID+q.Title, "ISSUE-R1-001") {
			asked = true
		}
	}
	if !asked {
		t.Errorf("no conflict question about ISSUE-R1-001; asked %v", kindsOf(ask.Asked()))
	}
}
