package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/refine-spec/refine"
)

// Tests of the CLI's askers: the --answers file and the terminal.

// escalationQ is a question with numbered options, one needing text.
var escalationQ = refine.Question{ID: "r1-Engineer-escalation-1", Kind: refine.KindEscalation, Round: 1, Title: "Engineer failed validation",
	Body: "Choose an option (1-3): ___", AllowText: true, Default: "1",
	Options:      []refine.Option{{Key: "1", Label: "Skip"}, {Key: "2", Label: "Provide context"}, {Key: "3", Label: "Pause"}},
	TextRequired: []string{"2"}}

// conflictQ is a question with lettered options.
var conflictQ = refine.Question{ID: "conflict-r2-ISSUE-R1-001", Kind: refine.KindConflict, Round: 2, Title: "Conflict", Body: "### Conflict",
	AllowText: true, Default: "A", Options: []refine.Option{{Key: "A", Label: "Reviewer"}, {Key: "B", Label: "Engineer"}}}

func TestParseAnswersFile(t *testing.T) {
	tests := []struct {
		name, in string
		want     []refine.Answer
	}{
		{"empty", "", nil},
		{"comments and blank lines only", "# answers for round 2\n\n   \n\t# indented comment\n", nil},
		{"keys in order", "1\nA\n", []refine.Answer{{Key: "1"}, {Key: "A"}}},
		{"key with text", "2: Use ## Gap Resolution headers\n", []refine.Answer{{Key: "2", Text: "Use ## Gap Resolution headers"}}},
		{"text keeps later colons", "D: cursor: opaque, 30 days\n", []refine.Answer{{Key: "D", Text: "cursor: opaque, 30 days"}}},
		{"CRLF and surrounding spaces", "  B  \r\n 3 :  later \r\n", []refine.Answer{{Key: "B"}, {Key: "3", Text: "later"}}},
		{"no final newline", "# c\nA", []refine.Answer{{Key: "A"}}},
		{"a # after the key is text, not a comment", "A: see #12\n", []refine.Answer{{Key: "A", Text: "see #12"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, parseAnswers(tt.in)); diff != "" {
				t.Errorf("parseAnswers(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestFileAskerAnswersInOrderThenDefers(t *testing.T) {
	ctx := context.Background()
	var w bytes.Buffer
	a := &fileAsker{w: &w, answers: parseAnswers("# first the escalation\n2: add headers\n\nB\n")}
	got, err := a.Ask(ctx, escalationQ)
	if err != nil || got != (refine.Answer{Key: "2", Text: "add headers"}) {
		t.Fatalf("first answer = %+v, %v", got, err)
	}
	got, err = a.Ask(ctx, conflictQ)
	if err != nil || got != (refine.Answer{Key: "B"}) {
		t.Fatalf("second answer = %+v, %v", got, err)
	}
	if _, err := a.Ask(ctx, conflictQ); !errors.Is(err, refine.ErrDeferred) {
		t.Fatalf("used-up file: err = %v, want ErrDeferred", err)
	}
	out := w.String()
	for _, want := range []string{"── Question r1-Engineer-escalation-1 ──", "answer (from file): 2: add headers", "answer (from file): B", "(answers file used up: deferring)"} {
		if !strings.Contains(out, want) {
			t.Errorf("asker output lacks %q:\n%s", want, out)
		}
	}
}

// An answer the question does not offer is an error naming the offered
// keys (not a deferral, not a guess), and the line is used up.
func TestFileAskerRejectsUnofferedKey(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		q    refine.Question
		line string
		want string
	}{
		{"unoffered key", escalationQ, "9", `offers 1, 2, 3, not "9"`},
		{"letter for numbered options", escalationQ, "A", `offers 1, 2, 3, not "A"`},
		{"option that needs text", escalationQ, "2", `option 2 of question r1-Engineer-escalation-1 needs text`},
		{"text where none is allowed", refine.Question{ID: "q", Options: []refine.Option{{Key: "1"}}}, "1: why", "takes no free text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &fileAsker{w: &bytes.Buffer{}, answers: parseAnswers(tt.line + "\n1\n")}
			_, err := a.Ask(ctx, tt.q)
			if !errors.Is(err, refine.ErrInvalidAnswer) || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "answers file: ") {
				t.Fatalf("err = %v, want an answers-file ErrInvalidAnswer containing %q", err, tt.want)
			}
			if len(a.answers) != 1 {
				t.Errorf("%d answers left, want 1: the rejected line is used up", len(a.answers))
			}
		})
	}
}

// basicEscalation writes a replay folder whose first three Engineer answers
// fail validation (so round 1 asks the escalation question) and a gaps
// file, and returns the run arguments for a session in a new folder.
func basicEscalation(t *testing.T) (dir string, args []string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "s")
	replayDir := t.TempDir()
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(replayDir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for i, name := range []string{"engineer-001.md", "engineer-002.md", "engineer-003.md"} {
		write(name, []byte("not a proposal "+string(rune('a'+i))))
	}
	for _, f := range [][2]string{{"engineer-002.md", "engineer-004.md"}, {"reviewer-001.md", "reviewer-001.md"}} {
		b, err := os.ReadFile(filepath.Join("testdata/basic/replay", f[0]))
		if err != nil {
			t.Fatal(err)
		}
		write(f[1], b)
	}
	gaps := filepath.Join(t.TempDir(), "gaps.md")
	if err := os.WriteFile(gaps, []byte("- GAP-HOOK-001 (HIGH): Retry schedule\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, []string{"run", "--spec", "testdata/basic/spec.md", "--gaps", gaps, "--dir", dir, "--llm", "replay", "--replay", replayDir}
}

func writeAnswers(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "answers.txt")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// refine run --answers: the file answers the questions in order; a file
// used up pauses the session (exit 3) with the question shown; a key the
// question does not offer stops the run (exit 1) naming the offered keys,
// with the state saved for refine resume.
func TestRunWithAnswersFile(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		answers string
		code    int
		stdout  []string
		stderr  []string
	}{
		{"answers the escalation", "# round 1 escalation: provide context\n\n3: Use ## Gap Resolution headers\n", exitOK,
			[]string{"COMPLETE after round 1"}, []string{"answer (from file): 3: Use ## Gap Resolution headers"}},
		{"used up", "# nothing yet\n", exitPaused,
			[]string{"── Question r1-engineer-escalation-1 ──", "refine resume --dir"}, []string{"(answers file used up: deferring)"}},
		{"unoffered key", "9\n3: Use ## Gap Resolution headers\n", exitFailed,
			nil, []string{`answers file: invalid answer: question r1-engineer-escalation-1 offers 1, 2, 3, 4, 5, 6`, `not "9"`, "state is saved; fix the cause and run: refine resume --dir"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, args := basicEscalation(t)
			c, out, errb := newTestCLI()
			code := c.main(ctx, append(args, "--answers", writeAnswers(t, tt.answers)))
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out, errb)
			}
			for _, want := range tt.stdout {
				if !strings.Contains(out.String(), want) {
					t.Errorf("stdout lacks %q:\n%s", want, out)
				}
			}
			for _, want := range tt.stderr {
				if !strings.Contains(errb.String(), want) {
					t.Errorf("stderr lacks %q:\n%s", want, errb)
				}
			}
			if code == exitOK {
				return
			}
			// Paused, the question waits for --answer; failed, nothing is
			// pending and a corrected file finishes the session.
			resume := []string{"resume", "--dir", dir, "--answer", "3: Use ## Gap Resolution headers"}
			if tt.code == exitFailed {
				resume = []string{"resume", "--dir", dir, "--answers", writeAnswers(t, "3: Use ## Gap Resolution headers\n")}
			}
			c, out, errb = newTestCLI()
			if code := c.main(ctx, resume); code != exitOK {
				t.Fatalf("%v: exit %d\n%s\n%s", resume, code, out, errb)
			}
			if !strings.Contains(out.String(), "COMPLETE") {
				t.Errorf("resumed session did not complete:\n%s", out)
			}
		})
	}
}

// askTerminal drives a terminalAsker with typed input and returns its
// answer, error and what it wrote.
func askTerminal(q refine.Question, typed string) (refine.Answer, error, string) {
	var w bytes.Buffer
	a := &terminalAsker{in: bufio.NewReader(strings.NewReader(typed)), w: &w}
	ans, err := a.Ask(context.Background(), q)
	return ans, err, w.String()
}

func TestTerminalAsker(t *testing.T) {
	const prompt = "Your choice (option key, optionally ': text'; empty line to pause)"
	tests := []struct {
		name    string
		q       refine.Question
		typed   string
		want    refine.Answer
		defer_  bool
		prompts int
		says    []string
	}{
		{"key", escalationQ, "1\n", refine.Answer{Key: "1"}, false, 1, []string{"[1]: "}},
		{"key with text", escalationQ, "2: Use ## Gap Resolution headers\n", refine.Answer{Key: "2", Text: "Use ## Gap Resolution headers"}, false, 1, nil},
		{"lower-case key: canonicalized where a person types it", conflictQ, "b\n", refine.Answer{Key: "B"}, false, 1, nil},
		{"number for a lettered option", conflictQ, "2\n", refine.Answer{Key: "B"}, false, 1, nil},
		{"invalid key re-asks", escalationQ, "9\n3\n", refine.Answer{Key: "3"}, false, 2, []string{`offers 1, 2, 3, not "9"`}},
		{"missing text re-asks", escalationQ, "2\n2: more context\n", refine.Answer{Key: "2", Text: "more context"}, false, 2, []string{"needs text"}},
		{"several invalid lines", conflictQ, "Z\n7\nA: fine\n", refine.Answer{Key: "A", Text: "fine"}, false, 3, []string{`not "Z"`, `not "7"`}},
		{"last line without newline", escalationQ, "3", refine.Answer{Key: "3"}, false, 1, nil},
		{"empty line defers", escalationQ, "\n1\n", refine.Answer{}, true, 1, nil},
		{"EOF defers", escalationQ, "", refine.Answer{}, true, 1, nil},
		{"EOF after an invalid key defers", escalationQ, "9\n", refine.Answer{}, true, 2, []string{`not "9"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ans, err, out := askTerminal(tt.q, tt.typed)
			if tt.defer_ {
				if !errors.Is(err, refine.ErrDeferred) {
					t.Fatalf("Ask = %+v, %v; want ErrDeferred", ans, err)
				}
			} else if err != nil || ans != tt.want {
				t.Fatalf("Ask = %+v, %v; want %+v", ans, err, tt.want)
			}
			if n := strings.Count(out, prompt); n != tt.prompts {
				t.Errorf("prompted %d times, want %d:\n%s", n, tt.prompts, out)
			}
			if !strings.Contains(out, "── Question "+tt.q.ID+" ──") {
				t.Errorf("the question is not shown:\n%s", out)
			}
			for _, want := range tt.says {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

// With a terminal (and no --answers or --auto) refine run asks there: an
// invalid key is asked again, "KEY: text" passes the text to the session,
// and end of input pauses it (exit 3).
func TestRunAsksOnTerminal(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		typed string
		code  int
	}{
		{"invalid then valid with text", "9\n3: Use ## Gap Resolution headers\n", exitOK},
		{"end of input", "", exitPaused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, args := basicEscalation(t)
			c, out, errb := newTestCLI()
			c.stdin, c.isTerminal = strings.NewReader(tt.typed), true
			if code := c.main(ctx, args); code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out, errb)
			}
			if tt.code == exitPaused {
				if !strings.Contains(out.String(), "refine resume --dir") {
					t.Errorf("paused output does not say how to answer:\n%s", out)
				}
				return
			}
			if !strings.Contains(errb.String(), `not "9"`) {
				t.Errorf("the invalid key was not refused:\n%s", errb)
			}
			b, err := os.ReadFile(filepath.Join(dir, "round_001/prompts/engineer-4.md"))
			if err != nil || !bytes.Contains(b, []byte("Use ## Gap Resolution headers")) {
				t.Errorf("the typed context did not reach the Engineer's next prompt (%v):\n%s", err, b)
			}
		})
	}
}
