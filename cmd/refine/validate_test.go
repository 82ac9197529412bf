package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// runValidate runs the command in-process.
func runValidate(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	c := &cli{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	code = cmdValidate(context.Background(), c, args)
	return code, out.String(), errb.String()
}

// writeValidateInput writes data to name in a fresh temp dir and returns the path.
func writeValidateInput(t *testing.T, dir, name, data string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const engineerOut = `## Gap Resolution: GAP-FLOW-001 (Revised)

**Confidence:** HIGH

Retries are instant for local files; see GAP-FLOW-002.

### New Gaps Introduced
- GAP-FLOW-019 (LOW): Threshold calibration

## DISAGREE: ISSUE-R2-001

**Reviewer Concern:**
> Use exponential backoff.

**Engineer Position:**
Not for local files.

**Rationale:**
Files fail fast.
`

const reviewerOut = `## Review: GAP-FLOW-001

### Critical Issues
- **ISSUE-R3-001**: Backoff missing
  - Location: Section 4

### Low Priority
- ISSUE-R3-002: Typo in GAP-FLOW-002
`

func TestValidateCommand(t *testing.T) {
	dir := t.TempDir()
	eng := writeValidateInput(t, dir, "engineer.md", engineerOut)
	rev := writeValidateInput(t, dir, "reviewer.md", reviewerOut)
	gaps := writeValidateInput(t, dir, "gaps.md", "- GAP-FLOW-001 (HIGH): Error recovery\n- GAP-FLOW-002: Stall detection\n")
	onlyOne := writeValidateInput(t, dir, "one.md", "- GAP-FLOW-001: Error recovery\n")
	badGaps := writeValidateInput(t, dir, "bad.md", "- GAP-FLOW-001: a\n- GAP-FLOW-001: b\n")
	noHeader := writeValidateInput(t, dir, "prose.md", "Some thoughts on GAP-FLOW-001.\n")
	missing := filepath.Join(dir, "nope.md")

	tests := []struct {
		name       string
		stdin      string
		args       []string
		wantCode   int
		wantStdout string // exact when not empty
		wantStderr string // substring when not empty
	}{
		{"valid engineer output with findings", "", []string{"--role", "engineer", eng}, exitOK,
			"VALID engineer output " + eng + "\n" +
				"  Content valid with warnings: 1 gap addressed\n" +
				"Warnings (2):\n" +
				"  line 1: Gap GAP-FLOW-001 section is thin (156 chars)\n" +
				"  line 1: Missing ### Trade-offs section (recommended) for GAP-FLOW-001\n" +
				"Gaps addressed (1): GAP-FLOW-001\n" +
				"  GAP-FLOW-001   lines 1-9, 156 chars, confidence HIGH (Revised)\n" +
				"Disagreements (1):\n" +
				"  ISSUE-R2-001   line 10\n" +
				"New gaps (1):\n" +
				"  GAP-FLOW-019   LOW      line 8     Threshold calibration\n", ""},
		{"valid reviewer output", "", []string{"--role", "reviewer", "--round", "3", "--gaps", gaps, rev}, exitOK,
			"VALID reviewer output " + rev + "\n" +
				"  Content valid: 2 issues (1 CRITICAL, 1 LOW), verdict REVISE\n" +
				"Verdict: REVISE\n" +
				"Issues (2): CRITICAL 1, HIGH 0, MEDIUM 0, LOW 1\n" +
				"  CRITICAL ISSUE-R3-001   GAP-FLOW-001   line 4     Backoff missing\n" +
				"  LOW      ISSUE-R3-002   GAP-FLOW-002   line 8     Typo in GAP-FLOW-002\n", ""},
		{"invalid: wrong format", "", []string{"--role", "engineer", noHeader}, exitFailed,
			"INVALID engineer output " + noHeader + "\n" +
				"  WRONG_FORMAT (Structure tier, retriable)\n" +
				"  Missing required header: '## Gap Resolution:'\n", ""},
		{"invalid: unknown gap with --gaps", "", []string{"--role", "engineer", "--gaps", onlyOne, eng}, exitFailed,
			"INVALID engineer output " + eng + "\n" +
				"  INCONSISTENT_REFS (Content tier, retriable) at line 5\n" +
				"  line 5: Invalid gap references: [GAP-FLOW-002]. These do not exist in status.md.\n" +
				"Warnings (2):\n" +
				"  line 1: Gap GAP-FLOW-001 section is thin (156 chars)\n" +
				"  line 1: Missing ### Trade-offs section (recommended) for GAP-FLOW-001\n" +
				"Gaps addressed (1): GAP-FLOW-001\n" +
				"  GAP-FLOW-001   lines 1-9, 156 chars, confidence HIGH (Revised)\n" +
				"Disagreements (1):\n" +
				"  ISSUE-R2-001   line 10\n" +
				"New gaps (1):\n" +
				"  GAP-FLOW-019   LOW      line 8     Threshold calibration\n", ""},
		{"invalid: issue of another round", "", []string{"--role", "reviewer", "--round", "4", rev}, exitFailed,
			"INVALID reviewer output " + rev + "\n" +
				"  WRONG_FORMAT (Structure tier, retriable) at line 4\n" +
				"  line 4: issue ID ISSUE-R3-001 is not of round 4 (want ISSUE-R4-NNN)\n", ""},
		{"flags after the file", "", []string{eng, "--role", "engineer"}, exitOK, "", ""},
		{"standard input", engineerOut, []string{"--role", "engineer", "-"}, exitOK, "", ""},
		{"standard input, invalid", "", []string{"--role", "engineer", "-"}, exitFailed,
			"INVALID engineer output -\n  EMPTY_OUTPUT (Structure tier, retriable)\n  File exists but is empty\n", ""},
		{"help", "", []string{"-h"}, exitOK, "", ""},
		{"missing file", "", []string{"--role", "engineer", missing}, exitUsage, "", "refine validate: open " + missing + ": no such file or directory"},
		{"directory", "", []string{"--role", "engineer", dir}, exitUsage, "", dir + " is a directory"},
		{"missing gaps file", "", []string{"--role", "engineer", "--gaps", missing, eng}, exitUsage, "", "reading gap list: open " + missing},
		{"bad gaps file", "", []string{"--role", "engineer", "--gaps", badGaps, eng}, exitUsage, "", badGaps + ":2: duplicate gap ID GAP-FLOW-001 (first on line 1)"},
		{"unknown role", "", []string{"--role", "mediator", eng}, exitUsage, "", `unknown role "mediator": want engineer or reviewer`},
		{"no role", "", []string{eng}, exitUsage, "", "--role is required"},
		{"no file", "", []string{"--role", "engineer"}, exitUsage, "", "want exactly one FILE, got 0"},
		{"two files", "", []string{"--role", "engineer", eng, rev}, exitUsage, "", "want exactly one FILE, got 2"},
		{"unknown flag", "", []string{"--role", "engineer", "--strict", eng}, exitUsage, "", "flag provided but not defined: -strict"},
		{"bad round", "", []string{"--role", "reviewer", "--round", "x", rev}, exitUsage, "", `invalid value "x" for flag -round`},
		{"negative round", "", []string{"--role", "reviewer", "--round", "-1", rev}, exitUsage, "", "--round -1 out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runValidate(t, tt.stdin, tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.wantCode, stdout, stderr)
			}
			if tt.wantStdout != "" {
				if diff := cmp.Diff(tt.wantStdout, stdout); diff != "" {
					t.Errorf("stdout (-want +got):\n%s", diff)
				}
			}
			if tt.wantStderr != "" && !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("stderr %q does not contain %q", stderr, tt.wantStderr)
			}
			if code != exitUsage && stderr != "" {
				t.Errorf("unexpected stderr: %q", stderr)
			}
		})
	}
}

func TestValidateHelpGoesToStdout(t *testing.T) {
	code, stdout, stderr := runValidate(t, "", "--help")
	if code != exitOK || !strings.HasPrefix(stdout, "Usage: refine validate --role engineer|reviewer") || !strings.Contains(stdout, "-gaps") || stderr != "" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// A file after "--" is positional even when it looks like a flag.
func TestValidateDoubleDash(t *testing.T) {
	dir := t.TempDir()
	writeValidateInput(t, dir, "-x.md", engineerOut)
	t.Chdir(dir)
	if code, stdout, stderr := runValidate(t, "", "--role", "engineer", "--", "-x.md"); code != exitOK {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
}

// A file above the size limit is WRONG_FORMAT (exit 1), judged from its size.
func TestValidateHugeFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "huge.md")
	if err := os.WriteFile(p, bytes.Repeat([]byte("## Gap Resolution: GAP-FLOW-001\n"), 10<<20/32), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ := runValidate(t, "", "--role", "engineer", "--json", p)
	var got map[string]any
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
	}
	if code != exitFailed || got["failure_type"] != "WRONG_FORMAT" || got["message"] != "output is 10485760 bytes, above the 1048576-byte limit (MaxOutputBytes)" {
		t.Errorf("exit %d, %v", code, got)
	}
}

// --json gives validate.Result's JSON shape (success, failure_type,
// retriable, message, …) for every spec document, valid or not.
func TestValidateJSONOnSpecDocuments(t *testing.T) {
	paths, _ := filepath.Glob("../../testdata/spec/*.md")
	if len(paths) == 0 {
		t.Fatal("spec corpus testdata/spec is missing")
	}
	wantKeys := []string{"disagreements", "failure_type", "gaps_addressed", "issues", "line", "message", "new_gaps", "normalized", "retriable", "sections", "success", "verdict", "warnings"}
	for _, p := range paths {
		for _, role := range []string{"engineer", "reviewer"} {
			t.Run(filepath.Base(p)+"/"+role, func(t *testing.T) {
				code, stdout, stderr := runValidate(t, "", "--json", "--role", role, p)
				var got map[string]json.RawMessage
				if err := json.Unmarshal([]byte(stdout), &got); err != nil {
					t.Fatalf("stdout is not JSON: %v\n%s\n%s", err, stdout, stderr)
				}
				keys := make([]string, 0, len(got))
				for k := range got {
					keys = append(keys, k)
				}
				slices.Sort(keys)
				if diff := cmp.Diff(wantKeys, keys); diff != "" {
					t.Errorf("keys (-want +got):\n%s", diff)
				}
				for _, k := range []string{"warnings", "gaps_addressed", "issues", "disagreements", "sections", "new_gaps", "normalized"} {
					if !bytes.HasPrefix(got[k], []byte("[")) {
						t.Errorf("%s = %s, want an array", k, got[k])
					}
				}
				var ok bool
				var ft string
				_ = json.Unmarshal(got["success"], &ok)
				_ = json.Unmarshal(got["failure_type"], &ft)
				// The spec documents are Engineer outputs, not Reviewer outputs.
				wantOK := role == "engineer"
				if ok != wantOK || (code == exitOK) != wantOK || (ft == "") != wantOK {
					t.Errorf("success %v, failure_type %q, exit %d; want success %v", ok, ft, code, wantOK)
				}
			})
		}
	}
}

// --json reports what the reading found (the sections with their
// confidence, the new gaps) and what it normalized, for an answer written
// the way chat models write: in a fence, with a demoted second header,
// "**Confidence: HIGH**" and a numbered "New Gaps" heading.
func TestValidateJSONReportsNormalization(t *testing.T) {
	answer := "```markdown\n" + strings.Replace(strings.Replace(engineerOut, "**Confidence:** HIGH", "**Confidence: HIGH**", 1),
		"### New Gaps Introduced", "### 3. New Gaps", 1) +
		"\n### Gap Resolution — GAP-FLOW-002\n\n**Confidence:** LOW\n\nStalls are detected by a timer.\n```\n"
	code, stdout, stderr := runValidate(t, answer, "--json", "--role", "engineer", "-")
	if code != exitOK || stderr != "" {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	var got struct {
		Warnings []string `json:"warnings"`
		Gaps     []string `json:"gaps_addressed"`
		Sections []struct {
			ID         string `json:"id"`
			Confidence string `json:"confidence"`
			Line       int    `json:"line"`
		} `json:"sections"`
		NewGaps []struct {
			ID       string `json:"id"`
			Severity string `json:"severity"`
			FromGap  string `json:"from_gap"`
		} `json:"new_gaps"`
		Normalized []struct {
			Kind  string `json:"kind"`
			Count int    `json:"count"`
			Line  int    `json:"line"`
		} `json:"normalized"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if diff := cmp.Diff([]string{"GAP-FLOW-001", "GAP-FLOW-002"}, got.Gaps); diff != "" {
		t.Errorf("gaps (-want +got):\n%s", diff)
	}
	type sec = struct {
		ID         string `json:"id"`
		Confidence string `json:"confidence"`
		Line       int    `json:"line"`
	}
	if diff := cmp.Diff([]sec{{"GAP-FLOW-001", "HIGH", 2}, {"GAP-FLOW-002", "LOW", 22}}, got.Sections); diff != "" {
		t.Errorf("sections (-want +got):\n%s", diff)
	}
	if len(got.NewGaps) != 1 || got.NewGaps[0].ID != "GAP-FLOW-019" || got.NewGaps[0].Severity != "LOW" || got.NewGaps[0].FromGap != "GAP-FLOW-001" {
		t.Errorf("new gaps %+v", got.NewGaps)
	}
	var kinds []string
	for _, n := range got.Normalized {
		kinds = append(kinds, n.Kind)
	}
	slices.Sort(kinds)
	want := []string{"confidence-form", "heading-level", "numbered-heading", "section-title", "separator", "wrapper-fence"}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("normalized kinds (-want +got):\n%s", diff)
	}
	n := 0
	for _, w := range got.Warnings {
		if strings.HasPrefix(w, "NORMALIZED: ") {
			n++
		}
	}
	if n != len(want) || !slices.Contains(got.Warnings, `NORMALIZED: wrapper-fence ×1 (first at line 1: "`+"```"+`markdown")`) {
		t.Errorf("warnings %q", got.Warnings)
	}
	// The human form lists the same warnings.
	_, text, _ := runValidate(t, answer, "--role", "engineer", "-")
	if !strings.Contains(text, "NORMALIZED: confidence-form ×1 (first at line 4") || !strings.Contains(text, "GAP-FLOW-002   lines 22-") {
		t.Errorf("human output:\n%s", text)
	}
}
