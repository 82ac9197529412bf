package validate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/gap"
)

// Every hostile input gets a clear Result of the right type, never a panic.
func TestBadInput(t *testing.T) {
	engineer := gapSection("GAP-FLOW-001")
	binary := make([]byte, 512)
	for i := range binary {
		binary[i] = byte(i * 7)
	}
	big := strings.Repeat(engineer, 10<<20/len(engineer)+1)[:10<<20] // 10 MiB
	sizeMsg := fmt.Sprintf("output is %d bytes, above the %d-byte limit (MaxOutputBytes)", 10<<20, DefaultMaxOutputBytes)
	tests := []struct {
		name     string
		src      string
		role     gap.Role
		wantType FailureType
		wantLine int
		wantMsg  string // checked when not empty
	}{
		{"empty", "", gap.Engineer, EmptyOutput, 0, "File exists but is empty"},
		{"empty", "", gap.Reviewer, EmptyOutput, 0, "File exists but is empty"},
		{"whitespace only", "\t \r\n \u00a0\n", gap.Engineer, EmptyOutput, 0, "File exists but is empty (only whitespace)"},
		{"whitespace only", "\n\n\n", gap.Reviewer, EmptyOutput, 0, "File exists but is empty (only whitespace)"},
		{"binary", string(binary), gap.Engineer, WrongFormat, 1, "line 1: output contains a NUL byte: it is binary data, not markdown text"},
		{"binary", string(binary), gap.Reviewer, WrongFormat, 1, "line 1: output contains a NUL byte: it is binary data, not markdown text"},
		{"invalid UTF-8 (Latin-1)", engineer + "caf\xe9\n", gap.Engineer, WrongFormat, 20, "line 20: output is not valid UTF-8 text (invalid byte 0xE9)"},
		{"invalid UTF-8 (Latin-1)", review + "caf\xe9\n", gap.Reviewer, WrongFormat, 45, "line 45: output is not valid UTF-8 text (invalid byte 0xE9)"},
		// A fence inside an answer is an example (a fence around the whole
		// answer is a wrapper, read as the answer: see TestNormalize).
		{"headers only inside a fenced example", "An example of the format:\n\n```markdown\n" + engineer + "```\n", gap.Engineer, WrongFormat, 4, ""},
		{"headers only inside a fenced example", "Intro.\n\n~~~\n" + review + "~~~\n", gap.Reviewer, WrongFormat, 6, ""},
		{"unterminated fence swallows the output", "Intro.\n````\n" + engineer, gap.Engineer, WrongFormat, 2,
			"line 2: the fence \"````\" opens a code block that is never closed, so everything after it reads as code: close it with a matching fence line, or remove it"},
		{"unterminated fence swallows the output", "Intro.\n```\n" + review, gap.Reviewer, WrongFormat, 2, ""},
		{"10 MB", big, gap.Engineer, WrongFormat, 0, sizeMsg},
		{"10 MB", big, gap.Reviewer, WrongFormat, 0, sizeMsg},
	}
	for _, tt := range tests {
		t.Run(string(tt.role)+"/"+tt.name, func(t *testing.T) {
			r, err := Validate(tt.role, tt.src, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if r.Success || r.FailureType != tt.wantType || r.Line != tt.wantLine || r.Message == "" || !r.Retriable {
				t.Errorf("got %s at line %d (retriable %v): %q; want %s at line %d", r.FailureType, r.Line, r.Retriable, r.Message, tt.wantType, tt.wantLine)
			}
			if tt.wantMsg != "" && r.Message != tt.wantMsg {
				t.Errorf("message %q, want %q", r.Message, tt.wantMsg)
			}
		})
	}
}

// Backtick runs that a naive code-span matcher handles in quadratic time
// must still give a normal result (the CI time limit is the real bound; no
// timing is asserted here).
func TestPathologicalBackticks(t *testing.T) {
	var soup strings.Builder
	for i := 1; soup.Len() < 900<<10; i++ {
		soup.WriteString(strings.Repeat("`", i%400+1))
		soup.WriteString("x GAP-FLOW-")
	}
	// After text, so the run is inline code to match, not a fence line
	// (a fence left open is WRONG_FORMAT).
	oneLine := "x " + strings.Repeat("`", 500<<10)
	for name, tail := range map[string]string{"runs of every length": soup.String(), "one long run": oneLine} {
		t.Run(name, func(t *testing.T) {
			r := Engineer(gapSection("GAP-FLOW-001")+tail+"\n", Options{KnownGaps: ids("GAP-FLOW-001")})
			if !r.Success {
				t.Errorf("Engineer: %s %s", r.FailureType, r.Message)
			}
			r = Reviewer("## Review: GAP-FLOW-001\n\n### Low Priority\n- ISSUE-R1-001: "+tail+"\n", Options{})
			if !r.Success || len(r.Issues) != 1 {
				t.Errorf("Reviewer: %s %s, %d issues", r.FailureType, r.Message, len(r.Issues))
			}
		})
	}
}

// CRLF, lone CR, a BOM and trailing spaces change nothing: the Result of a
// variant equals the Result of the plain LF document.
func TestLineEndingsAndBOM(t *testing.T) {
	engineer := doc(gapSection("GAP-FLOW-001"), example1)
	variants := map[string]func(string) string{
		"CRLF":            func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") },
		"lone CR":         func(s string) string { return strings.ReplaceAll(s, "\n", "\r") },
		"BOM":             func(s string) string { return "\uFEFF" + s },
		"BOM and CRLF":    func(s string) string { return "\uFEFF" + strings.ReplaceAll(s, "\n", "\r\n") },
		"trailing spaces": func(s string) string { return strings.ReplaceAll(s, "\n", "  \n") },
	}
	opt := Options{Round: 3, KnownGaps: ids("GAP-FLOW-001", "GAP-FLOW-002", "GAP-FLOW-003"), KnownIssues: []string{"ISSUE-R5-003"}}
	for name, f := range variants {
		t.Run(name, func(t *testing.T) {
			for _, c := range []struct {
				role gap.Role
				src  string
			}{{gap.Engineer, engineer}, {gap.Reviewer, review}} {
				want, _ := Validate(c.role, c.src, opt)
				got, _ := Validate(c.role, f(c.src), opt)
				if !want.Success {
					t.Fatalf("%s baseline failed: %s", c.role, want.Message)
				}
				// Text is the answer as read: it keeps the spaces, and its
				// line breaks are "\n" whatever the answer's.
				got.Text, want.Text = "", ""
				if name == "trailing spaces" {
					// Bodies keep the spaces; everything parsed from them must not.
					for i := range got.Sections {
						got.Sections[i].Body, want.Sections[i].Body = "", ""
						got.Sections[i].Chars, want.Sections[i].Chars = 0, 0
					}
					for i := range got.Disagreements {
						// Multi-line fields keep inner trailing spaces as written.
						got.Disagreements[i].ReviewerConcern, want.Disagreements[i].ReviewerConcern = "", ""
						got.Disagreements[i].Rationale, want.Disagreements[i].Rationale = "", ""
						got.Disagreements[i].Alternative, want.Disagreements[i].Alternative = "", ""
					}
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s result changed (-LF +%s):\n%s", c.role, name, diff)
				}
			}
		})
	}
}
