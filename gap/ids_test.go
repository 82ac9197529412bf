package gap

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseID(t *testing.T) {
	tests := []struct {
		in string
		ok bool
	}{
		{"GAP-FLOW-001", true},
		{"GAP-UX-999", true},           // 2-letter category
		{"GAP-ABCDEFGHIJ-001", true},   // 10 letters
		{"GAP-ABCDEFGHIJK-001", false}, // 11 letters
		{"GAP-A-001", false},           // 1 letter
		{"GAP-flow-001", false},        // lowercase
		{"GAP-FLOW-1", false},          // 1 digit
		{"GAP-FLOW-01", false},         // 2 digits
		{"GAP-FLOW-0012", false},       // 4 digits
		{"GAP-FLOW-007a", true},        // split suffix
		{"GAP-FLOW-007ab", false},      // two suffix letters
		{"GAP-FLOW-007A", false},       // uppercase suffix
		{"GAP-XXX", false},             // spec placeholder
		{" GAP-FLOW-001", false},
		{"", false},
	}
	for _, tt := range tests {
		_, err := ParseID(tt.in)
		if (err == nil) != tt.ok {
			t.Errorf("ParseID(%q) error = %v, want ok=%v", tt.in, err, tt.ok)
		}
		if ValidID(tt.in) != tt.ok {
			t.Errorf("ValidID(%q) = %v, want %v", tt.in, !tt.ok, tt.ok)
		}
	}
}

func TestFindIDsWordBoundaries(t *testing.T) {
	text := "GAP-FLOW-002, GAP-FLOW-0012 and xGAP-FLOW-003 GAP-FLOW-001; (GAP-UX-001) GAP-FLOW-007a GAP-FLOW-007ab GAP-XXX GAP-FLOW-001"
	got := FindIDs(text)
	want := []ID{"GAP-FLOW-001", "GAP-FLOW-002", "GAP-FLOW-007a", "GAP-UX-001"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FindIDs (-want +got):\n%s", diff)
	}
	ms := FindIDMatches("a GAP-QA-010 b")
	if len(ms) != 1 || ms[0].Start != 2 || ms[0].End != 12 {
		t.Errorf("FindIDMatches offsets = %+v", ms)
	}
	if FirstID("see GAP-B-001 then GAP-AB-002") != "GAP-AB-002" {
		t.Errorf("FirstID skipped the invalid one wrongly")
	}
}

func TestIDParts(t *testing.T) {
	id := ID("GAP-FLOW-007a")
	if id.Category() != "FLOW" || id.Number() != 7 || id.Suffix() != "a" || id.Parent() != "GAP-FLOW-007" {
		t.Errorf("parts of %s: %q %d %q %q", id, id.Category(), id.Number(), id.Suffix(), id.Parent())
	}
	if got := ID("GAP-FLOW-007").Child('b'); got != "GAP-FLOW-007b" {
		t.Errorf("Child = %s", got)
	}
	if got := id.Child('c'); got != "GAP-FLOW-007c" {
		t.Errorf("Child of child = %s", got)
	}
	if Compare("GAP-FLOW-002", "GAP-FLOW-010") >= 0 || Compare("GAP-AB-999", "GAP-FLOW-001") >= 0 || Compare("GAP-FLOW-007", "GAP-FLOW-007a") >= 0 {
		t.Error("Compare order wrong")
	}
}

func TestIssueAndDecisionIDs(t *testing.T) {
	tests := []struct {
		in   string
		want IssueID
		ok   bool
	}{
		{"ISSUE-R1-001", IssueID{1, 1}, true},
		{"ISSUE-R12-042", IssueID{12, 42}, true},
		{"ISSUE-R123-001", IssueID{Round: 123, Number: 1}, true},
		{"ISSUE-R1234-001", IssueID{}, false},
		{"ISSUE-RN-001", IssueID{}, false},
		{"ISSUE-R1-01", IssueID{}, false},
		{"ISSUE-R0-001", IssueID{}, false},
		{"ISSUE-R1-000", IssueID{}, false},
	}
	for _, tt := range tests {
		got, err := ParseIssueID(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseIssueID(%q) = %v, %v; want %v ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
		if tt.ok && got.String() != tt.in {
			t.Errorf("String() = %q, want %q", got.String(), tt.in)
		}
	}
	if got := FindIssueIDs("ISSUE-R2-001 ISSUE-R2-0011 ISSUE-RN-001 ISSUE-R2-001 ISSUE-R10-002"); !cmp.Equal(got, []string{"ISSUE-R2-001", "ISSUE-R10-002"}) {
		t.Errorf("FindIssueIDs = %v", got)
	}
	d, err := ParseDecisionID("DECISION-R5-001")
	if err != nil || d.String() != "DECISION-R5-001" {
		t.Errorf("ParseDecisionID = %v, %v", d, err)
	}
	if got := FindDecisionIDs("DECISION-R5-001 and DECISION-R5-0010"); len(got) != 1 {
		t.Errorf("FindDecisionIDs = %v", got)
	}
}

func FuzzFindIDs(f *testing.F) {
	for _, s := range []string{"GAP-FLOW-001", "GAP-FLOW-0012 GAP-A-001", "ISSUE-R1-001", "GAP-FLOW-007a."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, id := range FindIDs(s) {
			if !ValidID(string(id)) {
				t.Fatalf("FindIDs returned invalid %q", id)
			}
		}
		for _, m := range FindIssueMatches(s) {
			if s[m.Start:m.End] != m.ID {
				t.Fatalf("bad offsets %+v", m)
			}
		}
	})
}

func TestCompareMatchesRegexParse(t *testing.T) {
	ids := []ID{"GAP-FLOW-001", "GAP-FLOW-010", "GAP-FLOW-007a", "GAP-FLOW-007", "GAP-UX-001", "GAP-ABCDEFGHIJ-999", "GAP-A-001", "GAP-flow-001", "x"}
	for _, a := range ids {
		for _, b := range ids {
			c := Compare(a, b)
			if (c == 0) != (a == b) {
				t.Errorf("Compare(%s, %s) = %d", a, b, c)
			}
			if ValidID(string(a)) && ValidID(string(b)) {
				want := strings.Compare(a.Category(), b.Category())
				if want == 0 {
					want = a.Number() - b.Number()
				}
				if want == 0 {
					want = strings.Compare(a.Suffix(), b.Suffix())
				}
				if sign(c) != sign(want) {
					t.Errorf("Compare(%s, %s) = %d, regex parse says %d", a, b, c, want)
				}
			}
			if sign(Compare(b, a)) != -sign(c) {
				t.Errorf("Compare not antisymmetric on %s, %s", a, b)
			}
		}
	}
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

func TestNextDecisionID(t *testing.T) {
	existing := []string{"DECISION-R3-001", "DECISION-R3-004", "DECISION-R2-009", "not an ID", "DECISION-R1-002"}
	tests := []struct {
		round int
		want  string
	}{
		{3, "DECISION-R3-005"}, // past the highest, not the count: R3-002 is free but was never issued after 004
		{2, "DECISION-R2-010"},
		{4, "DECISION-R4-001"},
		{0, "DECISION-R1-003"}, // before round 1: numbered under round 1
	}
	for _, tt := range tests {
		if got := NextDecisionID(existing, tt.round); got != tt.want {
			t.Errorf("NextDecisionID(round %d) = %s, want %s", tt.round, got, tt.want)
		}
	}
	if got := NextDecisionID(nil, 7); got != "DECISION-R7-001" {
		t.Errorf("no decisions: %s", got)
	}
}
