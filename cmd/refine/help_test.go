package main

import (
	"context"
	"os"
	"strings"
	"testing"
)

// Every command answers --help and "refine help CMD" on standard output
// with exit 0, as Go tools and most CLIs do.
func TestCommandHelp(t *testing.T) {
	for name := range commandTable() {
		for _, args := range [][]string{{name, "--help"}, {name, "-h"}, {"help", name}} {
			c, out, errw := newTestCLI()
			if code := c.main(context.Background(), args); code != exitOK {
				t.Errorf("%v: exit %d, want 0; stderr:\n%s", args, code, errw)
			}
			if !strings.Contains(out.String(), "refine "+name+":") || !strings.Contains(out.String(), "-") {
				t.Errorf("%v: stdout lacks the command's summary and flags:\n%s", args, out)
			}
		}
	}
	c, _, errw := newTestCLI()
	if code := c.main(context.Background(), []string{"help", "nosuch"}); code != exitUsage || !strings.Contains(errw.String(), `unknown command "nosuch"`) {
		t.Errorf("help nosuch: exit %d, stderr %q", code, errw)
	}
	// "--" ends the flags: a later "-h" is an argument, not a help request.
	if wantsHelp([]string{"--", "-h"}) {
		t.Error(`wantsHelp("--", "-h") = true`)
	}
}

func TestVersion(t *testing.T) {
	c, out, _ := newTestCLI()
	if code := c.main(context.Background(), []string{"version"}); code != exitOK || !strings.HasPrefix(out.String(), "refine ") {
		t.Errorf("version: exit %d, %q", code, out)
	}
}

// /dev/null is a character device but not a terminal: a run with its
// input from /dev/null must not wait for a person.
func TestDevNullIsNotATerminal(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Error("isTerminal(/dev/null) = true")
	}
}
