package validate

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/gap"
)

func TestRetriable(t *testing.T) {
	want := map[FailureType]bool{
		MissingFile:         true,
		EmptyOutput:         true,
		WrongFormat:         true,
		NoGapsAddressed:     true,
		InconsistentRefs:    true,
		ThinContent:         false, // warning only
		IncompleteStructure: false, // warning only
		ExecutionError:      false,
		MaxRetriesExhausted: false,
		InvalidDisagreeRef:  true,
		MalformedDisagree:   true,
		ReArguedConflict:    true,
		"SOMETHING_ELSE":    false,
	}
	got := map[FailureType]bool{}
	for ft := range want {
		got[ft] = ft.Retriable()
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Retriable (-want +got):\n%s", diff)
	}
}

func TestConstructors(t *testing.T) {
	tests := []struct {
		name string
		got  Result
		want outcome
	}{
		{"FileMissing", FileMissing("round_003/engineer.md"),
			failed(MissingFile, 0, "Expected file not found: round_003/engineer.md")},
		{"Fail EXECUTION_ERROR", Fail(ExecutionError, "Task tool failed to spawn instance"),
			failed(ExecutionError, 0, "Task tool failed to spawn instance")},
		{"Fail MAX_RETRIES_EXHAUSTED", Fail(MaxRetriesExhausted, "Validation failed after 2 retry attempts"),
			failed(MaxRetriesExhausted, 0, "Validation failed after 2 retry attempts")},
		{"TooLarge default limit", TooLarge(2<<20, Options{}),
			failed(WrongFormat, 0, "output is 2097152 bytes, above the 1048576-byte limit (MaxOutputBytes)")},
		{"TooLarge own limit", TooLarge(11, Options{MaxOutputBytes: 10}),
			failed(WrongFormat, 0, "output is 11 bytes, above the 10-byte limit (MaxOutputBytes)")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, outcomeOf(tt.got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateRole(t *testing.T) {
	src := gapSection("GAP-FLOW-001")
	for _, role := range []gap.Role{"engineer", "Engineer", "ENGINEER"} {
		r, err := Validate(role, src, Options{})
		if err != nil || !r.Success {
			t.Errorf("Validate(%q) = %v, %v", role, r.Message, err)
		}
	}
	if r, err := Validate("reviewer", src, Options{}); err != nil || r.FailureType != WrongFormat {
		t.Errorf("Validate(reviewer, engineer output) = %q, %v; want WRONG_FORMAT", r.FailureType, err)
	}
	_, err := Validate("mediator", src, Options{})
	if err == nil || err.Error() != `validate: unknown role "mediator": want "engineer" or "reviewer"` {
		t.Errorf("unknown role error = %v", err)
	}
}

func TestMinSectionChars(t *testing.T) {
	src := gapSection("GAP-FLOW-001") // about 330 characters
	if r := Engineer(src, Options{}); len(r.Warnings) != 0 {
		t.Errorf("default threshold: warnings %q", r.Warnings)
	}
	r := Engineer(src, Options{MinSectionChars: 5000})
	want := []string{"line 1: Gap GAP-FLOW-001 section is thin (" + itoa(r.Sections[0].Chars) + " chars)"}
	if diff := cmp.Diff(want, r.Warnings); diff != "" || !r.Success || r.Message != "Content valid with warnings: 1 gap addressed" {
		t.Errorf("threshold 5000: %s (-want +got):\n%s", r.Message, diff)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// The `refine validate --json` shape: every key present, lists never null.
func TestJSONShape(t *testing.T) {
	tests := []struct {
		name string
		r    Result
		want string
	}{
		{"failure with nothing parsed", FileMissing("x.md"),
			`{"success":false,"failure_type":"FILE_MISSING","retriable":true,"message":"Expected file not found: x.md","line":0,` +
				`"warnings":[],"gaps_addressed":[],"issues":[],"disagreements":[],"sections":[],"new_gaps":[],"verdict":"","normalized":[]}`},
		{"engineer success", Engineer(doc(gapSection("GAP-FLOW-002"), "## DISAGREE: ISSUE-R1-002\n\n**Reviewer Concern:**\n> x\n\n**Rationale:**\ny\n"), Options{}),
			`{"success":true,"failure_type":"","retriable":false,"message":"Content valid with warnings: 1 gap addressed","line":0,` +
				`"warnings":["line 21: DISAGREE for ISSUE-R1-002 has no '**Engineer Position:**'"],"gaps_addressed":["GAP-FLOW-002"],"issues":[],` +
				`"disagreements":[{"issue_id":"ISSUE-R1-002","reviewer_concern":"x","engineer_position":"","rationale":"y","alternative":"","line":21}],` +
				`"sections":[{"id":"GAP-FLOW-002","confidence":"HIGH","line":1,"end_line":20}],"new_gaps":[],"verdict":"","normalized":[]}`},
		{"normalized engineer answer with a new gap", Engineer("```markdown\n"+strings.Replace(gapSection("GAP-FLOW-002"), "None.", "- GAP-FLOW-009 (LOW): Backoff ceiling", 1)+"```\n", Options{}),
			`{"success":true,"failure_type":"","retriable":false,"message":"Content valid with warnings: 1 gap addressed","line":0,` +
				`"warnings":["NORMALIZED: wrapper-fence ×1 (first at line 1: \"` + "```" + `markdown\")"],"gaps_addressed":["GAP-FLOW-002"],"issues":[],"disagreements":[],` +
				`"sections":[{"id":"GAP-FLOW-002","confidence":"HIGH","line":2,"end_line":21}],` +
				`"new_gaps":[{"id":"GAP-FLOW-009","severity":"LOW","title":"Backoff ceiling","line":20,"from_gap":"GAP-FLOW-002"}],` +
				`"verdict":"","normalized":[{"kind":"wrapper-fence","count":1,"line":1,"first":"` + "```" + `markdown"}]}`},
		{"reviewer failure keeps what was parsed", Reviewer(review, Options{KnownGaps: ids("GAP-FLOW-001")}),
			`{"success":false,"failure_type":"INCONSISTENT_REFS","retriable":true,` +
				`"message":"line 12: Invalid gap references: [GAP-FLOW-002, GAP-FLOW-003]. These do not exist in status.md.","line":12,` +
				`"warnings":[],"gaps_addressed":[],"issues":[` +
				`{"id":"ISSUE-R3-001","severity":"CRITICAL","gap":"GAP-FLOW-001"},{"id":"ISSUE-R3-002","severity":"HIGH","gap":"GAP-FLOW-002"},` +
				`{"id":"ISSUE-R3-003","severity":"MEDIUM","gap":"GAP-FLOW-001"},{"id":"ISSUE-R3-004","severity":"HIGH","gap":"GAP-FLOW-003"},` +
				`{"id":"ISSUE-R3-005","severity":"LOW","gap":"GAP-FLOW-003"}],"disagreements":[],` +
				`"sections":[],"new_gaps":[{"id":"GAP-FLOW-019","severity":"LOW","title":"Handoff timeout policy","line":44,"from_gap":""}],"verdict":"REVISE","normalized":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.r)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(b)); diff != "" {
				t.Errorf("JSON (-want +got):\n%s", diff)
			}
			var back Report
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatalf("Report does not decode its own JSON: %v", err)
			}
			if diff := cmp.Diff(tt.r.Report(), back); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

// An issue without a gap still encodes (gap ""), and severities encode by name.
func TestJSONIssueWithoutGap(t *testing.T) {
	r := Result{Success: true, Issues: []Issue{{ID: "ISSUE-R1-001", Severity: gap.Low}}}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	want := []any{map[string]any{"id": "ISSUE-R1-001", "severity": "LOW", "gap": ""}}
	if diff := cmp.Diff(want, m["issues"]); diff != "" {
		t.Errorf("issues (-want +got):\n%s", diff)
	}
}

func TestWarningsAreCapped(t *testing.T) {
	var b []string
	for i := 1; i <= 150; i++ {
		b = append(b, "## Gap Resolution: GAP-FLOW-"+itoa(100+i)+"\n\n**Confidence:** HIGH\n")
	}
	r := Engineer(doc(b...), Options{})
	// Two warnings per section (thin, no trade-offs): 300 in all.
	if len(r.Warnings) != maxWarnings+1 || r.Warnings[maxWarnings] != "… and 200 more warnings" || !r.Success {
		t.Errorf("%d warnings, last %q", len(r.Warnings), r.Warnings[len(r.Warnings)-1])
	}
	if r.Warnings[0] != "line 1: Gap GAP-FLOW-101 section is thin (20 chars)" {
		t.Errorf("first warning %q", r.Warnings[0])
	}
}
