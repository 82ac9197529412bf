package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
)

// replayWith copies the basic replay folder and adds files (name →
// content), so a resumed session finds responses for retried rounds.
func replayWith(t *testing.T, extra map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	src := "testdata/basic/replay"
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range extra {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// `refine rollback` without --adjust in INTERACTIVE mode asks the rollback
// options and exits 3; `refine resume --answer` carries the rollback out
// (a progress line says so), retries the round with the user's context,
// and `status --json` records the retry's outcome.
func TestRollbackWithoutAdjustAsksThenResumes(t *testing.T) {
	ctx := context.Background()
	dir := runBasic(t)
	eng3 := readFile(t, "testdata/basic/replay/engineer-003.md")
	rev2 := readFile(t, "testdata/basic/replay/reviewer-002.md")
	replayDir := replayWith(t, map[string]string{"engineer-004.md": eng3, "reviewer-003.md": rev2})

	c, out, errb := newTestCLI()
	code := c.main(ctx, []string{"rollback", "--dir", dir, "--to", "1", "--reason", "round 2 skipped key rotation"})
	if code != exitPaused {
		t.Fatalf("rollback exit %d, want 3 (a question waits)\n%s\n%s", code, out, errb)
	}
	for _, want := range []string{"ROUND 2 ROLLBACK OPTIONS", "Reason: round 2 skipped key rotation", "Retry with user-provided context", "refine resume --dir " + dir + " --answer KEY"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("rollback output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "round_002")); err != nil {
		t.Errorf("round_002 was removed before the question was answered: %v", err)
	}

	c, out, errb = newTestCLI()
	code = c.main(ctx, []string{"resume", "--dir", dir, "--replay", replayDir, "--answer", "3:Cover key rotation with an overlap window."})
	if code != exitOK {
		t.Fatalf("resume exit %d\n%s\n%s", code, out, errb)
	}
	if !strings.Contains(out.String(), "COMPLETE") {
		t.Errorf("resume did not complete:\n%s", out)
	}
	progress := errb.String()
	rolled := strings.Index(progress, "rollback: rolled back round(s) 2 to round 1")
	started := strings.Index(progress, "round 2: started")
	if rolled < 0 || started < rolled {
		t.Errorf("progress lacks the rollback line before the retried round:\n%s", progress)
	}
	if _, err := os.Stat(filepath.Join(dir, "round_002_rolled_back_1.tar.gz")); err != nil {
		t.Errorf("no archive of the undone round: %v", err)
	}
	if p := readFile(t, filepath.Join(dir, "round_002/prompts/engineer-1.md")); !strings.Contains(p, "Cover key rotation with an overlap window.") {
		t.Errorf("the retried round's prompt lacks the user's context:\n%s", p)
	}

	c, out, errb = newTestCLI()
	if code := c.main(ctx, []string{"status", "--dir", dir, "--json"}); code != exitOK {
		t.Fatalf("status exit %d: %s", code, errb)
	}
	var st struct {
		Outcome   string `json:"outcome"`
		Rollbacks []struct {
			Round   int    `json:"round"`
			Target  int    `json:"target"`
			Reason  string `json:"reason"`
			Outcome string `json:"outcome"`
		} `json:"rollbacks"`
	}
	if err := json.Unmarshal(out.Bytes(), &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	if len(st.Rollbacks) != 1 {
		t.Fatalf("rollbacks = %+v", st.Rollbacks)
	}
	if r := st.Rollbacks[0]; r.Round != 2 || r.Target != 1 || r.Reason != "round 2 skipped key rotation" || r.Outcome != "Retry successful" {
		t.Errorf("rollback record = %+v, want round 2 to 1 with outcome %q", r, "Retry successful")
	}
}

// Progress lines name the round that is running: the first attempt of
// round 2 says round 2, never round 1.
func TestProgressNamesTheRunningRound(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "session")
	c, out, errb := newTestCLI()
	if code := c.main(context.Background(), []string{"run", "--spec", "testdata/basic/spec.md", "--gaps", "testdata/basic/gaps.md", "--dir", dir,
		"--llm", "replay", "--replay", "testdata/basic/replay", "--auto"}); code != exitOK {
		t.Fatalf("run exit %d\n%s\n%s", code, out, errb)
	}
	var lines []string
	for _, l := range strings.Split(errb.String(), "\n") {
		if _, rest, ok := strings.Cut(l, "] "); ok && strings.HasPrefix(l, "[") {
			lines = append(lines, rest)
		}
	}
	want := []string{
		"round 1: started (assigned [GAP-HOOK-001 GAP-HOOK-002])",
		"round 1: engineer attempt 1…",
		"round 2: started (assigned [GAP-HOOK-002])",
		"round 2: engineer attempt 1…",
		"round 2: reviewer attempt 1…",
	}
	for _, w := range want {
		found := false
		for _, l := range lines {
			found = found || strings.HasPrefix(l, w)
		}
		if !found {
			t.Errorf("progress lacks %q:\n%s", w, strings.Join(lines, "\n"))
		}
	}
	seen2 := false
	for _, l := range lines {
		seen2 = seen2 || strings.HasPrefix(l, "round 2: started")
		if seen2 && strings.HasPrefix(l, "round 1:") {
			t.Errorf("a line after round 2 started names round 1: %q", l)
		}
	}
}

// The rollback event prints one line naming the undone rounds.
func TestProgressPrintsRollback(t *testing.T) {
	var buf lockedBuffer
	p := newProgress(&buf, false)
	p.Observe(refine.Event{Kind: refine.EventRolledBack, Round: 1, Message: "rolled back round(s) 3, 2 to round 1: round_003_rolled_back_1.tar.gz"})
	if got, want := buf.String(), "rollback: rolled back round(s) 3, 2 to round 1: round_003_rolled_back_1.tar.gz\n"; !strings.HasSuffix(got, want) {
		t.Errorf("progress = %q, want a line ending %q", got, want)
	}
}

// conflictSession runs a session whose round 2 Engineer disagrees with the
// round 1 issue of the given severity; without a terminal the run pauses
// at the conflict question (exit 3).
func conflictSession(t *testing.T, sev gap.Severity) string {
	t.Helper()
	ids := []gap.ID{"GAP-HOOK-001"}
	concern := "retry timing is unspecified (GAP-HOOK-001)"
	replayDir := t.TempDir()
	for name, content := range map[string]string{
		"engineer-001.md": refinetest.EngineerOutput(ids...),
		"reviewer-001.md": refinetest.ReviewerOutput(1, ids, refinetest.Issue{Severity: sev, Summary: "retry timing is unspecified"}),
		"engineer-002.md": refinetest.EngineerOutput(ids...) + "\n" + refinetest.Disagree("ISSUE-R1-001", concern, ""),
	} {
		if err := os.WriteFile(filepath.Join(replayDir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	gaps := filepath.Join(t.TempDir(), "gaps.md")
	if err := os.WriteFile(gaps, []byte("- GAP-HOOK-001 (HIGH): Retry schedule\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "s")
	c, out, errb := newTestCLI()
	code := c.main(context.Background(), []string{"run", "--spec", "testdata/basic/spec.md", "--gaps", gaps, "--dir", dir, "--llm", "replay", "--replay", replayDir, "--quiet"})
	if code != exitPaused || !strings.Contains(out.String(), "Conflict: ISSUE-R1-001") {
		t.Fatalf("run exit %d, want 3 paused at the conflict\n%s\n%s", code, out, errb)
	}
	return dir
}

func statusOutcome(t *testing.T, dir string) string {
	t.Helper()
	c, out, errb := newTestCLI()
	if code := c.main(context.Background(), []string{"status", "--dir", dir, "--json"}); code != exitOK {
		t.Fatalf("status exit %d: %s", code, errb)
	}
	var st struct {
		Outcome string `json:"outcome"`
	}
	if err := json.Unmarshal(out.Bytes(), &st); err != nil {
		t.Fatal(err)
	}
	return st.Outcome
}

// `refine approve` is refused while a CRITICAL conflict is unresolved, with
// a message naming it; `refine abandon` always ends the session.
func TestApproveRefusedOnCriticalAbandonWorks(t *testing.T) {
	ctx := context.Background()
	dir := conflictSession(t, gap.Critical)

	for _, args := range [][]string{
		{"approve", "--dir", dir},
		{"approve", "--dir", dir, "--acknowledge-high"},
	} {
		c, out, errb := newTestCLI()
		if code := c.main(ctx, args); code != exitFailed {
			t.Fatalf("%v: exit %d, want 1\n%s\n%s", args, code, out, errb)
		}
		for _, want := range []string{"ISSUE-R1-001", "CRITICAL", "refine resume"} {
			if !strings.Contains(errb.String(), want) {
				t.Errorf("%v: refusal lacks %q: %s", args, want, errb)
			}
		}
	}
	if got := statusOutcome(t, dir); got != "PAUSED" && got != "RUNNING" {
		t.Errorf("outcome after a refused approve = %s", got)
	}

	c, out, errb := newTestCLI()
	if code := c.main(ctx, []string{"abandon", "--dir", dir, "--note", "out of time"}); code != exitOK {
		t.Fatalf("abandon exit %d\n%s\n%s", code, out, errb)
	}
	if !strings.Contains(out.String(), "Session ended as ABANDONED") || !strings.Contains(out.String(), "out of time") {
		t.Errorf("abandon output:\n%s", out)
	}
	if got := statusOutcome(t, dir); got != "ABANDONED" {
		t.Errorf("outcome = %s, want ABANDONED", got)
	}
	c, _, errb = newTestCLI()
	if code := c.main(ctx, []string{"abandon", "--dir", dir}); code != exitFailed || !strings.Contains(errb.String(), "ABANDONED") {
		t.Errorf("second abandon: exit %d, %s", code, errb)
	}
}

// `refine approve` needs --acknowledge-high while a HIGH conflict is
// unresolved; with it the session ends USER_APPROVED.
func TestApproveWithUnresolvedHighConflict(t *testing.T) {
	ctx := context.Background()
	dir := conflictSession(t, gap.High)

	c, out, errb := newTestCLI()
	if code := c.main(ctx, []string{"approve", "--dir", dir}); code != exitFailed {
		t.Fatalf("approve without --acknowledge-high: exit %d\n%s\n%s", code, out, errb)
	}
	for _, want := range []string{"ISSUE-R1-001", "--acknowledge-high"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("refusal lacks %q: %s", want, errb)
		}
	}
	c, out, errb = newTestCLI()
	if code := c.main(ctx, []string{"approve", "--dir", dir, "--acknowledge-high", "--note", "good enough for v1"}); code != exitOK {
		t.Fatalf("approve --acknowledge-high: exit %d\n%s\n%s", code, out, errb)
	}
	if !strings.Contains(out.String(), "Session ended as USER_APPROVED") || !strings.Contains(out.String(), "good enough for v1") {
		t.Errorf("approve output:\n%s", out)
	}
	if got := statusOutcome(t, dir); got != "USER_APPROVED" {
		t.Errorf("outcome = %s, want USER_APPROVED", got)
	}
	c, _, errb = newTestCLI()
	if code := c.main(ctx, []string{"approve", "--dir", dir}); code != exitFailed || !strings.Contains(errb.String(), "USER_APPROVED") {
		t.Errorf("approve of a finished session: exit %d, %s", code, errb)
	}
	c, _, errb = newTestCLI()
	if code := c.main(ctx, []string{"approve"}); code != exitUsage || !strings.Contains(errb.String(), "--dir is required") {
		t.Errorf("approve without --dir: exit %d, %s", code, errb)
	}
}
