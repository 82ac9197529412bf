package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/gap"
)

func TestParseGapsFile(t *testing.T) {
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
		{"JSON with BOM, any file name", "gaps", "\uFEFF  [{\"id\":\"GAP-FLOW-001\",\"severity\":\"\",\"title\":\"x\"}]\n",
			[]gap.Gap{{ID: "GAP-FLOW-001", Title: "x", Severity: gap.Medium}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseGapsFile(tt.file, []byte(tt.data))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("gaps (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseGapsFileErrors(t *testing.T) {
	const want = `want "- GAP-AREA-NNN (SEVERITY): title"`
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
		{"JSON trailing data", "gaps.json", "[{\"id\":\"GAP-FLOW-001\",\"title\":\"a\"}]\n[]",
			"gaps.json:2: unexpected data after the JSON array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gaps, err := parseGapsFile(tt.file, []byte(tt.data))
			if err == nil {
				t.Fatalf("no error; gaps %v", gaps)
			}
			if diff := cmp.Diff(tt.wantErr, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}
