// Command refine runs, resumes, inspects and rolls back spec-refinement
// sessions, and validates role outputs on their own. Run "refine help" for
// the commands; DESIGN §11 is the contract.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"
)

// Exit codes shared by the commands (DESIGN §11).
const (
	exitOK      = 0 // valid / terminal outcome reached
	exitFailed  = 1 // invalid output / session failed
	exitUsage   = 2 // usage or I/O error
	exitPaused  = 3 // paused waiting for an answer
	exitUnknown = exitUsage
)

// cli carries the process's streams so commands are testable in-process.
type cli struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// isTerminal reports whether stdin and stderr are an interactive terminal.
	isTerminal bool
	getenv     func(string) string
}

type command struct {
	summary string
	run     func(ctx context.Context, c *cli, args []string) int
}

// commands is filled by each command's file in an init-free way: see commandTable.
func commandTable() map[string]command {
	return map[string]command{
		"validate": {"validate an Engineer or Reviewer output file", cmdValidate},
		"demo":     {"run a bundled session end to end (no API key needed)", cmdDemo},
		"run":      {"start a session: refine run --spec S --gaps G --dir D --llm openai|ollama|replay", cmdRun},
		"resume":   {"continue a paused, failed or interrupted session", cmdResume},
		"status":   {"show a session's status (--json for the machine-readable form)", cmdStatus},
		"rollback": {"undo rounds: refine rollback --dir D --to N --reason TEXT", cmdRollback},
		"archives": {"list rollback archives; --cleanup keep|delete|recent|cold; --expire", cmdArchives},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c := &cli{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, isTerminal: isTerminal(os.Stdin) && isTerminal(os.Stderr), getenv: os.Getenv}
	os.Exit(c.main(ctx, os.Args[1:]))
}

func (c *cli) main(ctx context.Context, args []string) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		c.usage(c.stdout)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	cmd, ok := commandTable()[args[0]]
	if !ok {
		fmt.Fprintf(c.stderr, "refine: unknown command %q\n\n", args[0])
		c.usage(c.stderr)
		return exitUsage
	}
	return cmd.run(ctx, c, args[1:])
}

func (c *cli) usage(w io.Writer) {
	fmt.Fprintln(w, "refine turns a loose spec into a finished one by running LLM roles in rounds.")
	fmt.Fprintln(w, "\nUsage: refine <command> [flags]\n\nCommands:")
	table := commandTable()
	names := make([]string, 0, len(table))
	for n := range table {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, table[n].summary)
	}
	fmt.Fprintln(w, "\nRun \"refine <command> -h\" for a command's flags.")
}

// isTerminal reports whether f is a character device (a terminal), without
// a dependency on x/term.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
