package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// demoAnswersFile runs the demo and writes the answers it gave, in order,
// as an answers file; the last (the archive cleanup) is left out when
// dropLast is set.
func demoAnswersFile(t *testing.T, dropLast bool) (demoDir, answers string) {
	t.Helper()
	demoDir = filepath.Join(t.TempDir(), "demo")
	c, out, errb := newTestCLI()
	if code := c.main(context.Background(), []string{"demo", "--dir", demoDir, "--quiet"}); code != exitOK {
		t.Fatalf("demo exit %d\n%s\n%s", code, out, errb)
	}
	var lines []string
	for _, m := range regexp.MustCompile(`(?m)^  → (?:scripted answer|documented default): (.*)$`).FindAllStringSubmatch(out.String(), -1) {
		lines = append(lines, m[1])
	}
	if len(lines) < 5 {
		t.Fatalf("the demo gave %d answers: %q", len(lines), lines)
	}
	// The answers file the docs use is the same list.
	if got := parseAnswers(readTestFile(t, "demo/answers.txt")); len(got) != len(lines) {
		t.Errorf("demo/answers.txt has %d answers, the demo gave %d: %q", len(got), len(lines), lines)
	} else {
		for i, a := range got {
			if formatAnswer(a) != lines[i] {
				t.Errorf("demo/answers.txt answer %d = %q, the demo gave %q", i+1, formatAnswer(a), lines[i])
			}
		}
	}
	if dropLast {
		lines = lines[:len(lines)-1]
	}
	answers = filepath.Join(t.TempDir(), "answers.txt")
	if err := os.WriteFile(answers, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return demoDir, answers
}

// With --gaps-per-round, `refine run` replays the demo's recording to the
// demo's result; --cold-dir is stored with the session, so the archive
// question offers cold storage (option 4), which --auto takes on a resume
// that does not repeat the flag (#27 item 6).
func TestRunReplaysTheDemoWithItsSettings(t *testing.T) {
	ctx := context.Background()
	demoDir, answers := demoAnswersFile(t, true)
	dir := filepath.Join(t.TempDir(), "session")
	cold := filepath.Join(t.TempDir(), "cold")
	c, out, errb := newTestCLI()
	code := c.main(ctx, []string{"run", "--spec", "demo/spec.md", "--gaps", "demo/gaps.md", "--dir", dir,
		"--llm", "replay", "--replay", "demo/replay", "--answers", answers, "--quiet",
		"--gaps-per-round", "2", "--rollback-limit", "5", "--analysis-threshold", "3", "--backup-retention", "4", "--cold-dir", cold})
	if code != exitOK {
		t.Fatalf("run exit %d\n%s\n%s", code, out, errb)
	}
	if !strings.Contains(out.String(), "COMPLETE after round 4") {
		t.Errorf("the replayed demo did not complete after round 4:\n%s", out)
	}
	want, err := os.ReadFile(filepath.Join(demoDir, "final_spec.md"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "final_spec.md"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("run's final spec differs from the demo's")
	}
	if !strings.Contains(out.String(), "4) Move to cold storage ("+cold+")") {
		t.Errorf("the archive question does not offer the cold-storage folder:\n%s", out)
	}

	var state struct {
		Settings map[string]any `json:"settings"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &state); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]any{"gaps_per_round": 2.0, "rollback_limit": 5.0, "rollback_analysis_threshold": 3.0, "backup_retention": 4.0, "cold_storage": cold} {
		if state.Settings[k] != v {
			t.Errorf("stored setting %s = %v, want %v", k, state.Settings[k], v)
		}
	}

	c, out, errb = newTestCLI()
	if code := c.main(ctx, []string{"resume", "--dir", dir, "--auto", "--quiet"}); code != exitOK {
		t.Fatalf("resume exit %d\n%s\n%s", code, out, errb)
	}
	if _, err := os.Stat(filepath.Join(dir, "round_003_rolled_back_1.tar.gz")); err == nil {
		t.Errorf("the archive is still in the session after --auto chose cold storage:\n%s", errb)
	}
	moved, _ := filepath.Glob(filepath.Join(cold, "spec_refinement_workflow", "*", "round_003_rolled_back_1.tar.gz"))
	if len(moved) != 1 {
		entries, _ := filepath.Glob(filepath.Join(cold, "*", "*"))
		t.Errorf("the archive is not in the cold folder: %v\n%s", entries, errb)
	}
}

func readTestFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
