package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/refine-spec/refine/validate"
)

// basicIntegrated is an integration of testdata/basic's spec with its
// recorded resolutions (engineer-002.md and engineer-003.md).
func basicIntegrated(t *testing.T) string {
	t.Helper()
	body := func(file string) string {
		r := validate.Engineer(readFile(t, filepath.Join("testdata/basic/replay", file)), validate.Options{})
		return strings.TrimSpace(r.Sections[0].Body)
	}
	return "# Webhook Delivery Service — Spec v1.0\n\n## 1. Purpose\nDeliver signed HTTP callbacks to customer endpoints when events occur.\n\n" +
		"## 2. Delivery\nEvents are POSTed as JSON. Failed deliveries are retried as follows.\n\n" + body("engineer-002.md") + "\n\n" +
		"## 3. Security\nPayloads are signed as follows.\n\n" + body("engineer-003.md") + "\n\n" +
		"## Resolution Log\n\n| Item | Section(s) | Note |\n|---|---|---|\n| GAP-HOOK-001 | 2. Delivery | retry schedule |\n| GAP-HOOK-002 | 3. Security | signatures |\n" +
		"| # Webhook Delivery Service — Draft Spec | # Webhook Delivery Service — Spec v1.0 | renamed: no longer a draft |\n"
}

const basicCritical = `## Review: Integrated spec

### Critical Issues

- **ISSUE-R3-001**: 2. Delivery and 3. Security name the signature header differently (GAP-HOOK-002)
  - Location: 3. Security
  - Impact: receivers reject valid deliveries
  - Suggestion: name the header once

### High Priority

None found
`

// A session paused at the integration's escalation question is answered
// by another process (refine resume --answer), which writes the spec.
func TestIntegrationPausedThenAnsweredByResume(t *testing.T) {
	ctx := context.Background()
	spec := basicIntegrated(t)
	rec := replayWith(t, map[string]string{"engineer-004.md": spec, "engineer-005.md": spec, "reviewer-003.md": basicCritical, "reviewer-004.md": basicCritical})
	answers := filepath.Join(t.TempDir(), "answers.txt")
	if err := os.WriteFile(answers, []byte("continue\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "session")
	c, out, errb := newTestCLI()
	code := c.main(ctx, []string{"run", "--spec", "testdata/basic/spec.md", "--gaps", "testdata/basic/gaps.md", "--dir", dir,
		"--llm", "replay", "--replay", rec, "--answers", answers})
	if code != exitPaused {
		t.Fatalf("run exit %d, want 3 (paused at the integration question)\n%s\n%s", code, out, errb)
	}
	for _, want := range []string{"Integrated spec: the consistency review found issues", "ISSUE-R3-001", "accept. Accept the integrated spec", "refine resume --dir",
		"Choose an option (accept, retry, appendix or pause)"} { // not "(accept-pause)" (#40)
		if !strings.Contains(out.String(), want) {
			t.Errorf("run output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errb.String(), "final spec: engineer attempt 2") {
		t.Errorf("progress does not show the integration retry:\n%s", errb)
	}

	c, out, errb = newTestCLI()
	if code := c.main(ctx, []string{"resume", "--dir", dir, "--answer", "accept"}); code != exitOK {
		t.Fatalf("resume exit %d\n%s\n%s", code, out, errb)
	}
	final := readFile(t, filepath.Join(dir, "final_spec.md"))
	if !strings.HasPrefix(final, "# Webhook Delivery Service — Spec v1.0\n") ||
		!strings.Contains(final, "## Known Limitations\n\n- ISSUE-R3-001 (CRITICAL, consistency review): 2. Delivery and 3. Security name the signature header differently (GAP-HOOK-002)\n") {
		t.Errorf("final_spec.md:\n%s", final)
	}
	c, out, errb = newTestCLI()
	if code := c.main(ctx, []string{"status", "--dir", dir, "--json"}); code != exitOK {
		t.Fatalf("status: %s", errb)
	}
	var st struct {
		Outcome    string `json:"outcome"`
		Integrated bool   `json:"integrated"`
		FinalSpec  struct {
			Form string `json:"form"`
		} `json:"final_spec"`
	}
	if err := json.Unmarshal(out.Bytes(), &st); err != nil {
		t.Fatal(err)
	}
	if st.Outcome != "COMPLETE" || !st.Integrated || st.FinalSpec.Form != "integrated" {
		t.Errorf("status: %+v", st)
	}
}

// --no-integrate keeps the appendix form and makes no integration call.
func TestRunNoIntegrate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "session")
	rec := replayWith(t, map[string]string{"engineer-004.md": basicIntegrated(t)})
	c, out, errb := newTestCLI()
	if code := c.main(context.Background(), []string{"run", "--spec", "testdata/basic/spec.md", "--gaps", "testdata/basic/gaps.md", "--dir", dir,
		"--llm", "replay", "--replay", rec, "--auto", "--quiet", "--no-integrate"}); code != exitOK {
		t.Fatalf("run exit %d\n%s\n%s", code, out, errb)
	}
	final := readFile(t, filepath.Join(dir, "final_spec.md"))
	if !strings.HasPrefix(final, "# Webhook Delivery Service — Draft Spec") || !strings.Contains(final, "## Resolved Gaps") {
		t.Errorf("final_spec.md is not the appendix form:\n%.300s", final)
	}
	if _, err := os.Stat(filepath.Join(dir, "final")); !os.IsNotExist(err) {
		t.Errorf("final/ exists (%v): an integration call was made", err)
	}
}
