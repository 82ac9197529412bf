package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func newTestCLI() (*cli, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return &cli{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}, &out, &errb
}

func TestRunReplayScenarioThenStatusJSON(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "session")
	c, out, errb := newTestCLI()
	code := c.main(ctx, []string{"run", "--spec", "testdata/basic/spec.md", "--gaps", "testdata/basic/gaps.md", "--dir", dir,
		"--llm", "replay", "--replay", "testdata/basic/replay", "--auto"})
	if code != exitOK {
		t.Fatalf("run exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errb)
	}
	if !strings.Contains(out.String(), "COMPLETE after round 2") {
		t.Errorf("summary lacks the outcome:\n%s", out)
	}
	for _, f := range []string{"state.json", "status.md", "decisions.md", "round_001/engineer.md", "round_001/reviewer.md", "round_001/summary.md",
		"round_001/attempts/engineer-1.md", "round_001/attempts/engineer-2.md", "round_001/prompts/engineer-2.md", "round_002/engineer.md"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("session folder lacks %s", f)
		}
	}
	retry, _ := os.ReadFile(filepath.Join(dir, "round_001/prompts/engineer-2.md"))
	if !bytes.Contains(retry, []byte("RETRY ATTEMPT 1 of 2")) {
		t.Errorf("retry prompt lacks the notice")
	}

	c, out, errb = newTestCLI()
	if code := c.main(ctx, []string{"status", "--dir", dir, "--json"}); code != exitOK {
		t.Fatalf("status exit %d: %s", code, errb)
	}
	var st map[string]any
	if err := json.Unmarshal(out.Bytes(), &st); err != nil {
		t.Fatalf("status --json is not JSON: %v\n%s", err, out)
	}
	for _, k := range []string{"round", "outcome", "gaps", "convergence", "decisions", "conflicts", "rollbacks", "pending", "usage"} {
		if _, ok := st[k]; !ok {
			t.Errorf("status --json lacks %q", k)
		}
	}
	if st["outcome"] != "COMPLETE" || st["round"] != float64(2) {
		t.Errorf("outcome %v round %v", st["outcome"], st["round"])
	}
	gaps := st["gaps"].([]any)
	if len(gaps) != 2 || gaps[0].(map[string]any)["state"] != "ACCEPTED" || gaps[1].(map[string]any)["severity"] != "MEDIUM" {
		t.Errorf("gaps = %v", gaps)
	}
	conv, _ := json.Marshal(st["convergence"])
	wantConv := `[{"deferred":0,"gaps_end":1,"gaps_start":2,"net":1,"new":0,"reopened":0,"resolved":1,"round":1,"state":"CONVERGING","weighted_net":4,"weighted_open":2},` +
		`{"deferred":0,"gaps_end":0,"gaps_start":1,"net":1,"new":0,"reopened":0,"resolved":1,"round":2,"state":"CONVERGING","weighted_net":2,"weighted_open":0}]`
	if string(conv) != wantConv {
		t.Errorf("convergence rows =\n%s\nwant\n%s", conv, wantConv)
	}
	for _, f := range []string{"convergence.svg", "final_summary.md", "final_spec.md"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("session folder lacks %s", f)
		}
	}
	statusMD, _ := os.ReadFile(filepath.Join(dir, "status.md"))
	if !bytes.Contains(statusMD, []byte("## Convergence Tracking")) || !bytes.Contains(statusMD, []byte("(convergence.svg)")) {
		t.Errorf("status.md lacks the convergence table and chart link")
	}
	finalSpec, _ := os.ReadFile(filepath.Join(dir, "final_spec.md"))
	if !bytes.Contains(finalSpec, []byte("Webhook Delivery Service")) || !bytes.Contains(finalSpec, []byte("HMAC-SHA256")) || !bytes.Contains(finalSpec, []byte("full jitter")) {
		t.Errorf("final_spec.md lacks the source spec or an accepted resolution:\n%s", finalSpec)
	}
	finalSum, _ := os.ReadFile(filepath.Join(dir, "final_summary.md"))
	if !bytes.Contains(finalSum, []byte("## Session Complete")) || !bytes.Contains(finalSum, []byte("**Status:** COMPLETE")) {
		t.Errorf("final_summary.md:\n%s", finalSum)
	}
	usage := st["usage"].(map[string]any)
	if usage["calls"] != float64(5) {
		t.Errorf("usage = %v, want 5 calls", usage)
	}
}

func TestRunPausesWithoutTerminalThenResumes(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "s")
	replayDir, gaps := pausingReplay(t) // three bad Engineer answers force the escalation question

	c, out, errb := newTestCLI()
	code := c.main(ctx, []string{"run", "--spec", "testdata/basic/spec.md", "--gaps", gaps, "--dir", dir, "--llm", "replay", "--replay", replayDir})
	if code != exitPaused {
		t.Fatalf("run exit %d, want 3 (paused)\n%s\n%s", code, out, errb)
	}
	if !strings.Contains(out.String(), "--answer KEY") {
		t.Errorf("paused output does not say how to answer:\n%s", out)
	}
	c, out, errb = newTestCLI()
	code = c.main(ctx, []string{"resume", "--dir", dir, "--replay", replayDir, "--answer", "3: Use ## Gap Resolution headers"})
	if code != exitOK {
		t.Fatalf("resume exit %d\n%s\n%s", code, out, errb)
	}
	if !strings.Contains(out.String(), "COMPLETE") {
		t.Errorf("resume did not complete:\n%s", out)
	}
}

func TestRunUsageErrors(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"missing flags", []string{"run", "--spec", "x"}, "required"},
		{"missing spec file", []string{"run", "--spec", "nope.md", "--gaps", "testdata/basic/gaps.md", "--dir", "d", "--llm", "replay"}, "nope.md"},
		{"bad llm", []string{"run", "--spec", "testdata/basic/spec.md", "--gaps", "testdata/basic/gaps.md", "--dir", "DIR", "--llm", "gpt"}, "want openai, anthropic, ollama or replay"},
		{"status without session", []string{"status", "--dir", "DIR"}, "holds no session: start one with refine run"},
		{"resume without session", []string{"resume", "--dir", "DIR", "--replay", "x"}, "holds no session"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for i, a := range tt.args {
				if a == "DIR" {
					tt.args[i] = dir
				}
			}
			c, _, errb := newTestCLI()
			if code := c.main(ctx, tt.args); code != exitUsage {
				t.Errorf("exit %d, want 2", code)
			}
			if !strings.Contains(errb.String(), tt.want) {
				t.Errorf("stderr lacks %q:\n%s", tt.want, errb)
			}
		})
	}
}

func TestParseAnswers(t *testing.T) {
	got := parseAnswers("# comment\n\nA\nB: keep it short\r\n  3 :  text with: colon \n")
	if len(got) != 3 || got[0].Key != "A" || got[1].Text != "keep it short" || got[2].Key != "3" || got[2].Text != "text with: colon" {
		t.Errorf("parseAnswers = %+v", got)
	}
}
