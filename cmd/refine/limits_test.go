package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/refine-spec/refine/validate"
)

// endless is a standard input that never ends: it counts what was read and
// gives up (failing the test) far beyond any limit, so a reader without one
// fails instead of hanging.
type endless struct {
	t    *testing.T
	n    int64
	stop int64
}

func (e *endless) Read(p []byte) (int, error) {
	if e.n >= e.stop {
		e.t.Errorf("read %d bytes of an endless input: no limit", e.n)
		return 0, errors.New("endless input: the test stopped it")
	}
	for i := range p {
		p[i] = 'x'
	}
	e.n += int64(len(p))
	return len(p), nil
}

func TestValidateEndlessStdinStopsAtTheLimit(t *testing.T) {
	c, out, errb := newTestCLI()
	in := &endless{t: t, stop: 8 * validate.DefaultMaxOutputBytes}
	c.stdin = in
	code := c.main(context.Background(), []string{"validate", "--role", "engineer", "-"})
	if code != exitFailed {
		t.Fatalf("exit %d, want %d (invalid)\nstdout:\n%s\nstderr:\n%s", code, exitFailed, out, errb)
	}
	limit := strconv.Itoa(validate.DefaultMaxOutputBytes)
	if !strings.Contains(out.String(), "too large") || !strings.Contains(out.String(), limit) {
		t.Errorf("output does not say too large with the limit %s:\n%s", limit, out)
	}
	if in.n > validate.DefaultMaxOutputBytes+1 {
		t.Errorf("read %d bytes, want at most the limit plus one (%d)", in.n, validate.DefaultMaxOutputBytes+1)
	}
}

// endlessFIFO makes a named pipe whose writer sends far more than
// maxInputBytes (then ends) and reports how much it wrote.
func endlessFIFO(t *testing.T, name string) (path string, written func() int64) {
	t.Helper()
	path = filepath.Join(t.TempDir(), name)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("cannot make a named pipe here: %v", err)
	}
	done := make(chan int64, 1)
	go func() {
		var n int64
		defer func() { done <- n }()
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		chunk := []byte(strings.Repeat("- GAP-HOOK-001 (HIGH): title\n", 2048))
		for n <= 2*maxInputBytes {
			k, err := f.Write(chunk)
			n += int64(k)
			if err != nil {
				return
			}
		}
	}()
	return path, func() int64 {
		// Let a writer still waiting for a reader go.
		if r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			r.Close()
		}
		return <-done
	}
}

func TestRunInputsAreReadThroughALimit(t *testing.T) {
	for _, flagName := range []string{"spec", "gaps", "answers"} {
		t.Run(flagName, func(t *testing.T) {
			fifo, written := endlessFIFO(t, flagName)
			args := map[string]string{"spec": "testdata/basic/spec.md", "gaps": "testdata/basic/gaps.md"}
			args[flagName] = fifo
			cmd := []string{"run", "--spec", args["spec"], "--gaps", args["gaps"], "--dir", filepath.Join(t.TempDir(), "s"),
				"--llm", "replay", "--replay", "testdata/basic/replay", "--quiet"}
			if flagName == "answers" {
				cmd = append(cmd, "--answers", fifo)
			}
			c, out, errb := newTestCLI()
			code := c.main(context.Background(), cmd)
			n := written()
			if code != exitUsage {
				t.Errorf("exit %d, want %d\nstdout:\n%s", code, exitUsage, out)
			}
			if want := strconv.Itoa(maxInputBytes); !strings.Contains(errb.String(), "too large") || !strings.Contains(errb.String(), want) {
				t.Errorf("stderr does not say too large with the limit %s:\n%s", want, errb)
			}
			if n > maxInputBytes+1+64<<10 {
				t.Errorf("the writer got %d bytes into the pipe: more than the limit plus a pipe buffer was read", n)
			}
		})
	}
}

// An oversize backend answer is a WRONG_FORMAT attempt naming the limit,
// and the journal never holds more than the limit.
func TestOversizeAnswerIsJournaledWithinTheLimit(t *testing.T) {
	replayDir := t.TempDir()
	for _, name := range []string{"engineer-002.md", "reviewer-001.md", "reviewer-002.md"} {
		b, err := os.ReadFile(filepath.Join("testdata/basic/replay", name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(replayDir, name), b, 0o600)
	}
	os.WriteFile(filepath.Join(replayDir, "engineer-001.md"), []byte(strings.Repeat("x", 3*validate.DefaultMaxOutputBytes)), 0o600)
	gaps := filepath.Join(t.TempDir(), "gaps.md")
	os.WriteFile(gaps, []byte("- GAP-HOOK-001 (HIGH): Retry schedule\n"), 0o600)
	dir := filepath.Join(t.TempDir(), "s")
	c, out, errb := newTestCLI()
	c.main(context.Background(), []string{"run", "--spec", "testdata/basic/spec.md", "--gaps", gaps, "--dir", dir,
		"--llm", "replay", "--replay", replayDir, "--auto", "--quiet"})
	fi, err := os.Stat(filepath.Join(dir, "round_001", "attempts", "engineer-1.md"))
	if err != nil {
		t.Fatalf("no journal of the first attempt: %v\n%s\n%s", err, out, errb)
	}
	if fi.Size() > validate.DefaultMaxOutputBytes {
		t.Errorf("journal holds %d bytes, above the %d-byte limit", fi.Size(), validate.DefaultMaxOutputBytes)
	}
	status, _ := os.ReadFile(filepath.Join(dir, "status.md"))
	if !strings.Contains(string(status), "WRONG_FORMAT") || !strings.Contains(string(status), strconv.Itoa(validate.DefaultMaxOutputBytes)) {
		t.Errorf("status.md does not show a WRONG_FORMAT attempt naming the limit")
	}
}
