package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `refine rollback` answers its own options question: --option N, --auto
// or --answers, in one command that rolls back and does not resume; the
// options list shows each option's key once (#27 item 7).
func TestRollbackAnswersItsOwnQuestion(t *testing.T) {
	ctx := context.Background()
	answers := filepath.Join(t.TempDir(), "answers.txt")
	if err := os.WriteFile(answers, []byte("# the rollback options question\n1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		flags    []string
		decision string // in the output
	}{
		{"option", []string{"--option", "2"}, "answer (--option): 2"},
		{"option with text", []string{"--option", "3:the retried round must cover key rotation"}, "answer (--option): 3: the retried round must cover key rotation"},
		{"auto", []string{"--auto"}, "answer (--auto default)"},
		{"answers file", []string{"--answers", answers}, "answer (from file): 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := runBasic(t)
			c, out, errb := newTestCLI()
			args := append([]string{"rollback", "--dir", dir, "--to", "1", "--reason", "round 2 missed key rotation"}, tc.flags...)
			if code := c.main(ctx, args); code != exitOK {
				t.Fatalf("rollback exit %d\n%s\n%s", code, out, errb)
			}
			all := out.String() + errb.String()
			for _, want := range []string{tc.decision, "Rolled back to round 1", "5) Skip to next round"} {
				if !strings.Contains(all, want) {
					t.Errorf("output lacks %q:\n%s", want, all)
				}
			}
			if strings.Contains(all, "[1]") || strings.Contains(all, "1) [") {
				t.Errorf("an option is numbered twice:\n%s", all)
			}
			if _, err := os.Stat(filepath.Join(dir, "round_002_rolled_back_1.tar.gz")); err != nil {
				t.Errorf("round 2 was not archived: %v", err)
			}
			// Rolled back, not resumed: round 2 is not played again.
			c, out, errb = newTestCLI()
			if code := c.main(ctx, []string{"status", "--dir", dir, "--json"}); code != exitOK || !strings.Contains(out.String(), `"round": 1`) {
				t.Errorf("status after the rollback: exit %d, want round 1\n%s\n%s", code, out, errb)
			}
		})
	}
}

// An option the question does not offer is refused, naming the ones it
// does, and nothing is rolled back.
func TestRollbackOptionNotOffered(t *testing.T) {
	ctx := context.Background()
	dir := runBasic(t)
	c, out, errb := newTestCLI()
	code := c.main(ctx, []string{"rollback", "--dir", dir, "--to", "1", "--reason", "r", "--option", "9"})
	if code == exitOK {
		t.Fatalf("rollback --option 9 succeeded\n%s", out)
	}
	if !strings.Contains(errb.String(), "--option") {
		t.Errorf("the error does not name --option:\n%s", errb)
	}
	if _, err := os.Stat(filepath.Join(dir, "round_002_rolled_back_1.tar.gz")); err == nil {
		t.Error("a refused option rolled back anyway")
	}
}

// A rollback left waiting at its question (no terminal, no answer flags)
// is answered by the next `refine rollback --option N`, which carries it
// out and stops before any role call; a refused option leaves it waiting.
func TestRollbackOptionAnswersAWaitingRollback(t *testing.T) {
	ctx := context.Background()
	dir := runBasic(t)
	args := []string{"rollback", "--dir", dir, "--to", "1", "--reason", "round 2 missed key rotation"}
	c, out, errb := newTestCLI()
	if code := c.main(ctx, args); code != exitPaused || !strings.Contains(out.String(), "--option KEY[:text] (or --auto) answers it") {
		t.Fatalf("rollback without an answer: exit %d, want 3 with how to answer\n%s\n%s", code, out, errb)
	}
	c, out, errb = newTestCLI()
	if code := c.main(ctx, append(args, "--option", "9")); code == exitOK {
		t.Fatalf("--option 9 on the waiting rollback succeeded\n%s", out)
	}
	c, out, errb = newTestCLI()
	if code := c.main(ctx, append(args, "--option", "2")); code != exitOK && code != exitPaused {
		t.Fatalf("--option 2 on the waiting rollback: exit %d\n%s\n%s", code, out, errb)
	}
	if _, err := os.Stat(filepath.Join(dir, "round_002_rolled_back_1.tar.gz")); err != nil {
		t.Errorf("the waiting rollback was not carried out: %v\n%s\n%s", err, out, errb)
	}
	c, out, errb = newTestCLI()
	if code := c.main(ctx, []string{"status", "--dir", dir, "--json"}); code != exitOK || !strings.Contains(out.String(), `"round": 1`) {
		t.Errorf("status after the rollback: exit %d, want round 1\n%s\n%s", code, out, errb)
	}
}
