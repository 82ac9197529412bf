package validate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/markdown"
)

// addSeeds seeds a fuzz target with the spec documents (whole, and cut into
// pieces so mutations reach every construct quickly) and small edge cases.
func addSeeds(f *testing.F, extra ...string) {
	paths, _ := filepath.Glob(filepath.Join(specDir, "*.md"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		f.Add(string(b))
		for i := 0; i < len(b); i += 4096 {
			f.Add(string(b[i:min(len(b), i+4096)]))
		}
	}
	for _, s := range append(extra, "", " ", "\uFEFF", "```", "## Gap Resolution:", "**Confidence:**",
		"## Gap Resolution: GAP-FLOW-001\r\n**Confidence:** HIGH", "## DISAGREE: ISSUE-R1-001\n**Rationale:**",
		"## Review: GAP-FLOW-001\n### High Priority\n- ISSUE-R1-001: x\n  - Location: y", "\x00", "\xff\xfe", "`` ` ```\n####") {
		f.Add(s)
	}
}

// checkInvariants holds for every Result, whatever the input.
func checkInvariants(t *testing.T, src string, r Result) {
	t.Helper()
	if r.Success != (r.FailureType == "") {
		t.Fatalf("Success=%v with FailureType %q", r.Success, r.FailureType)
	}
	if !r.Success && r.Message == "" {
		t.Fatalf("failure %s without a message", r.FailureType)
	}
	if r.Retriable != r.FailureType.Retriable() {
		t.Fatalf("Retriable=%v for %s", r.Retriable, r.FailureType)
	}
	if r.Tier != Structure && r.Tier != Content {
		t.Fatalf("tier %q", r.Tier)
	}
	if lines := strings.Count(src, "\n") + strings.Count(src, "\r") + 1; r.Line < 0 || r.Line > lines {
		t.Fatalf("line %d outside 0..%d", r.Line, lines)
	}
	if !slices.IsSortedFunc(r.GapsAddressed, gap.Compare) {
		t.Fatalf("gaps_addressed not sorted: %v", r.GapsAddressed)
	}
	for _, id := range r.GapsAddressed {
		if !gap.ValidID(string(id)) {
			t.Fatalf("invalid gap addressed %q", id)
		}
	}
	for _, is := range r.Issues {
		if _, err := gap.ParseIssueID(is.ID); err != nil || !is.Severity.Valid() {
			t.Fatalf("bad issue %+v", is)
		}
	}
	if _, err := json.Marshal(r); err != nil {
		t.Fatalf("JSON: %v", err)
	}
}

// checkFinders holds the prefiltered ID finders to the gap package's.
func checkFinders(t *testing.T, src string) {
	t.Helper()
	if diff := cmp.Diff(gap.FindIDMatches(src), findGapIDs(src), cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("findGapIDs differs from gap.FindIDMatches (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(gap.FindIssueMatches(src), findIssueIDs(src), cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("findIssueIDs differs from gap.FindIssueMatches (-want +got):\n%s", diff)
	}
}

func TestFindersMatchGapPackage(t *testing.T) {
	inputs := []string{
		"", "GAP-", "GAP-FLOW-001", "xGAP-FLOW-001", "GAP-FLOW-0012", "GAP-FLOW-001a", "GAP-FLOW-001ab",
		"GAP-ABCDEFGHIJ-001a.", "GAP-ABCDEFGHIJ-001ab", "GAP-ABCDEFGHIJK-001", "GAP-GAP-FLOW-001", "éGAP-UX-001é",
		"_GAP-UX-001", "GAP-UX-001_", "GAP-UX-001-GAP-UX-002", "ISSUE-R1-001", "ISSUE-R12-001", "ISSUE-R123-001",
		"ISSUE-R1-0011", "ISSUE-ISSUE-R1-001", "(ISSUE-R5-003)", review, example1,
	}
	paths, _ := filepath.Glob(filepath.Join(specDir, "*.md"))
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			inputs = append(inputs, string(b))
		}
	}
	for _, s := range inputs {
		checkFinders(t, s)
	}
}

func FuzzEngineer(f *testing.F) {
	addSeeds(f, gapSection("GAP-FLOW-001"), doc(gapSection("GAP-FLOW-001"), example1))
	f.Fuzz(func(t *testing.T, src string) {
		checkFinders(t, src)
		r := Engineer(src, Options{Round: 3, KnownGaps: gap.FindIDs(src), KnownIssues: []string{"ISSUE-R5-003"}})
		checkInvariants(t, src, r)
		if r.Success && len(r.GapsAddressed) == 0 {
			t.Fatal("valid Engineer output addresses no gap")
		}
		checkInvariants(t, src, Engineer(src, Options{}))
	})
}

func FuzzReviewer(f *testing.F) {
	addSeeds(f, review, noIssues)
	f.Fuzz(func(t *testing.T, src string) {
		r := Reviewer(src, Options{Round: 3, KnownGaps: gap.FindIDs(src)})
		checkInvariants(t, src, r)
		if r.Success && r.Verdict == "" {
			t.Fatal("valid Reviewer output without a verdict")
		}
		checkInvariants(t, src, Reviewer(src, Options{}))
	})
}

// FuzzNormalize: Normalize never panics, keeps the answer's lines one for
// one and leaves no CR; what it returns is read the same by Engineer and
// Reviewer as the answer, and Unread holds the no-silent-loss promise on
// every successful result.
func FuzzNormalize(f *testing.F) {
	addSeeds(f, "```markdown\n"+gapSection("GAP-FLOW-001")+"```\n", "<think>\nx\n", "<!-- a\n## Gap Resolution: GAP-FLOW-002\n-->\n",
		"### gap resolution — GAP\u2011FLOW\u2011001\n**Confidence: HIGH**\n", "# Review - R1\n## Review: x\n## High\n### ISSUE-R1-001: y\n### Other\n",
		"**High Priority**\n- ISSUE-R1-001: x\nGap Resolution: GAP-FLOW-001\n---\n")
	f.Fuzz(func(t *testing.T, src string) {
		text, notes := Normalize(src)
		want := strings.Count(markdown.Normalize(src), "\n")
		if got := strings.Count(text, "\n"); got != want || strings.Contains(text, "\r") {
			t.Fatalf("%d line breaks, want %d (CR left: %v)", got, want, strings.Contains(text, "\r"))
		}
		for _, n := range notes {
			if n.Count < 1 || n.Line < 1 || n.Line > want+1 || n.Kind == "" {
				t.Fatalf("bad note %+v", n)
			}
		}
		for _, role := range []gap.Role{gap.Engineer, gap.Reviewer} {
			r, _ := Validate(role, src, Options{})
			checkInvariants(t, src, r)
			if r.Success {
				if u := Unread(r); u != nil {
					t.Fatalf("%s: valid with unread lines %q", role, u)
				}
			}
		}
	})
}

// gapKey reads IDs exactly as gap.ID's methods do.
func TestGapKeyMatchesGapPackage(t *testing.T) {
	for _, s := range []string{"GAP-FLOW-001", "GAP-FLOW-001a", "GAP-AB-999", "GAP-ABCDEFGHIJ-010z", "GAP-A-001", "GAP-ABCDEFGHIJK-001",
		"GAP-FLOW-01", "GAP-FLOW-0012", "GAP-FLOW-001ab", "GAP-FLOW-001A", "GAP-flow-001", "X-FLOW-001", "", "GAP-", "GAP-FL-00x"} {
		id := gap.ID(s)
		c, n, sfx := gapKey(id)
		if c != id.Category() || n != id.Number() || sfx != id.Suffix() {
			t.Errorf("%q: gapKey %q %d %q, gap %q %d %q", s, c, n, sfx, id.Category(), id.Number(), id.Suffix())
		}
	}
}
