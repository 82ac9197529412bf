package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/gapsfile"
)

// Discovery from the CLI (DESIGN §19): testdata/basic/replay holds
// discovery-001.md, the recorded discovery of testdata/basic/spec.md,
// beside the rounds' answers.

// statusOf reads `refine status --json` of the session in dir.
func statusOf(t *testing.T, dir string) map[string]any {
	t.Helper()
	c, out, errb := newTestCLI()
	if code := c.main(context.Background(), []string{"status", "--dir", dir, "--json"}); code != exitOK {
		t.Fatalf("status exit %d: %s", code, errb)
	}
	var st map[string]any
	if err := json.Unmarshal(out.Bytes(), &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// gapRows are the gaps of a status --json: ID, severity and state.
func gapRows(st map[string]any) []string {
	var out []string
	for _, g := range st["gaps"].([]any) {
		m := g.(map[string]any)
		out = append(out, m["id"].(string)+" "+m["severity"].(string)+" "+m["state"].(string))
	}
	return out
}

// refine run without --gaps discovers, confirms (--auto) and refines to
// the same outcome and final spec as the same session given that list.
func TestRunWithoutGapsDiscoversLikeGivenList(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	given, discovered := filepath.Join(base, "given"), filepath.Join(base, "discovered")
	common := []string{"--spec", "testdata/basic/spec.md", "--llm", "replay", "--replay", "testdata/basic/replay", "--auto", "--quiet"}
	c, out1, errb := newTestCLI()
	if code := c.main(ctx, append([]string{"run", "--gaps", "testdata/basic/gaps.md", "--dir", given}, common...)); code != exitOK {
		t.Fatalf("run --gaps exit %d\n%s\n%s", code, out1, errb)
	}
	c, out2, errb := newTestCLI()
	if code := c.main(ctx, append([]string{"run", "--dir", discovered}, common...)); code != exitOK {
		t.Fatalf("run without --gaps exit %d\n%s\n%s", code, out2, errb)
	}
	if !strings.Contains(errb.String(), "Discovery: confirm the 2 gap(s) found") || !strings.Contains(errb.String(), "answer (--auto default): accept") {
		t.Errorf("the discovery question was not asked and accepted:\n%s", errb)
	}
	a, b := statusOf(t, given), statusOf(t, discovered)
	if a["outcome"] != b["outcome"] || a["round"] != b["round"] || a["outcome"] != "COMPLETE" {
		t.Errorf("discovered session %v in round %v, given one %v in round %v", b["outcome"], b["round"], a["outcome"], a["round"])
	}
	if diff := cmp.Diff(gapRows(a), gapRows(b)); diff != "" {
		t.Errorf("gaps (-given +discovered):\n%s", diff)
	}
	specA, _ := os.ReadFile(filepath.Join(given, "final_spec.md"))
	specB, _ := os.ReadFile(filepath.Join(discovered, "final_spec.md"))
	if len(specA) == 0 || string(specA) != string(specB) {
		t.Errorf("final_spec.md differs:\n%s\n---\n%s", specA, specB)
	}
	list, err := os.ReadFile(filepath.Join(discovered, "discovery", "gaps.md"))
	if err != nil {
		t.Fatal(err)
	}
	gs, err := gapsfile.Parse("discovery/gaps.md", list)
	if err != nil || len(gs) != 2 || gs[1].Location != `"the signature scheme and key rotation are not specified"` {
		t.Errorf("discovery/gaps.md = %v, %v", gs, err)
	}
	if status, _ := os.ReadFile(filepath.Join(discovered, "status.md")); !strings.Contains(string(status), "## Discovery") ||
		!strings.Contains(string(status), `Location: "the retry schedule is not specified"`) {
		t.Errorf("status.md lacks the discovery and the gaps' locations:\n%s", status)
	}
}

// Without an Asker that answers, run pauses at the discovery question;
// resume --answer edit --gaps FILE gives the list, and the session plays on.
func TestResumeAnswerEditGaps(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "s")
	c, out, errb := newTestCLI()
	code := c.main(ctx, []string{"run", "--spec", "testdata/basic/spec.md", "--dir", dir, "--llm", "replay", "--replay", "testdata/basic/replay", "--quiet"})
	if code != exitPaused || !strings.Contains(out.String(), "── Question discovery-1 ──") {
		t.Fatalf("run exit %d, want paused at the discovery question\n%s\n%s", code, out, errb)
	}
	bad := filepath.Join(t.TempDir(), "bad.md")
	if err := os.WriteFile(bad, []byte("- not a gap\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, _, errb = newTestCLI()
	if code := c.main(ctx, []string{"resume", "--dir", dir, "--answer", "edit", "--gaps", bad}); code != exitUsage || !strings.Contains(errb.String(), "--gaps") {
		t.Errorf("resume with a bad list: exit %d, %s", code, errb)
	}
	c, _, errb = newTestCLI()
	if code := c.main(ctx, []string{"resume", "--dir", dir, "--gaps", "testdata/basic/gaps.md"}); code != exitUsage || !strings.Contains(errb.String(), "--answer edit") {
		t.Errorf("resume --gaps without --answer: exit %d, %s", code, errb)
	}
	c, out, errb = newTestCLI()
	if code := c.main(ctx, []string{"resume", "--dir", dir, "--answer", "edit", "--gaps", "testdata/basic/gaps.md", "--quiet", "--auto"}); code != exitOK {
		t.Fatalf("resume exit %d\n%s\n%s", code, out, errb)
	}
	st := statusOf(t, dir)
	want := []string{"GAP-HOOK-001 HIGH ACCEPTED", "GAP-HOOK-002 MEDIUM ACCEPTED"}
	if diff := cmp.Diff(want, gapRows(st)); diff != "" || st["outcome"] != "COMPLETE" {
		t.Errorf("outcome %v, gaps (-want +got):\n%s", st["outcome"], diff)
	}
	if decisions, _ := os.ReadFile(filepath.Join(dir, "decisions.md")); !strings.Contains(string(decisions), "Replace the list with your own") {
		t.Errorf("decisions.md does not record the edit:\n%s", decisions)
	}
}

// run --gaps G --discover proposes additions to G.
func TestRunDiscoverAdditions(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	rec := filepath.Join(tmp, "replay")
	if err := os.MkdirAll(rec, 0o700); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir("testdata/basic/replay")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "discovery-") {
			continue
		}
		b, err := os.ReadFile(filepath.Join("testdata/basic/replay", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(rec, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	discovery := "- GAP-HOOK-002 (MEDIUM): Signature scheme and key rotation are unspecified\n  Location: 3. Security\n  Why: verification\n"
	gaps := "- GAP-HOOK-001 (HIGH): Retry schedule for failed deliveries is unspecified\n"
	for name, text := range map[string]string{filepath.Join(rec, "discovery-001.md"): discovery, filepath.Join(tmp, "gaps.md"): gaps} {
		if err := os.WriteFile(name, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(tmp, "s")
	c, out, errb := newTestCLI()
	if code := c.main(ctx, []string{"run", "--spec", "testdata/basic/spec.md", "--gaps", filepath.Join(tmp, "gaps.md"), "--discover", "--dir", dir,
		"--llm", "replay", "--replay", rec, "--auto", "--quiet"}); code != exitOK {
		t.Fatalf("run exit %d\n%s\n%s", code, out, errb)
	}
	if !strings.Contains(errb.String(), "in addition to the 1 given") {
		t.Errorf("the question does not say the gaps are additions:\n%s", errb)
	}
	want := []string{"GAP-HOOK-001 HIGH ACCEPTED", "GAP-HOOK-002 MEDIUM ACCEPTED"}
	if diff := cmp.Diff(want, gapRows(statusOf(t, dir))); diff != "" {
		t.Errorf("gaps (-want +got):\n%s", diff)
	}
	c, _, errb = newTestCLI()
	if code := c.main(ctx, []string{"run", "--spec", "testdata/basic/spec.md", "--discover", "--dir", filepath.Join(tmp, "t"), "--llm", "replay"}); code != exitUsage ||
		!strings.Contains(errb.String(), "--discover proposes additions to --gaps FILE") {
		t.Errorf("--discover without --gaps: exit %d, %s", code, errb)
	}
}

// refine gaps --spec S --llm … runs discovery alone and writes the list.
func TestGapsDiscoverWithBackend(t *testing.T) {
	ctx := context.Background()
	c, out, errb := newTestCLI()
	if code := c.main(ctx, []string{"gaps", "--spec", "testdata/basic/spec.md", "--llm", "replay", "--replay", "testdata/basic/replay"}); code != exitOK {
		t.Fatalf("exit %d\n%s", code, errb)
	}
	gs, err := gapsfile.Parse("stdout", out.Bytes())
	if err != nil {
		t.Fatalf("the list does not parse: %v\n%s", err, out)
	}
	var ids []gap.ID
	for _, g := range gs {
		ids = append(ids, g.ID)
		if g.Location == "" || g.Why == "" {
			t.Errorf("%s lacks its Location or Why", g.ID)
		}
	}
	if diff := cmp.Diff([]gap.ID{"GAP-HOOK-001", "GAP-HOOK-002"}, ids); diff != "" {
		t.Errorf("gaps (-want +got):\n%s", diff)
	}
	// While the Reviewer reads, progress goes to stderr, never into the list.
	if !strings.Contains(errb.String(), "discovery: reviewer attempt 1…") || !strings.Contains(errb.String(), "discovery: reviewer attempt 1 valid") ||
		strings.Contains(out.String(), "reviewer attempt") {
		t.Errorf("progress: stderr %q, stdout %q", errb, out)
	}
	c, _, errb = newTestCLI()
	if code := c.main(ctx, []string{"gaps", "--spec", "testdata/basic/spec.md", "--replay", "testdata/basic/replay", "--quiet"}); code != exitOK || errb.Len() != 0 {
		t.Errorf("--quiet: exit %d, stderr %q", code, errb)
	}
	outFile := filepath.Join(t.TempDir(), "gaps.md")
	c, out, errb = newTestCLI()
	// --replay alone names the recording.
	if code := c.main(ctx, []string{"gaps", "--spec", "testdata/basic/spec.md", "--replay", "testdata/basic/replay", "--out", outFile}); code != exitOK {
		t.Fatalf("--out: exit %d\n%s", code, errb)
	}
	if b, err := os.ReadFile(outFile); err != nil || !strings.Contains(string(b), "- GAP-HOOK-002 (MEDIUM)") || out.Len() != 0 ||
		!strings.Contains(errb.String(), "2 gaps written to "+outFile) {
		t.Errorf("--out: file %q (%v), stdout %q, stderr %q", b, err, out, errb)
	}
	// A recording without a discovery answer: the error names the file.
	c, _, errb = newTestCLI()
	if code := c.main(ctx, []string{"gaps", "--spec", "testdata/basic/spec.md", "--llm", "replay", "--replay", t.TempDir()}); code != exitFailed ||
		!strings.Contains(errb.String(), "discovery-001.md") {
		t.Errorf("no discovery answer: exit %d, %s", code, errb)
	}
}

// refine demo --discover plays the recorded discovery on the demo's draft
// and goes on to the same v1.0.
func TestDemoDiscover(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	plain, disc := filepath.Join(base, "plain"), filepath.Join(base, "discover")
	c, out, errb := newTestCLI()
	if code := c.main(ctx, []string{"demo", "--dir", plain, "--quiet"}); code != exitOK {
		t.Fatalf("demo exit %d\n%s", code, errb)
	}
	c, out, errb = newTestCLI()
	if code := c.main(ctx, []string{"demo", "--dir", disc, "--quiet", "--discover"}); code != exitOK {
		t.Fatalf("demo --discover exit %d\n%s\n%s", code, out, errb)
	}
	for _, want := range []string{"starting from the draft alone", "Discovery: confirm the 5 gap(s) found", "→ documented default: accept", "COMPLETE after round 4", "discovery/gaps.md"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo --discover transcript lacks %q", want)
		}
	}
	a, _ := os.ReadFile(filepath.Join(plain, "final_spec.md"))
	b, _ := os.ReadFile(filepath.Join(disc, "final_spec.md"))
	if len(a) == 0 || string(a) != string(b) {
		t.Errorf("demo --discover's final_spec.md differs from the demo's")
	}
}

// A session waiting at the discovery question moves between stores like
// any other: imported into SQLite it is answered there, and exported back
// to a folder it is answered there too, each to the outcome of the folder
// it came from.
func TestDiscoveryQuestionSurvivesImportExport(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	src := filepath.Join(base, "src")
	c, out, errb := newTestCLI()
	code := c.main(ctx, []string{"run", "--spec", "testdata/basic/spec.md", "--dir", src, "--llm", "replay", "--replay", "testdata/basic/replay", "--quiet"})
	if code != exitPaused || !strings.Contains(out.String(), "── Question discovery-1 ──") {
		t.Fatalf("run exit %d, want paused at the discovery question\n%s\n%s", code, out, errb)
	}
	db := "sqlite:" + filepath.Join(base, "s.db")
	c, out, errb = newTestCLI()
	if code := c.main(ctx, []string{"import", "--dir", src, "--store", db, "--session", "waiting"}); code != exitOK {
		t.Fatalf("import exit %d\n%s\n%s", code, out, errb)
	}
	back := filepath.Join(base, "back")
	c, out, errb = newTestCLI()
	if code := c.main(ctx, []string{"export", "--store", db, "--session", "waiting", "--dir", back}); code != exitOK {
		t.Fatalf("export exit %d\n%s\n%s", code, out, errb)
	}
	for _, where := range [][]string{{"--dir", back}, {"--store", db, "--session", "waiting"}} {
		c, out, errb = newTestCLI()
		if code := c.main(ctx, append([]string{"status", "--json"}, where...)); code != exitOK {
			t.Fatalf("status %v exit %d: %s", where, code, errb)
		}
		var st map[string]any
		if err := json.Unmarshal(out.Bytes(), &st); err != nil {
			t.Fatal(err)
		}
		pending, _ := st["pending"].([]any)
		if len(pending) != 1 || pending[0].(map[string]any)["kind"] != "discovery" || pending[0].(map[string]any)["id"] != "discovery-1" {
			t.Errorf("status %v does not show the discovery question pending:\n%s", where, out)
		}
	}
	// Answered in the exported folder: the discovered list is accepted.
	c, out, errb = newTestCLI()
	if code := c.main(ctx, []string{"resume", "--dir", back, "--answer", "accept", "--llm", "replay", "--replay", "testdata/basic/replay", "--quiet", "--auto"}); code != exitOK {
		t.Fatalf("resume of the export exit %d\n%s\n%s", code, out, errb)
	}
	// Answered in SQLite: the list is replaced by the given one.
	c, out, errb = newTestCLI()
	if code := c.main(ctx, []string{"resume", "--store", db, "--session", "waiting", "--answer", "edit", "--gaps", "testdata/basic/gaps.md",
		"--llm", "replay", "--replay", "testdata/basic/replay", "--quiet", "--auto"}); code != exitOK {
		t.Fatalf("resume in the store exit %d\n%s\n%s", code, out, errb)
	}
	c, out, errb = newTestCLI()
	if code := c.main(ctx, []string{"status", "--store", db, "--session", "waiting", "--json"}); code != exitOK {
		t.Fatalf("status exit %d: %s", code, errb)
	}
	var inStore map[string]any
	if err := json.Unmarshal(out.Bytes(), &inStore); err != nil {
		t.Fatal(err)
	}
	want := []string{"GAP-HOOK-001 HIGH ACCEPTED", "GAP-HOOK-002 MEDIUM ACCEPTED"}
	for name, st := range map[string]map[string]any{"export": statusOf(t, back), "store": inStore} {
		if diff := cmp.Diff(want, gapRows(st)); diff != "" || st["outcome"] != "COMPLETE" {
			t.Errorf("%s: outcome %v, gaps (-want +got):\n%s", name, st["outcome"], diff)
		}
	}
}
