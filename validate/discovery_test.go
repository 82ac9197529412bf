package validate

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/gapsfile"
	"github.com/refine-spec/refine/internal/markers"
)

// readRepoFile reads a file of the repository from this package's folder.
func readRepoFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile("../" + path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The demo's recorded discovery answer validates against its draft with
// exactly the five gaps of its gaps.md (IDs, severities, titles), each
// located in the draft and with a Why, so `refine demo --discover` starts
// round 1 from the list `refine demo` is given.
func TestDiscoveryDemoReplay(t *testing.T) {
	spec := readRepoFile(t, "cmd/refine/demo/spec.md")
	answer := readRepoFile(t, "cmd/refine/demo/replay/discovery-001.md")
	want, err := gapsfile.Parse("gaps.md", []byte(readRepoFile(t, "cmd/refine/demo/gaps.md")))
	if err != nil {
		t.Fatal(err)
	}
	r := Discovery(answer, DiscoveryOptions{Spec: spec, MaxGaps: 100})
	if !r.Success || len(r.Warnings) > 0 {
		t.Fatalf("demo discovery: %s %s, warnings %q", r.FailureType, r.Message, r.Warnings)
	}
	type head struct {
		ID       gap.ID
		Severity gap.Severity
		Title    string
	}
	var got, wantHeads []head
	for _, g := range r.Gaps {
		got = append(got, head{g.ID, g.Severity, g.Title})
		if g.Location == "" || g.Why == "" {
			t.Errorf("gap %s: Location %q, Why %q", g.ID, g.Location, g.Why)
		}
	}
	for _, g := range want {
		wantHeads = append(wantHeads, head{g.ID, g.Severity, g.Title})
	}
	if diff := cmp.Diff(wantHeads, got); diff != "" {
		t.Errorf("discovered gaps against gaps.md (-want +got):\n%s", diff)
	}
}

// The offline marker scan's list of the demo draft is itself a valid
// discovery answer about that draft: `refine gaps --offline` writes a list
// `refine run --gaps` and the discovery check both accept.
func TestDiscoveryOfflineCandidatesValidate(t *testing.T) {
	spec := readRepoFile(t, "cmd/refine/demo/spec.md")
	list := gapsfile.Format(markers.Candidates(spec, markers.Scan(spec)))
	r := Discovery(list, DiscoveryOptions{Spec: spec})
	if !r.Success || len(r.Gaps) != 5 || len(r.Warnings) > 0 {
		t.Fatalf("offline candidates: %s %s (%d gaps, warnings %q)\n%s", r.FailureType, r.Message, len(r.Gaps), r.Warnings, list)
	}
}

// discoverySpec is a draft for the tables below.
const discoverySpec = `# Orders API — Draft

## 2. Endpoints

- ` + "`GET /v1/orders`" + ` lists orders, newest first. How clients page through large
  result sets is not specified (GAP-API-001).

### 2.1 Create

Retried requests must not create **duplicates**.

## 3. Errors

Errors are returned as JSON, but the body’s shape — and the codes — are not yet
specified.
`

// gl is a valid gap with its Location and Why lines.
func gl(id, sev, title, loc string) string {
	return fmt.Sprintf("- %s (%s): %s\n  Location: %s\n  Why: clients cannot implement it\n", id, sev, title, loc)
}

func TestDiscoveryReadsAsMeant(t *testing.T) {
	first := gl("GAP-API-001", "HIGH", "Pagination", `"How clients page through large result sets is not specified"`)
	tests := []struct {
		name, answer string
		want         []gap.Gap
		normalized   int // gap lines read in another form
	}{
		{"canonical, the quotation spanning a line break", first, []gap.Gap{{ID: "GAP-API-001", Severity: gap.High, Title: "Pagination",
			Location: `"How clients page through large result sets is not specified"`, Why: "clients cannot implement it"}}, 0},
		{"preamble, heading and closing remark", "Here is what I found.\n\n## Gaps\n\n" + first + "\nLet me know if you need more.\n", nil, 0},
		{"numbered list, bold ID, bracket severity, dash", "1. **GAP-API-001** [HIGH] — Pagination\n   Location: 2. Endpoints\n   Why: w\n", nil, 1},
		{"bold head with the colon inside", "- **GAP-API-001 (HIGH):** Pagination\n  - **Location:** §2 Endpoints\n  - **Why:** w\n", nil, 1},
		{"a heading per gap", "### GAP-API-001 (HIGH): Pagination\nLocation: Section 2\nWhy: w\n", nil, 1},
		{"no list marker, severity word", "GAP-API-001 (Severity: HIGH): Pagination\nWhy: w\nLocation: Endpoints\n", nil, 1},
		{"backticks around the ID", "- `GAP-API-001` (HIGH): Pagination\n  Location: \"2. Endpoints\"\n  Why: w\n", nil, 1},
		{"no severity: MEDIUM", "- GAP-API-009: Creation\n  Location: 2. Endpoints > 2.1 Create\n  Why: w\n", nil, 0},
		{"curly quotes, dashes and apostrophe folded, emphasis dropped", "- GAP-API-009: Errors\n  Location: “the body's shape - and the codes - are not yet specified.”\n  Why: w\n" +
			"- GAP-API-010: Dups\n  Location: \"must not create duplicates\"\n  Why: w\n", nil, 0},
		{"an ellipsis between quoted parts", "- GAP-API-009: Errors\n  Location: \"Errors are returned as JSON … not yet specified\"\n  Why: w\n", nil, 0},
		{"two quotations with a pointer", "- GAP-API-009: Errors\n  Location: §3, \"returned as JSON\" and \"the codes\"\n  Why: w\n", nil, 0},
		{"a heading with a pointer into it", "- GAP-API-009: Errors\n  Location: 3. Errors, second sentence\n  Why: w\n", nil, 0},
		{"a heading with a note", "- GAP-API-009: Errors\n  Location: ## 3. Errors (the body)\n  Why: w\n", nil, 0},
		{"text of the spec without quotes", "- GAP-API-009: Errors\n  Location: GET /v1/orders lists orders\n  Why: w\n", nil, 0},
		{"an example in a fence is not read", "```\n- GAP-XYZ-1: example\n```\n" + first, nil, 0},
		{"a checklist after the gaps", first + "\n- [x] Read every section\n", nil, 0},
		{"a think block and an HTML comment", "<think>\nThe spec has no paging.\n</think>\n<!-- draft -->\n" + first, nil, 0},
		{"a Unicode hyphen in an ID", "- GAP\u2011API\u2011001 (HIGH): Pagination\n  Location: Endpoints\n  Why: w\n", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Discovery(tt.answer, DiscoveryOptions{Spec: discoverySpec})
			if !r.Success {
				t.Fatalf("%s at line %d: %s", r.FailureType, r.Line, r.Message)
			}
			if tt.want != nil {
				if diff := cmp.Diff(tt.want, r.Gaps); diff != "" {
					t.Errorf("gaps (-want +got):\n%s", diff)
				}
			}
			n := 0
			for _, note := range r.Normalized {
				if note.Kind == KindGapLine {
					n = note.Count
				}
			}
			if n != tt.normalized {
				t.Errorf("%d gap lines noted as read in another form, want %d (%v)", n, tt.normalized, r.Normalized)
			}
			for _, g := range r.Gaps {
				if g.Location == "" || g.Why == "" || !gap.ValidID(string(g.ID)) {
					t.Errorf("gap %+v", g)
				}
			}
		})
	}
}

func TestDiscoveryNoGapsFound(t *testing.T) {
	r := Discovery("NO_GAPS_FOUND\n\n- [x] Every endpoint has its request and response\n- [X] Errors are specified\n", DiscoveryOptions{Spec: discoverySpec})
	if !r.Success || !r.NoGapsFound || len(r.Gaps) != 0 {
		t.Fatalf("%+v", r)
	}
	if diff := cmp.Diff([]string{"Every endpoint has its request and response", "Errors are specified"}, r.Checklist); diff != "" {
		t.Errorf("checklist (-want +got):\n%s", diff)
	}
	// The spec's own annotation is still warned about: the answer says
	// nothing of GAP-API-001.
	if diff := cmp.Diff([]string{"the spec marks GAP-API-001 (line 5) but the answer lists no gap with that ID"}, r.Warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	r = Discovery("No gaps found.\n", DiscoveryOptions{})
	if !r.Success || !r.NoGapsFound || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "without a checklist") {
		t.Errorf("no checklist: %+v", r.Result)
	}
	r = Discovery("NO_GAPS_FOUND\n\n"+gl("GAP-API-001", "LOW", "x", "Endpoints"), DiscoveryOptions{Spec: discoverySpec})
	if !r.Success || r.NoGapsFound || len(r.Gaps) != 1 || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "the gaps count") {
		t.Errorf("NO_GAPS_FOUND with a gap: %+v %+v", r.Result, r.Gaps)
	}
}

func TestDiscoveryFailures(t *testing.T) {
	ok1 := gl("GAP-API-001", "HIGH", "Pagination", "2. Endpoints")
	ok2 := gl("GAP-API-002", "LOW", "Errors", "3. Errors")
	const form = `write "- GAP-AREA-NNN (SEVERITY): title"`
	malformed := func(line int, msg string) outcome {
		return outcome{false, MalformedGap, true, Structure, line, fmt.Sprintf("line %d: %s", line, msg)}
	}
	content := func(t FailureType, line int, msg string) outcome {
		return outcome{false, t, true, Content, line, fmt.Sprintf("line %d: %s", line, msg)}
	}
	tests := []struct {
		name, answer string
		opt          DiscoveryOptions
		want         outcome
	}{
		{"bad ID", "- GAP-API-1 (HIGH): x\n  Location: Endpoints\n  Why: w\n", DiscoveryOptions{},
			malformed(1, `malformed gap line "- GAP-API-1 (HIGH): x": gap: "GAP-API-1" is not a gap ID: want GAP-{2-10 uppercase letters}-{3 digits}[optional lowercase letter], e.g. GAP-FLOW-001`)},
		{"unknown severity", ok1 + "- GAP-API-002 (URGENT): x\n", DiscoveryOptions{},
			malformed(4, `gap GAP-API-002: gap: unknown severity "URGENT": want CRITICAL, HIGH, MEDIUM or LOW`)},
		{"no title", "* GAP-API-002 (LOW)\n", DiscoveryOptions{},
			malformed(1, `malformed gap line "- GAP-API-002 (LOW)": missing ": title": want "- GAP-AREA-NNN (SEVERITY): title", each optionally followed by "Location:" and "Why:" lines`)},
		{"no Location", "- GAP-API-001: x\n  Why: w\n" + ok2, DiscoveryOptions{},
			malformed(1, `gap GAP-API-001 has no Location line: add "  Location: <a heading of the spec, or its words in double quotes>" under it`)},
		{"no Why at the end", ok1 + "- GAP-API-002: x\n  Location: Errors\n\nThat is all.\n", DiscoveryOptions{},
			malformed(4, `gap GAP-API-002 has no Why line: add "  Why: <what an implementer cannot decide from the spec>" under it`)},
		{"second Location", "- GAP-API-001: x\n  Location: Endpoints\n  Location: Errors\n  Why: w\n", DiscoveryOptions{},
			malformed(3, "gap GAP-API-001: a second Location line: a gap has at most one")},
		{"empty Why", "- GAP-API-001: x\n  Location: Endpoints\n  Why:\n", DiscoveryOptions{},
			malformed(3, `gap GAP-API-001: an empty Why line: write what the spec leaves undecided after "Why:"`)},
		{"Location before any gap", "Location: Endpoints\n" + ok1, DiscoveryOptions{},
			malformed(1, `a Location line that follows no gap line: put it under the "- GAP-…" line it belongs to`)},
		{"another field under a gap", "- GAP-API-001: x\n  Location: Endpoints\n  Impact: clients break\n  Why: w\n", DiscoveryOptions{},
			malformed(3, `text under gap GAP-API-001 that is not its Location or Why line: "Impact: clients break": a gap takes only "Location:" and "Why:" lines under it`)},
		{"a wrapped Why", "- GAP-API-001: x\n  Location: Endpoints\n  Why: w\n  and more\n", DiscoveryOptions{},
			malformed(4, `text under gap GAP-API-001 that is not its Location or Why line: "and more": a gap takes only "Location:" and "Why:" lines under it`)},
		{"a list item that is no gap line", ok1 + "- Pagination needs a cursor\n", DiscoveryOptions{},
			malformed(4, `a list item in the gap list that is not a gap line: "- Pagination needs a cursor": `+form)},
		{"a gap without an ID", "- (HIGH): Pagination\n" + ok2, DiscoveryOptions{},
			malformed(1, `a gap without an ID: "- (HIGH): Pagination": `+form)},
		{"more than MaxGaps", ok1 + ok2 + gl("GAP-API-003", "LOW", "x", "Errors"), DiscoveryOptions{MaxGaps: 2},
			malformed(7, "more than 2 gaps: list at most 2 (the session's MaxGaps), the most important first")},
		{"an ID twice", ok1 + ok2 + gl("GAP-API-001", "LOW", "x", "Errors"), DiscoveryOptions{},
			content(DuplicateGap, 7, "gap GAP-API-001 is listed twice (first at line 1): list each gap once, with an ID of its own")},
		{"an ID of the given list", ok1 + ok2, DiscoveryOptions{Known: ids("GAP-API-002")},
			content(DuplicateGap, 4, "gap GAP-API-002 is already in the gap list: propose only gaps the list does not hold, with IDs it does not use")},
		{"a quotation not in the spec", ok1 + gl("GAP-API-002", "LOW", "x", `"the body's shape is JSON"`), DiscoveryOptions{Spec: discoverySpec},
			content(UnlocatedGap, 4, `gap GAP-API-002: its Location "the body's shape is JSON" is not in the spec: quote the spec's own words in double quotes, or name one of its headings`)},
		{"a heading not in the spec", gl("GAP-API-001", "LOW", "x", "7. Webhooks"), DiscoveryOptions{Spec: discoverySpec},
			content(UnlocatedGap, 1, `gap GAP-API-001: its Location "7. Webhooks" is not in the spec: quote the spec's own words in double quotes, or name one of its headings`)},
		{"an empty quotation", gl("GAP-API-001", "LOW", "x", `""`), DiscoveryOptions{Spec: discoverySpec},
			content(UnlocatedGap, 1, `gap GAP-API-001: its Location "" is not in the spec: quote the spec's own words in double quotes, or name one of its headings`)},
		{"neither gaps nor NO_GAPS_FOUND", "The spec looks complete to me.\n", DiscoveryOptions{},
			outcome{false, WrongFormat, true, Structure, 0, `the answer lists no gap ("- GAP-AREA-NNN (SEVERITY): title" lines, each with "Location:" and "Why:" lines) and does not say NO_GAPS_FOUND`}},
		{"only an example in a fence", "The format is:\n\n```\n" + ok1 + "```\n\nI found nothing to list.\n", DiscoveryOptions{},
			outcome{false, WrongFormat, true, Structure, 0, `the answer lists no gap ("- GAP-AREA-NNN (SEVERITY): title" lines, each with "Location:" and "Why:" lines) and does not say NO_GAPS_FOUND`}},
		{"empty", " \n\n", DiscoveryOptions{}, failed(EmptyOutput, 0, "File exists but is empty (only whitespace)")},
		{"NUL byte", ok1 + "\x00", DiscoveryOptions{}, failed(WrongFormat, 4, "line 4: output contains a NUL byte: it is binary data, not markdown text")},
		{"too large", ok1, DiscoveryOptions{MaxOutputBytes: 10}, failed(WrongFormat, 0, "output is 93 bytes, above the 10-byte limit (MaxOutputBytes)")},
		{"cut by the token limit", ok1, DiscoveryOptions{FinishReason: "max_tokens"},
			outcome{false, Truncated, true, Structure, 0, `the answer was cut by the token limit (finish reason "max_tokens"): it is incomplete, so it was not read`}},
		{"refused by the provider", ok1, DiscoveryOptions{FinishReason: "content_filter"},
			outcome{false, Refusal, true, Structure, 0, `the provider refused the answer (finish reason "content_filter")`}},
		{"a refusal", "I'm sorry, but I can't help with reviewing this document.\n", DiscoveryOptions{},
			outcome{false, Refusal, true, Structure, 0, `the answer declines the task ("i'm sorry, but i can't help with reviewing this document.") instead of resolving it`}},
		{"a question back", "Which sections should I focus on?\n", DiscoveryOptions{},
			outcome{false, Clarification, true, Structure, 0, `the answer asks a question back ("which sections should i focus on?") instead of resolving the gaps`}},
		{"an unclosed fence", ok1 + "\n```\n- GAP-API-002: x\n", DiscoveryOptions{},
			outcome{false, WrongFormat, true, Structure, 5, "line 5: the fence \"```\" opens a code block that is never closed, so everything after it reads as code: close it with a matching fence line, or remove it"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Discovery(tt.answer, tt.opt)
			got := outcomeOf(r.Result)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
			if got.Tier == Structure && len(r.Gaps) > 0 {
				t.Errorf("a Structure failure keeps %d gaps", len(r.Gaps))
			}
			if got.Tier == Content && len(r.Gaps) == 0 {
				t.Error("a Content failure keeps no gap")
			}
			// A failure after the answer was read keeps the reading.
			if read := got.Tier == Content || got.Line > 0 && tt.want.FailureType == MalformedGap; read && r.Text == "" {
				t.Error("a failure after reading lost the text as read")
			}
		})
	}
}

// An answer wrapped in one fenced block is read through the normalization
// of DESIGN §18 as the list it holds.
func TestDiscoveryWrappedInAFence(t *testing.T) {
	answer := "```markdown\n" + gl("GAP-API-001", "HIGH", "Pagination", "Endpoints") + "```\n"
	if text, _ := Normalize("```markdown\n## Review: x\n```\n"); strings.HasPrefix(text, "```") {
		t.Skip("validate.Normalize unwraps no fenced answer yet (#38)")
	}
	r := Discovery(answer, DiscoveryOptions{Spec: discoverySpec})
	if !r.Success || len(r.Gaps) != 1 || len(r.Normalized) == 0 {
		t.Fatalf("%s: %s (%d gaps, normalized %v)", r.FailureType, r.Message, len(r.Gaps), r.Normalized)
	}
}

// A quotation is found the same way whether the spec is searched plainly
// or through its suffix array (used when many Locations meet a long spec).
func TestLocatorIndexedAgrees(t *testing.T) {
	plain, indexed := newLocatorIndexed(discoverySpec, false), newLocatorIndexed(discoverySpec, true)
	for _, loc := range []string{
		`"How clients page"`, `"how clients   page through LARGE"`, `"not in it"`, `"…"`, `"newest first … not specified (GAP-API-001)."`,
		"2. Endpoints", "Endpoints > Create", "Create > 9. Nothing", `"the body's shape"`, "§3", "Section 3", "sec. 2.1", "x",
	} {
		if p, i := plain.found(loc), indexed.found(loc); p != i {
			t.Errorf("%q: plain %v, indexed %v", loc, p, i)
		}
	}
}

func TestDiscoveryJSON(t *testing.T) {
	r := Discovery(gl("GAP-API-001", "HIGH", "Pagination", "Endpoints"), DiscoveryOptions{Spec: discoverySpec, Known: ids("GAP-API-009")})
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"success":true,"failure_type":"","retriable":false,"message":"Content valid: 1 gap (1 HIGH)","line":0,"warnings":[],` +
		`"gaps":[{"id":"GAP-API-001","severity":"HIGH","title":"Pagination","location":"Endpoints","why":"clients cannot implement it"}],"no_gaps_found":false,"checklist":[],"normalized":[]}`
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Errorf("JSON (-want +got):\n%s", diff)
	}
}

// FuzzDiscovery: no answer or spec panics; a valid answer's gaps have
// valid, distinct IDs, a Location found in the spec and a Why, at most
// MaxGaps of them, and read back whole through the gap list parser.
func FuzzDiscovery(f *testing.F) {
	f.Add(gl("GAP-API-001", "HIGH", "Pagination", `"page through"`), discoverySpec, 3)
	f.Add("1. **GAP-API-001** [HIGH] — x\n   Location: “a … b”\n   Why: w\n", "# T\n\na c b\n", 0)
	f.Add("NO_GAPS_FOUND\n- [x] a\n", "", 1)
	f.Add("### GAP-AB-001: t\nLocation: §1 > 1.1\nWhy: w", "# 1 A\n## 1.1 B\n", 1)
	f.Fuzz(func(t *testing.T, answer, spec string, maxGaps int) {
		r := Discovery(answer, DiscoveryOptions{Spec: spec, MaxGaps: maxGaps % 8})
		if !r.Success {
			return
		}
		if maxGaps%8 > 0 && len(r.Gaps) > maxGaps%8 {
			t.Fatalf("%d gaps above the cap %d", len(r.Gaps), maxGaps%8)
		}
		seen := map[gap.ID]bool{}
		plain := newLocatorIndexed(spec, false)
		indexed := newLocatorIndexed(spec, true)
		for _, g := range r.Gaps {
			if !gap.ValidID(string(g.ID)) || seen[g.ID] || g.Location == "" || g.Why == "" {
				t.Fatalf("gap %+v", g)
			}
			seen[g.ID] = true
			if spec != "" && (!plain.found(g.Location) || !indexed.found(g.Location)) {
				t.Fatalf("gap %s: Location %q accepted but not found", g.ID, g.Location)
			}
		}
		if len(r.Gaps) > 0 {
			back, err := gapsfile.Parse("discovered.md", []byte(gapsfile.Format(r.Gaps)))
			if err != nil {
				t.Fatalf("discovered gaps do not parse: %v", err)
			}
			if diff := cmp.Diff(r.Gaps, back); diff != "" {
				t.Fatalf("discovered then reread (-want +got):\n%s", diff)
			}
		}
	})
}

// BenchmarkDiscovery reads answers of 500 and 5,000 gaps against a spec
// that grows with them and reports the time per gap; the suffix array
// keeps their ratio near 1 where a plain search per Location made it about
// 10.
func BenchmarkDiscovery(b *testing.B) {
	build := func(n int) (string, string) {
		var spec, ans strings.Builder
		spec.WriteString("# Big spec\n\n")
		for i := range n {
			fmt.Fprintf(&spec, "## Part %d\n\nRule %d of the part is not yet specified here.\n\n", i, i)
			fmt.Fprintf(&ans, "- GAP-%s-%03d (LOW): rule %d\n  Location: \"Rule %d of the part\"\n  Why: w\n", string(rune('A'+i/999%26))+"Z", i%999+1, i, i)
		}
		return spec.String(), ans.String()
	}
	s1, a1 := build(500)
	s2, a2 := build(5000)
	var tSmall, tLarge time.Duration
	for b.Loop() {
		t0 := time.Now()
		if r := Discovery(a1, DiscoveryOptions{Spec: s1}); !r.Success {
			b.Fatal(r.Message)
		}
		t1 := time.Now()
		if r := Discovery(a2, DiscoveryOptions{Spec: s2}); !r.Success {
			b.Fatal(r.Message)
		}
		tSmall, tLarge = tSmall+t1.Sub(t0), tLarge+time.Since(t1)
	}
	perSmall := float64(tSmall.Nanoseconds()) / float64(b.N) / 500
	perLarge := float64(tLarge.Nanoseconds()) / float64(b.N) / 5000
	b.ReportMetric(perSmall, "ns/gap-500")
	b.ReportMetric(perLarge, "ns/gap-5000")
	b.ReportMetric(perLarge/perSmall, "ratio-5000/500")
}

// Metamorphic: a benign quirk of how models write leaves the reading of a
// valid discovery answer unchanged; a defect turns it into its failure.
func TestDiscoveryMetamorphic(t *testing.T) {
	spec := readRepoFile(t, "cmd/refine/demo/spec.md")
	answers := map[string]string{
		"demo replay":        readRepoFile(t, "cmd/refine/demo/replay/discovery-001.md"),
		"offline candidates": gapsfile.Format(markers.Candidates(spec, markers.Scan(spec))),
	}
	lines := func(s string, f func(i int, l string) string) string {
		ls := strings.Split(s, "\n")
		for i := range ls {
			ls[i] = f(i, ls[i])
		}
		return strings.Join(ls, "\n")
	}
	gapLine := func(l string) bool { return strings.HasPrefix(l, "- GAP-") }
	benign := map[string]func(string) string{
		"wrapped in a markdown fence": func(s string) string { return "```markdown\n" + s + "```\n" },
		"a think block first":         func(s string) string { return "<think>\nLet me read the draft.\n</think>\n\n" + s },
		"a preamble and a heading":    func(s string) string { return "Here are the gaps I found.\n\n## Gaps\n\n" + s + "\nThat is all.\n" },
		"CRLF and a BOM":              func(s string) string { return "\uFEFF" + strings.ReplaceAll(s, "\n", "\r\n") },
		"numbered items": func(s string) string {
			n := 0
			return lines(s, func(_ int, l string) string {
				if !gapLine(l) {
					return l
				}
				n++
				return fmt.Sprintf("%d. %s", n, l[2:])
			})
		},
		"bold IDs and bold labels": func(s string) string {
			return lines(s, func(_ int, l string) string {
				switch {
				case gapLine(l):
					id, rest, _ := strings.Cut(l[2:], " ")
					return "- **" + id + "** " + rest
				case strings.HasPrefix(l, "  Location:"), strings.HasPrefix(l, "  Why:"):
					label, rest, _ := strings.Cut(strings.TrimSpace(l), ":")
					return "  - **" + label + ":**" + rest
				}
				return l
			})
		},
		"Why before Location": func(s string) string {
			ls := strings.Split(s, "\n")
			for i := 0; i+2 < len(ls); i++ {
				if gapLine(ls[i]) {
					ls[i+1], ls[i+2] = ls[i+2], ls[i+1]
				}
			}
			return strings.Join(ls, "\n")
		},
	}
	for name, answer := range answers {
		want := Discovery(answer, DiscoveryOptions{Spec: spec})
		if !want.Success {
			t.Fatalf("%s: %s", name, want.Message)
		}
		for q, f := range benign {
			got := Discovery(f(answer), DiscoveryOptions{Spec: spec})
			if !got.Success {
				t.Errorf("%s, %s: %s %s", name, q, got.FailureType, got.Message)
				continue
			}
			if diff := cmp.Diff(want.Gaps, got.Gaps); diff != "" {
				t.Errorf("%s, %s: gaps (-plain +quirky):\n%s", name, q, diff)
			}
		}
		defects := map[string]struct {
			f    func(string) string
			want FailureType
		}{
			"a Why dropped": {func(s string) string {
				return lines(s, func(_ int, l string) string { return strings.Replace(l, "  Why:", "  Reason:", 1) })
			}, MalformedGap},
			"an ID repeated": {func(s string) string {
				return s + strings.SplitAfterN(s, "\n", 4)[0] + strings.SplitAfterN(s, "\n", 4)[1] + strings.SplitAfterN(s, "\n", 4)[2]
			}, DuplicateGap},
			"a Location rewritten": {func(s string) string {
				return strings.Replace(s, "  Location: ", "  Location: \"Clients must page with cursors\" ", 1)
			}, UnlocatedGap},
			"an ID without area": {func(s string) string { return strings.Replace(s, "GAP-API-00", "GAP-00", 1) }, MalformedGap},
		}
		for q, d := range defects {
			if got := Discovery(d.f(answer), DiscoveryOptions{Spec: spec}); got.FailureType != d.want {
				t.Errorf("%s, %s: %s (%s), want %s", name, q, got.FailureType, got.Message, d.want)
			}
		}
	}
}
