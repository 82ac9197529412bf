package markers

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/gapsfile"
	"github.com/refine-spec/refine/internal/markdown"
	"github.com/refine-spec/refine/internal/termtext"
)

// found is the part of a marker a case decides.
type found struct {
	ID       gap.ID
	Kinds    []Kind
	Sentence string
	Line     int
}

func scanView(spec string) []found {
	var out []found
	for _, m := range Scan(spec) {
		f := found{ID: m.ID, Sentence: m.Sentence, Line: m.Line}
		for _, mk := range m.Marks {
			f.Kinds = append(f.Kinds, mk.Kind)
		}
		out = append(out, f)
	}
	return out
}

func TestScanFindsEachKind(t *testing.T) {
	tests := []struct {
		name, spec string
		want       []found
	}{
		{"TBD", "# S\n\nThe retry budget is TBD.\n",
			[]found{{Kinds: []Kind{TBD}, Sentence: "The retry budget is TBD.", Line: 3}}},
		{"to be determined", "The page size is to be\ndetermined by load tests.\n",
			[]found{{Kinds: []Kind{TBD}, Sentence: "The page size is to be determined by load tests.", Line: 1}}},
		{"TODO in capitals only", "TODO: name the header. A todo list app stores items.\n",
			[]found{{Kinds: []Kind{TODO}, Sentence: "TODO: name the header.", Line: 1}}},
		{"unspecified", "Ordering is unspecified.\n",
			[]found{{Kinds: []Kind{Unspecified}, Sentence: "Ordering is unspecified.", Line: 1}}},
		{"not yet specified across a line break", "Intro.\n\nThe body's shape is not\n  yet specified. Other text.\n",
			[]found{{Kinds: []Kind{Unspecified}, Sentence: "The body's shape is not yet specified.", Line: 3}}},
		{"are still open", "Limits are still open.\n",
			[]found{{Kinds: []Kind{Open}, Sentence: "Limits are still open.", Line: 1}}},
		{"remains open", "Whether to cache remains open; see below.\n",
			[]found{{Kinds: []Kind{Open}, Sentence: "Whether to cache remains open; see below.", Line: 1}}},
		{"open question", "Sharding is an open question.\n",
			[]found{{Kinds: []Kind{OpenQuestion}, Sentence: "Sharding is an open question.", Line: 1}}},
		{"annotation", "- `POST /v1/orders` creates an order. Retried requests must not create\n  duplicates (GAP-API-004).\n",
			[]found{{ID: "GAP-API-004", Kinds: []Kind{Annotation}, Sentence: "Retried requests must not create duplicates (GAP-API-004).", Line: 1}}},
		{"annotation with see", "Timeouts matter (see GAP-NET-002).\n",
			[]found{{ID: "GAP-NET-002", Kinds: []Kind{Annotation}, Sentence: "Timeouts matter (see GAP-NET-002).", Line: 1}}},
		{"unanswered question at the end of a section", "## Auth\n\nShould tokens expire?\n\n## Next\n\nText.\n",
			[]found{{Kinds: []Kind{Question}, Sentence: "Should tokens expire?", Line: 3}}},
		{"a list of questions", "Open points:\n\n- Which regions?\n- Is there a\n  sandbox?\n- Billing is monthly.\n",
			[]found{{Kinds: []Kind{Question}, Sentence: "Which regions?", Line: 3}, {Kinds: []Kind{Question}, Sentence: "Is there a sandbox?", Line: 4}}},
		{"a heading question with nothing under it", "### What is the page size?\n### Limits\n",
			[]found{{Kinds: []Kind{Question}, Sentence: "What is the page size?", Line: 1}}},
		{"question at the end of the spec", "Text. But who owns the keys?",
			[]found{{Kinds: []Kind{Question}, Sentence: "But who owns the keys?", Line: 1}}},
		{"marks in a heading", "## Retry policy (TBD)\n\nText.\n",
			[]found{{Kinds: []Kind{TBD}, Sentence: "Retry policy (TBD)", Line: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, scanView(tt.spec)); diff != "" {
				t.Errorf("markers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScanLeavesOut(t *testing.T) {
	for _, tt := range []struct{ name, spec string }{
		{"fenced code", "```markdown\n- [ ] Consistent with related specs?\nThe format is TBD (GAP-XYZ-001).\n```\n"},
		{"tilde fence", "~~~\nIs this open? TODO\n~~~\n"},
		{"inline code", "Set `TBD` or `GAP-API-001` as the value.\n"},
		{"a range of IDs", "Each is tracked as a gap (GAP-API-001 … GAP-API-005).\n"},
		{"a range with a dash", "Gaps (GAP-API-001 - GAP-API-003) and (GAP-API-004 to GAP-API-005).\n"},
		{"an ID with other words", "Unlike the old API (which had GAP-API-001), this works.\n"},
		{"a bare ID", "This is tracked as GAP-API-001.\n"},
		{"conditional not specified", "If the header is not specified, the default is 10.\n"},
		{"conditional after a comma", "For reads, when the limit is unspecified the server picks one.\n"},
		{"a state of being open", "The stream is open for 30 seconds. Ports are open to all hosts.\n"},
		{"open-ended", "The list is open-ended.\n"},
		{"while open", "Writes succeed while the file is open.\n"},
		{"leaves open is not is/are open", "This draft leaves several behaviours open; each is tracked.\n"},
		{"task items", "- [ ] Consistent with related specs?\n- [x] Examples compile?\n"},
		{"an answered question", "**Q: Can orders be cancelled?**\nA: Yes, within an hour.\n"},
		{"a question answered after a blank line", "Why cursors?\n\nBecause offsets drift.\n"},
		{"a list question answered by its nested item", "- Which regions?\n  - EU and US only.\n"},
		{"a heading question with a body", "### What is the page size?\n\n50 orders.\n"},
		{"a heading naming open questions", "## Open questions\n\nNone remain.\n"},
		{"a question mid-line", "Why JSON? Because clients parse it.\n"},
		{"a table row", "| Retry? | yes |\n"},
		{"lower-case todo", "The todo list is sorted.\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := scanView(tt.spec); len(got) != 0 {
				t.Errorf("markers in %q: %+v", tt.spec, got)
			}
		})
	}
}

// One sentence gives one marker, however many marks it carries; a
// sentence annotated with two IDs gives one per ID; an ID annotated
// again gives no second marker.
func TestScanDeduplicates(t *testing.T) {
	spec := "# S\n\n## A\n\nThe retry budget is TBD and its ceiling unspecified.\n\n" +
		"Auth and audit are open (GAP-SEC-001, GAP-SEC-002).\n\n## B\n\nAs said, auth is open (GAP-SEC-001).\n"
	got := Scan(spec)
	want := []Marker{
		{Marks: []Mark{{TBD, "TBD"}, {Unspecified, "unspecified"}}, Headings: []string{"S", "A"},
			Sentence: "The retry budget is TBD and its ceiling unspecified.", Line: 5, Severity: gap.Medium},
		{ID: "GAP-SEC-001", Marks: []Mark{{Open, "are open"}, {Annotation, "(GAP-SEC-001, GAP-SEC-002)"}}, Headings: []string{"S", "A"},
			Sentence: "Auth and audit are open (GAP-SEC-001, GAP-SEC-002).", Line: 7, Severity: gap.Medium},
		{ID: "GAP-SEC-002", Marks: []Mark{{Open, "are open"}, {Annotation, "(GAP-SEC-001, GAP-SEC-002)"}}, Headings: []string{"S", "A"},
			Sentence: "Auth and audit are open (GAP-SEC-001, GAP-SEC-002).", Line: 7, Severity: gap.Medium},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("markers (-want +got):\n%s", diff)
	}
}

func TestScanHeadingPathAndSentences(t *testing.T) {
	spec := "# Orders\n\n## 2. Endpoints\n\n### 2.1 Create\n\nIt returns 201, e.g. for a new order. The body is TBD.\n\n## 3. Errors\n\nCodes are TBD!\n"
	got := Scan(spec)
	if len(got) != 2 {
		t.Fatalf("got %d markers: %+v", len(got), got)
	}
	if diff := cmp.Diff([]string{"Orders", "2. Endpoints", "2.1 Create"}, got[0].Headings); diff != "" {
		t.Errorf("headings (-want +got):\n%s", diff)
	}
	if got[0].Sentence != "The body is TBD." {
		t.Errorf("sentence %q: an abbreviation ended it early or the sentence before joined it", got[0].Sentence)
	}
	if diff := cmp.Diff([]string{"Orders", "3. Errors"}, got[1].Headings); diff != "" {
		t.Errorf("headings after a sibling section (-want +got):\n%s", diff)
	}
}

// The demo's draft gives one candidate for each of its five (GAP-…)
// markers and no other: §1's range "(GAP-API-001 … GAP-API-005)" and
// "leaves several behaviours open" are not marks, and §7's examples are in
// fenced code (their "GAP-XXX", "[GAP-YYY: …]" and "Consistent with
// related specs?" included).
func TestScanDemoDraft(t *testing.T) {
	spec := demoSpec(t)
	var got []string
	for _, m := range Scan(spec) {
		got = append(got, fmt.Sprintf("%s line %d: %s", m.ID, m.Line, m.Sentence))
	}
	want := []string{
		"GAP-API-004 line 14: Retried requests must not create duplicates (GAP-API-004).",
		"GAP-API-001 line 16: How clients page through large result sets is not specified (GAP-API-001).",
		"GAP-API-002 line 22: Errors are returned as JSON, but the body's shape and the codes are not yet specified (GAP-API-002).",
		"GAP-API-003 line 27: Limits, headers and the behaviour when a limit is hit are open (GAP-API-003).",
		"GAP-API-005 line 32: The compatibility and deprecation policy is open (GAP-API-005).",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("demo markers (-want +got):\n%s", diff)
	}
	for _, s := range []string{"(GAP-API-001 … GAP-API-005)", "- [ ] Consistent with related specs?"} {
		if !strings.Contains(spec, s) {
			t.Errorf("the demo draft no longer holds %q: this test no longer shows it is left out", s)
		}
	}
}

func demoSpec(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile("../../cmd/refine/demo/spec.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCandidatesDemo(t *testing.T) {
	spec := demoSpec(t)
	got := Candidates(spec, Scan(spec))
	want := []gap.Gap{
		{ID: "GAP-API-004", Severity: gap.Medium, Title: "Retried requests must not create duplicates",
			Location: `"Retried requests must not create duplicates (GAP-API-004)."`,
			Why:      "the draft marks it (GAP-API-004) (under 2. Endpoints)"},
		{ID: "GAP-API-001", Severity: gap.Medium, Title: "How clients page through large result sets is not specified",
			Location: `"How clients page through large result sets is not specified (GAP-API-001)."`,
			Why:      `the draft says "not specified", marks it (GAP-API-001) (under 2. Endpoints)`},
	}
	if diff := cmp.Diff(want, got[:2]); diff != "" {
		t.Errorf("candidates (-want +got):\n%s", diff)
	}
	if len(got) != 5 {
		t.Errorf("%d candidates, want 5", len(got))
	}
}

func TestCandidatesNumbering(t *testing.T) {
	spec := "# Payments service: draft\n\n## Refunds\n\nPartial refunds are a blocker and TBD.\n\nFees (GAP-PAY-001) are open.\n\n" +
		"The ledger (see GAP-PAY-002 in the old doc) is fine.\n\n## Payouts\n\nTODO.\n\nA minor point: the currency list is unspecified.\n"
	got := Candidates(spec, Scan(spec))
	var lines []string
	for _, g := range got {
		lines = append(lines, fmt.Sprintf("%s %s %s", g.ID, g.Severity, g.Title))
	}
	want := []string{
		"GAP-PAY-003 CRITICAL Partial refunds are a blocker and TBD", // 001 annotated, 002 mentioned
		"GAP-PAY-001 MEDIUM Fees are open",
		"GAP-PAY-004 MEDIUM Payouts: TODO",
		"GAP-PAY-005 LOW A minor point: the currency list is unspecified",
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("candidates (-want +got):\n%s", diff)
	}
}

func TestAreaOf(t *testing.T) {
	for title, want := range map[string]string{
		"Orders API — Draft Specification": "API",
		"Payments service":                 "PAY",
		"The billing spec":                 "BIL",
		"Draft: Über-Search (v2)":          "BER",
		"RFC 12: OAuth flows":              "RFC",
		"":                                 "SPEC",
		"v2":                               "SPEC",
		"Go SDK - notes":                   "SDK",
		"A spec of the HTTPSERVER":         "HTT", // ten capitals are no acronym; "the" is a stop word
	} {
		if got := AreaOf(title); got != want {
			t.Errorf("AreaOf(%q) = %q, want %q", title, got, want)
		}
	}
	// The draft's own area wins when its annotations agree on one.
	spec := "# Orders API\n\nX is TBD (GAP-ORD-001).\n"
	if got := Area(spec, Scan(spec)); got != "ORD" {
		t.Errorf("Area = %q, want the annotations' ORD", got)
	}
}

func TestSeverityOf(t *testing.T) {
	for s, want := range map[string]gap.Severity{
		"Plain sentence.":                        gap.Medium,
		"This is a blocker.":                     gap.Critical,
		"HIGH: the error body is open.":          gap.High,
		"LOW, though critical to some.":          gap.Low, // a label in capitals wins
		"A high-priority item.":                  gap.High,
		"Nice to have: dark mode is unspecified": gap.Low,
		"Minor, but a showstopper for some.":     gap.Critical,
		"High availability is TBD.":              gap.Medium,
	} {
		if got := SeverityOf(s); got != want {
			t.Errorf("SeverityOf(%q) = %s, want %s", s, got, want)
		}
	}
}

func TestShortenAndCollapse(t *testing.T) {
	long := strings.Repeat("wörd ", 100)
	got := shorten(long, 50)
	if len(got) > 50 || !strings.HasSuffix(got, "…") {
		t.Errorf("shorten: %q (%d bytes)", got, len(got))
	}
	if got := collapse(" a\t\n b\x1b[2Jc\u202ed  "); got != "a b [2Jc d" {
		t.Errorf("collapse = %q", got)
	}
}

// FuzzScan: no input panics; every marker's sentence is one safe line
// with a line number in the spec; the candidates are a gap list the
// parser reads back whole, IDs unique.
func FuzzScan(f *testing.F) {
	for _, s := range []string{
		"# T\n\nX is TBD (GAP-AB-001).\n",
		"- Which?\n- Why?\n",
		"```\nTBD\n```\nIs it open? (GAP-A-001 … GAP-A-009)",
		"((((GAP-AB-001", "### Q?\n### R?\n", "> quoted TODO\n> more\n",
	} {
		f.Add(s)
	}
	f.Add(demoSpec(f))
	f.Fuzz(func(t *testing.T, spec string) {
		ms := Scan(spec)
		lines := strings.Count(markdown.Normalize(spec), "\n") + 1 // CR and CRLF end lines too
		for _, m := range ms {
			if m.Sentence == "" || len(m.Marks) == 0 || m.Line < 1 || m.Line > lines {
				t.Fatalf("marker %+v", m)
			}
			if i, _ := termtext.IndexLine(m.Sentence); i >= 0 {
				t.Fatalf("sentence %q holds an unsafe character", m.Sentence)
			}
		}
		gaps := Candidates(spec, ms)
		if len(gaps) == 0 {
			return
		}
		back, err := gapsfile.Parse("candidates.md", []byte(gapsfile.Format(gaps)))
		if err != nil {
			t.Fatalf("candidates do not parse: %v\n%s", err, gapsfile.Format(gaps))
		}
		if diff := cmp.Diff(gaps, back); diff != "" {
			t.Fatalf("round trip (-want +got):\n%s", diff)
		}
	})
}

// BenchmarkScan scans drafts of 2,000 and 20,000 marked paragraphs and
// reports the time per paragraph of each; a linear scan keeps their ratio
// near 1.
func BenchmarkScan(b *testing.B) {
	draft := func(n int) string {
		var sb strings.Builder
		for i := range n {
			fmt.Fprintf(&sb, "## Part %d\n\nThe limit is not\nyet specified (GAP-AB-%03d). Is it open? e.g. maybe.\n- Which one?\n\n", i, i%999+1)
		}
		return sb.String()
	}
	small, large := draft(2000), draft(20000)
	var tSmall, tLarge time.Duration
	for b.Loop() {
		t0 := time.Now()
		Scan(small)
		t1 := time.Now()
		Scan(large)
		tSmall, tLarge = tSmall+t1.Sub(t0), tLarge+time.Since(t1)
	}
	perSmall := float64(tSmall.Nanoseconds()) / float64(b.N) / 2000
	perLarge := float64(tLarge.Nanoseconds()) / float64(b.N) / 20000
	b.ReportMetric(perLarge/perSmall, "ratio-20k/2k")
}
