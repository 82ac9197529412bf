package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The first hour, second pass (#40): what a new user trips over on the
// command line.

// cliRun runs one command in-process.
func cliRun(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	c, out, errb := newTestCLI()
	code = c.main(context.Background(), args)
	return code, out.String(), errb.String()
}

// demoPausedAtConflict replays the demo's recording with no answers: the
// session pauses at round 2's HIGH conflict on ISSUE-R1-001.
func demoPausedAtConflict(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "s")
	code, out, errb := cliRun(t, "run", "--spec", "demo/spec.md", "--gaps", "demo/gaps.md", "--dir", dir,
		"--llm", "replay", "--replay", "demo/replay", "--gaps-per-round", "2", "--quiet")
	if code != exitPaused || !strings.Contains(out, "ISSUE-R1-001") {
		t.Fatalf("run exit %d, want 3 at the conflict on ISSUE-R1-001\n%s\n%s", code, out, errb)
	}
	return dir
}

// Item 8: CLI errors name flags and commands, never the library's fields.
func TestCLIErrorsNameFlags(t *testing.T) {
	used := demoPausedAtConflict(t)
	fresh := filepath.Join(t.TempDir(), "fresh")
	run := []string{"run", "--spec", "demo/spec.md", "--gaps", "demo/gaps.md", "--llm", "replay", "--replay", "demo/replay", "--quiet"}
	tests := []struct {
		name   string
		args   []string
		code   int
		want   string
		forbid []string
	}{
		{"gaps per round 0", append([]string{"run", "--dir", fresh, "--gaps-per-round", "0"}, run[1:]...), exitUsage,
			"refine run: --gaps-per-round 0: want at least 1", []string{"GapsPerRound", "invalid config"}},
		{"max rounds 1000 on resume", []string{"resume", "--dir", used, "--max-rounds", "1000"}, exitUsage,
			"refine resume: --max-rounds 1000: want 1 to 999", []string{"MaxRounds"}},
		{"rollback mode", append([]string{"run", "--dir", fresh, "--rollback-mode", "foo"}, run[1:]...), exitUsage,
			"--rollback-mode foo: want interactive, auto-retry or strict", []string{"AUTO_RETRY"}},
		{"run into a used folder", append([]string{"run", "--dir", used}, run[1:]...), exitUsage,
			"already holds a session: continue it with refine resume --dir", []string{"use Open", "Open to resume"}},
		{"approve with a HIGH conflict", []string{"approve", "--dir", used}, exitFailed,
			"unresolved HIGH conflict(s) ISSUE-R1-001", []string{"ApproveRequest", "AcknowledgeHigh", "Session.Answer"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errb := cliRun(t, tt.args...)
			if code != tt.code || !strings.Contains(errb, tt.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q\n%s", code, errb, tt.code, tt.want, out)
			}
			for _, f := range tt.forbid {
				if strings.Contains(errb, f) {
					t.Errorf("stderr names %q: %s", f, errb)
				}
			}
		})
	}
	if code, _, errb := cliRun(t, "approve", "--dir", used); code != exitFailed || !strings.Contains(errb, "--acknowledge-high") {
		t.Errorf("approve: exit %d; stderr does not name --acknowledge-high: %s", code, errb)
	}
}

// Item 8: an option a pending rollback does not offer, given to a second
// `refine rollback`, is reported as the rollback's, naming --option.
func TestRollbackOptionErrorNamesRollback(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d")
	if code, out, errb := cliRun(t, "demo", "--dir", dir, "--quiet"); code != exitOK {
		t.Fatalf("demo exit %d\n%s\n%s", code, out, errb)
	}
	if code, out, errb := cliRun(t, "rollback", "--dir", dir, "--to", "2", "--reason", "r"); code != exitPaused {
		t.Fatalf("rollback exit %d, want 3 (its options question)\n%s\n%s", code, out, errb)
	}
	code, out, errb := cliRun(t, "rollback", "--dir", dir, "--to", "2", "--reason", "r", "--option", "9")
	if code == exitOK || !strings.Contains(errb, "refine rollback: --option 9") || strings.Contains(errb, "refine resume:") {
		t.Errorf("rollback --option 9: exit %d, stderr %q; want the rollback's error naming --option\n%s", code, errb, out)
	}
}

// Item 9: settings changed with resume are shown by status, status.md
// and status --json.
func TestSettingsShownByStatus(t *testing.T) {
	dir := demoPausedAtConflict(t)
	if code, out, errb := cliRun(t, "resume", "--dir", dir, "--rollback-limit", "9", "--max-rounds", "12"); code != exitPaused {
		t.Fatalf("resume exit %d\n%s\n%s", code, out, errb)
	}
	code, out, errb := cliRun(t, "status", "--dir", dir)
	if code != exitOK || !strings.Contains(out, "max_rounds 12") || !strings.Contains(out, "rollback_limit 9") || !strings.Contains(out, "gaps_per_round 2") {
		t.Errorf("status does not show the settings (exit %d):\n%s\n%s", code, out, errb)
	}
	md := readFile(t, filepath.Join(dir, "status.md"))
	for _, want := range []string{"## Settings", "| rollback_limit | 9 |", "| max_rounds | 12 |", "max_rounds: 10 → 12", "rollback_limit: 7 → 9"} {
		if !strings.Contains(md, want) {
			t.Errorf("status.md lacks %q:\n%s", want, md)
		}
	}
	code, out, errb = cliRun(t, "status", "--dir", dir, "--json")
	if code != exitOK {
		t.Fatalf("status --json: %s", errb)
	}
	var st struct {
		Settings map[string]any `json:"settings"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatal(err)
	}
	if st.Settings["rollback_limit"] != 9.0 || st.Settings["max_rounds"] != 12.0 || st.Settings["gaps_per_round"] != 2.0 || st.Settings["rollback_mode"] != "INTERACTIVE" {
		t.Errorf("status --json settings %v", st.Settings)
	}
	for k := range st.Settings {
		if strings.Contains(k, "key") || strings.Contains(k, "token") && k != "max_tokens" && k != "max_tokens_cap" {
			t.Errorf("settings carry %q", k)
		}
	}
}

// Item 10: the help names every provider, and refine mcp takes a role per
// provider like run.
func TestHelpNamesEveryProvider(t *testing.T) {
	if _, out, _ := cliRun(t, "help"); !strings.Contains(out, "--llm openai|anthropic|ollama|replay") {
		t.Errorf("refine help:\n%s", out)
	}
	_, out, _ := cliRun(t, "mcp", "--help")
	for _, want := range []string{"openai, anthropic, ollama or replay", "-engineer string", "-reviewer string", "PROVIDER:MODEL"} {
		if !strings.Contains(out, want) {
			t.Errorf("refine mcp --help lacks %q:\n%s", want, out)
		}
	}
	if code, _, errb := cliRun(t, "mcp", "--engineer", "anthropic:claude-sonnet-4-5", "--store", "file:"+t.TempDir()); code != exitUsage || !strings.Contains(errb, "--engineer and --reviewer") {
		t.Errorf("mcp with --engineer alone: exit %d, %s", code, errb)
	}
}

// Item 11: a run refused for a bad flag leaves nothing behind, and the
// readers refuse a store that is not there instead of creating it.
func TestRefusedCommandsCreateNothing(t *testing.T) {
	base := []string{"run", "--spec", "demo/spec.md", "--gaps", "demo/gaps.md", "--quiet"}
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"unknown backend", []string{"--llm", "gpt"}},
		{"replay without --replay", []string{"--llm", "replay"}},
		{"no key", []string{"--llm", "anthropic"}},
		{"answers file missing", []string{"--llm", "replay", "--replay", "demo/replay", "--answers", "no-such-answers.txt"}},
		{"bad setting", []string{"--llm", "replay", "--replay", "demo/replay", "--backup-retention", "0"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "s")
			args := append(append(append([]string{}, base...), "--dir", dir), tt.args...)
			if code, _, errb := cliRun(t, args...); code != exitUsage {
				t.Fatalf("exit %d, want 2: %s", code, errb)
			}
			if _, err := os.Stat(dir); err == nil {
				entries, _ := os.ReadDir(dir)
				t.Errorf("the refused run left %s with %d entries", dir, len(entries))
			}
		})
	}
	missing := filepath.Join(t.TempDir(), "no", "such", "folder")
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a console that did start would stop at once
	c, out, errb := newTestCLI()
	if code := c.main(ctx, []string{"serve", "--store", missing, "--addr", "127.0.0.1:0"}); code != exitUsage || !strings.Contains(errb.String(), "does not exist") {
		t.Errorf("serve --store on a missing folder: exit %d, stderr %q\n%s", code, errb, out)
	}
	if code, _, errb := cliRun(t, "sessions", "--store", "file:"+missing); code != exitUsage || !strings.Contains(errb, "does not exist") {
		t.Errorf("sessions --store on a missing folder: exit %d, %s", code, errb)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("a reader created %s", missing)
	}
}

// Item 12: the demo says where its session goes and records its roles;
// an imported session is named by its ID, and a finished one is not
// offered a resume.
func TestDemoAndImportSayWhatHappened(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(t.TempDir(), "refine-demo")
	if code, out, errb := cliRun(t, "demo", "--dir", dir, "--quiet"); code != exitOK {
		t.Fatalf("demo exit %d\n%s\n%s", code, out, errb)
	}
	_, out, _ := cliRun(t, "status", "--dir", dir, "--json")
	var st struct {
		Roles struct{ Engineer, Reviewer struct{ Provider string } } `json:"roles"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil || st.Roles.Engineer.Provider != "replay" || st.Roles.Reviewer.Provider != "replay" {
		t.Errorf("the demo's roles are not recorded: %v %+v", err, st.Roles)
	}
	code, out, errb := cliRun(t, "import", "--dir", dir, "--store", "file:"+root, "--session", "imported-1")
	if code != exitOK {
		t.Fatalf("import exit %d\n%s\n%s", code, out, errb)
	}
	if strings.Contains(out, "--llm") || !strings.Contains(out, "finished (COMPLETE)") || !strings.Contains(out, "refine status --store") {
		t.Errorf("import of a COMPLETE session suggests:\n%s", out)
	}
	_, out, _ = cliRun(t, "status", "--store", "file:"+root, "--session", "imported-1")
	if !strings.Contains(out, "Session imported-1: COMPLETE") {
		t.Errorf("status of the imported session does not name it by its ID:\n%s", out)
	}
}
