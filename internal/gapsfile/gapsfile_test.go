package gapsfile

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/termtext"
)

func TestParse(t *testing.T) {
	three := []gap.Gap{
		{ID: "GAP-FLOW-001", Title: "Error recovery", Severity: gap.High},
		{ID: "GAP-FLOW-002", Title: "Stall detection: when to stop", Severity: gap.Medium},
		{ID: "GAP-UX-001a", Title: "Colours", Severity: gap.Low},
	}
	const md = "# Gaps\n\n- GAP-FLOW-001 (HIGH): Error recovery\n- GAP-FLOW-002: Stall detection: when to stop\n* GAP-UX-001a (low):   Colours  \n"
	tests := []struct {
		name, file, data string
		want             []gap.Gap
	}{
		{"markdown", "gaps.md", md, three},
		{"markdown with CRLF and BOM", "gaps.md", "\uFEFF" + "# Gaps\r\n\r\n- GAP-FLOW-001 (HIGH): Error recovery\r\n- GAP-FLOW-002: Stall detection: when to stop\r\n* GAP-UX-001a (low):   Colours  \r\n", three},
		{"JSON", "gaps.json", `[
  {"id": "GAP-FLOW-001", "severity": "HIGH", "title": "Error recovery"},
  {"id": "GAP-FLOW-002", "title": "Stall detection: when to stop"},
  {"id": "GAP-UX-001a", "severity": "low", "title": " Colours "}
]`, three},
		{"markdown with Location and Why lines", "gaps.md", "- GAP-API-001 (HIGH): Pagination\n" +
			"  Location: \"How clients page through large result sets is not specified\"\n" +
			"  Why: clients cannot fetch past the first page\n" +
			"\n- GAP-API-002: Errors\n" +
			"    - **why:** the body's shape is open\n" +
			"\t**Location**: 3. Errors\n" +
			"- GAP-API-003 (LOW): Limits\n" +
			"Why: nothing says what happens at the limit\n",
			[]gap.Gap{
				{ID: "GAP-API-001", Title: "Pagination", Severity: gap.High, Location: `"How clients page through large result sets is not specified"`, Why: "clients cannot fetch past the first page"},
				{ID: "GAP-API-002", Title: "Errors", Severity: gap.Medium, Location: "3. Errors", Why: "the body's shape is open"},
				{ID: "GAP-API-003", Title: "Limits", Severity: gap.Low, Why: "nothing says what happens at the limit"},
			}},
		{"JSON with location and why", "gaps.json", `[{"id": "GAP-API-001", "severity": "HIGH", "title": "Pagination", "location": " 2. Endpoints ", "why": "no cursor"},
 {"id": "GAP-API-002", "title": "Errors", "why": ""}]`,
			[]gap.Gap{
				{ID: "GAP-API-001", Title: "Pagination", Severity: gap.High, Location: "2. Endpoints", Why: "no cursor"},
				{ID: "GAP-API-002", Title: "Errors", Severity: gap.Medium},
			}},
		{"JSON with BOM, any file name", "gaps", "\uFEFF  [{\"id\":\"GAP-FLOW-001\",\"severity\":\"\",\"title\":\"x\"}]\n",
			[]gap.Gap{{ID: "GAP-FLOW-001", Title: "x", Severity: gap.Medium}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.file, []byte(tt.data))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("gaps (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	const want = `want "- GAP-AREA-NNN (SEVERITY): title", each optionally followed by "Location:" and "Why:" lines`
	tests := []struct {
		name, file, data, wantErr string
	}{
		{"duplicate", "gaps.md", "- GAP-FLOW-001: a\n\n- GAP-FLOW-001 (LOW): b\n",
			"gaps.md:3: duplicate gap ID GAP-FLOW-001 (first on line 1)"},
		{"unknown severity", "gaps.md", "- GAP-FLOW-001 (URGENT): a\n",
			`gaps.md:1: gap GAP-FLOW-001: gap: unknown severity "URGENT": want CRITICAL, HIGH, MEDIUM or LOW`},
		{"prose line", "gaps.md", "- GAP-FLOW-001: a\nThese are the gaps.\n",
			`gaps.md:2: malformed gap line "These are the gaps.": ` + want},
		{"no list marker", "gaps.md", "GAP-FLOW-001: a\n",
			`gaps.md:1: malformed gap line "GAP-FLOW-001: a": ` + want},
		{"invalid ID", "gaps.md", "- GAP-A-001: a\n",
			`gaps.md:1: malformed gap line "- GAP-A-001: a": gap: "GAP-A-001" is not a gap ID: want GAP-{2-10 uppercase letters}-{3 digits}[optional lowercase letter], e.g. GAP-FLOW-001`},
		{"4-digit ID", "gaps.md", "- GAP-FLOW-0012: a\n",
			`gaps.md:1: malformed gap line "- GAP-FLOW-0012: a": gap: "GAP-FLOW-0012" is not a gap ID: want GAP-{2-10 uppercase letters}-{3 digits}[optional lowercase letter], e.g. GAP-FLOW-001`},
		{"no title", "gaps.md", "- GAP-FLOW-001 (HIGH)\n",
			`gaps.md:1: malformed gap line "- GAP-FLOW-001 (HIGH)": missing ": title": ` + want},
		{"empty title", "gaps.md", "- GAP-FLOW-001:   \n",
			`gaps.md:1: malformed gap line "- GAP-FLOW-001:": missing ": title": ` + want},
		{"unclosed severity", "gaps.md", "- GAP-FLOW-001 (HIGH: a\n",
			`gaps.md:1: malformed gap line "- GAP-FLOW-001 (HIGH: a": unclosed "(": ` + want},
		{"empty markdown", "gaps.md", "# Gaps\n\n",
			`gaps.md: no gaps listed (want lines "- GAP-AREA-NNN (SEVERITY): title" or a JSON array of {"id","severity","title"})`},
		{"empty file", "gaps.md", "",
			`gaps.md: no gaps listed (want lines "- GAP-AREA-NNN (SEVERITY): title" or a JSON array of {"id","severity","title"})`},
		{"empty JSON array", "gaps.json", "[]",
			`gaps.json: no gaps listed (want lines "- GAP-AREA-NNN (SEVERITY): title" or a JSON array of {"id","severity","title"})`},
		{"JSON duplicate", "gaps.json", "[\n{\"id\":\"GAP-FLOW-001\",\"title\":\"a\"},\n{\"id\":\"GAP-FLOW-001\",\"title\":\"b\"}\n]",
			"gaps.json:3: duplicate gap ID GAP-FLOW-001 (first on line 2)"},
		{"JSON unknown severity", "gaps.json", "[\n {\"id\":\"GAP-FLOW-001\",\"severity\":\"BAD\",\"title\":\"a\"}]",
			`gaps.json:2: gap GAP-FLOW-001: gap: unknown severity "BAD": want CRITICAL, HIGH, MEDIUM or LOW`},
		{"JSON unknown field", "gaps.json", "[\n {\"id\":\"GAP-FLOW-001\",\n  \"severty\":\"HIGH\",\"title\":\"a\"}]",
			`gaps.json:2: json: unknown field "severty"`},
		{"JSON invalid ID", "gaps.json", "[{\"id\":\"GAP-XXX\",\"title\":\"a\"}]",
			`gaps.json:1: gap: "GAP-XXX" is not a gap ID: want GAP-{2-10 uppercase letters}-{3 digits}[optional lowercase letter], e.g. GAP-FLOW-001`},
		{"JSON missing title", "gaps.json", "[{\"id\":\"GAP-FLOW-001\"}]",
			"gaps.json:1: gap GAP-FLOW-001 has no title"},
		{"JSON element not an object", "gaps.json", "[\n\"GAP-FLOW-001\"\n]",
			`gaps.json:2: got a JSON string where a gap object {"id","severity","title"} belongs`},
		{"JSON field of the wrong type", "gaps.json", "[{\"id\":\"GAP-FLOW-001\",\n\"title\":7}]",
			`gaps.json:1: field "title": got a JSON number, want a string`},
		{"JSON syntax error", "gaps.json", "[\n{\"id\":\"GAP-FLOW-001\",\"title\":\"a\"},\n{\"id\" \"GAP-FLOW-002\"}\n]",
			"gaps.json:3: invalid character '\"' after object key"},
		{"JSON truncated", "gaps.json", "[\n{\"id\":\"GAP-FLOW-001\",\"title\":\"a\"},\n",
			"gaps.json:3: unexpected end of JSON"},
		{"NUL in title", "gaps.md", "- GAP-FLOW-001: a\x00b\n",
			`gaps.md:1: gap GAP-FLOW-001: the title holds the control character U+0000 at byte 1: a title is plain text on one line`},
		{"escape in JSON title", "gaps.json", "[\n{\"id\":\"GAP-FLOW-001\",\"title\":\"a\\u001b]0;x\\u0007\"}]",
			`gaps.json:2: gap GAP-FLOW-001: the title holds the control character U+001B at byte 1: a title is plain text on one line`},
		{"newline in JSON title", "gaps.json", "[{\"id\":\"GAP-FLOW-001\",\"title\":\"a\\nb\"}]",
			`gaps.json:1: gap GAP-FLOW-001: the title holds the control character U+000A at byte 1: a title is plain text on one line`},
		{"bidi override in title", "gaps.md", "- GAP-FLOW-001: a\u202eb\n",
			`gaps.md:1: gap GAP-FLOW-001: the title holds the control character U+202E at byte 1: a title is plain text on one line`},
		{"title too long", "gaps.md", "- GAP-FLOW-001: " + strings.Repeat("x", 501) + "\n",
			`gaps.md:1: gap GAP-FLOW-001: the title is 501 bytes, above the limit of 500: keep it to a line and put details in the spec`},
		{"JSON title too long", "gaps.json", "[{\"id\":\"GAP-FLOW-001\",\"title\":\"" + strings.Repeat("é", 251) + "\"}]",
			`gaps.json:1: gap GAP-FLOW-001: the title is 502 bytes, above the limit of 500: keep it to a line and put details in the spec`},
		{"Location before any gap", "gaps.md", "# Gaps\n  Location: 2. Endpoints\n- GAP-API-001: a\n",
			`gaps.md:2: a Location line before any gap line: put it under the "- GAP-…" line it belongs to`},
		{"second Location", "gaps.md", "- GAP-API-001: a\n  Location: 2. Endpoints\n  Why: w\n  location: 3. Errors\n",
			"gaps.md:4: gap GAP-API-001: a second Location line: a gap has at most one"},
		{"second Why", "gaps.md", "- GAP-API-001: a\n  Why: w\n\n  - Why: again\n",
			"gaps.md:4: gap GAP-API-001: a second Why line: a gap has at most one"},
		{"empty Location", "gaps.md", "- GAP-API-001: a\n  Location:   \n",
			`gaps.md:2: gap GAP-API-001: an empty Location line: write a heading or a quotation of the spec after "Location:"`},
		{"empty Why", "gaps.md", "- GAP-API-001: a\n  **Why:**\n",
			`gaps.md:2: gap GAP-API-001: an empty Why line: write what the spec leaves undecided after "Why:"`},
		{"another field under a gap", "gaps.md", "- GAP-API-001: a\n  Impact: clients break\n",
			`gaps.md:2: malformed gap line "Impact: clients break": ` + want},
		{"a Why without its colon", "gaps.md", "- GAP-API-001: a\n  Why it matters: clients break\n",
			`gaps.md:2: malformed gap line "Why it matters: clients break": ` + want},
		{"escape in Location", "gaps.md", "- GAP-API-001: a\n  Location: x\x1b[2Jy\n",
			`gaps.md:2: gap GAP-API-001: the Location holds the control character U+001B at byte 1: a Location is plain text on one line`},
		{"Why too long", "gaps.md", "- GAP-API-001: a\n  Why: " + strings.Repeat("w", 1001) + "\n",
			`gaps.md:2: gap GAP-API-001: the Why is 1001 bytes, above the limit of 1000: keep it to a line and put details in the spec`},
		{"JSON Location too long", "gaps.json", "[{\"id\":\"GAP-API-001\",\"title\":\"a\",\"location\":\"" + strings.Repeat("l", 501) + "\"}]",
			`gaps.json:1: gap GAP-API-001: the Location is 501 bytes, above the limit of 500: keep it to a line and put details in the spec`},
		{"JSON newline in why", "gaps.json", "[{\"id\":\"GAP-API-001\",\"title\":\"a\",\"why\":\"a\\nb\"}]",
			`gaps.json:1: gap GAP-API-001: the Why holds the control character U+000A at byte 1: a Why is plain text on one line`},
		{"JSON trailing data", "gaps.json", "[{\"id\":\"GAP-FLOW-001\",\"title\":\"a\"}]\n[]",
			"gaps.json:2: unexpected data after the JSON array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gaps, err := Parse(tt.file, []byte(tt.data))
			if err == nil {
				t.Fatalf("no error; gaps %v", gaps)
			}
			if diff := cmp.Diff(tt.wantErr, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFormat(t *testing.T) {
	gaps := []gap.Gap{
		{ID: "GAP-API-001", Severity: gap.High, Title: "Pagination", Location: `"is not specified"`, Why: "no cursor"},
		{ID: "GAP-API-002", Title: "Errors", Why: "w"},
		{ID: "GAP-API-003", Severity: gap.Low, Title: "Limits", Location: "4. Limits"},
	}
	want := "- GAP-API-001 (HIGH): Pagination\n  Location: \"is not specified\"\n  Why: no cursor\n" +
		"- GAP-API-002 (MEDIUM): Errors\n  Why: w\n" +
		"- GAP-API-003 (LOW): Limits\n  Location: 4. Limits\n"
	if diff := cmp.Diff(want, Format(gaps)); diff != "" {
		t.Errorf("Format (-want +got):\n%s", diff)
	}
	back, err := Parse("gaps.md", []byte(want))
	if err != nil {
		t.Fatal(err)
	}
	gaps[1].Severity = gap.Medium
	if diff := cmp.Diff(gaps, back); diff != "" {
		t.Errorf("read back (-want +got):\n%s", diff)
	}
}

// bigGapsJSON is a JSON gap list of n gaps, one element per line.
func bigGapsJSON(n int) string {
	var b strings.Builder
	b.WriteString("[\n")
	for i := range n {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `  {"id": "GAP-%s-%03d", "severity": "LOW", "title": "Gap number %d"}`, areaOf(i), i%999+1, i)
	}
	b.WriteString("\n]\n")
	return b.String()
}

// areaOf gives each block of 999 gaps its own area, so IDs stay unique.
func areaOf(i int) string {
	n := i / 999
	return string([]byte{'A' + byte(n/26%26), 'A' + byte(n%26)})
}

// Numbering the lines of a JSON gap list must not rescan the text from the
// start for every element: 100,000 gaps took 9.8 s that way.
func TestParseGapsJSONLinesInLinearTime(t *testing.T) {
	text := bigGapsJSON(20000)
	gaps, lines, scanned, err := parseGapsJSONCounted("gaps.json", text)
	if err != nil {
		t.Fatal(err)
	}
	if len(gaps) != 20000 || lines[0] != 2 || lines[19999] != 20001 {
		t.Fatalf("got %d gaps, first on line %d, last on line %d", len(gaps), lines[0], lines[len(lines)-1])
	}
	if scanned > 2*len(text) {
		t.Errorf("numbering lines scanned %d bytes of a %d-byte list: not linear", scanned, len(text))
	}
}

// BenchmarkParseGapsJSON parses lists of 10,000 and 100,000 gaps and
// reports the time per gap of each; linear parsing keeps their ratio near 1
// (quadratic line numbering made it about 10).
func BenchmarkParseGapsJSON(b *testing.B) {
	small, large := []byte(bigGapsJSON(10000)), []byte(bigGapsJSON(100000))
	var tSmall, tLarge time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, err := Parse("small.json", small); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := Parse("large.json", large); err != nil {
			b.Fatal(err)
		}
		tSmall, tLarge = tSmall+t1.Sub(t0), tLarge+time.Since(t1)
	}
	perSmall := float64(tSmall.Nanoseconds()) / float64(b.N) / 10000
	perLarge := float64(tLarge.Nanoseconds()) / float64(b.N) / 100000
	b.ReportMetric(perSmall, "ns/gap-10k")
	b.ReportMetric(perLarge, "ns/gap-100k")
	b.ReportMetric(perLarge/perSmall, "ratio-100k/10k")
}

// FuzzParseGapsFile: no input panics, and every gap parsed has a valid ID
// and a title a terminal shows as it is.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"- GAP-FLOW-001 (HIGH): a\n", "- GAP-FLOW-001 (HIGH): a\n  Location: \"x y\"\n  Why: z\n", "[{\"id\":\"GAP-FLOW-001\",\"title\":\"a\",\"location\":\"l\",\"why\":\"w\"}]", "[{\"id\":\"GAP-FLOW-001\",\"title\":\"a\"}]", "[\n{\"id\":", "- GAP-FLOW-001: a\x1b[2J\n", bigGapsJSON(3)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		gaps, err := Parse("gaps", data)
		if err != nil {
			return
		}
		for _, g := range gaps {
			if _, err := gap.ParseID(string(g.ID)); err != nil {
				t.Fatalf("gap with invalid ID %q", g.ID)
			}
			if i, _ := termtext.IndexLine(g.Title); i >= 0 || g.Title == "" || len(g.Title) > maxTitleBytes {
				t.Fatalf("gap %s: title %q accepted", g.ID, g.Title)
			}
			if i, _ := termtext.IndexLine(g.Location); i >= 0 || len(g.Location) > MaxLocationBytes || g.Location != strings.TrimSpace(g.Location) {
				t.Fatalf("gap %s: Location %q accepted", g.ID, g.Location)
			}
			if i, _ := termtext.IndexLine(g.Why); i >= 0 || len(g.Why) > MaxWhyBytes || g.Why != strings.TrimSpace(g.Why) {
				t.Fatalf("gap %s: Why %q accepted", g.ID, g.Why)
			}
		}
		back, err := Parse("formatted.md", []byte(Format(gaps)))
		if err != nil {
			t.Fatalf("Format's list does not parse: %v\n%s", err, Format(gaps))
		}
		if diff := cmp.Diff(gaps, back); diff != "" {
			t.Fatalf("Format then Parse (-read +reread):\n%s", diff)
		}
	})
}
