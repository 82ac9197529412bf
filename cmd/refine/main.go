// Command refine runs, resumes, inspects and rolls back spec-refinement
// sessions, and validates role outputs on their own. Run "refine help" for
// the commands and docs/workflow.md for the workflow they drive.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"sort"
	"syscall"

	"golang.org/x/term"
)

// Exit codes shared by the commands.
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
		"gaps":     {"list a draft spec's gaps as a gap list to edit: refine gaps --spec S --llm … [--out FILE], or --offline for the ones it marks itself", cmdGaps},
		"demo":     {"run a bundled session end to end (no API key needed)", cmdDemo},
		"run":      {"start a session: refine run --spec S [--gaps G [--discover]] --dir D --llm openai|anthropic|ollama|replay (no --gaps: discover them first)", cmdRun},
		"resume":   {"continue a paused, failed or interrupted session", cmdResume},
		"status":   {"show a session's status (--json for the machine-readable form)", cmdStatus},
		"rollback": {"undo rounds: refine rollback --dir D --to N --reason TEXT", cmdRollback},
		"archives": {"list rollback archives; --cleanup keep|delete|recent|cold; --expire", cmdArchives},
		"sessions": {"list the sessions of a store: refine sessions --store URL [--json]", cmdSessions},
		"export":   {"copy a session out of a store into a folder: refine export --store URL --session ID --dir D", cmdExport},
		"import":   {"copy a session folder into a store: refine import --dir D --store URL [--session ID]", cmdImport},
		"approve":  {"end a session now as USER_APPROVED: refine approve --dir D [--note TEXT] [--acknowledge-high]", cmdApprove},
		"abandon":  {"end a session now as ABANDONED: refine abandon --dir D [--note TEXT]", cmdAbandon},
		"serve":    {"web console: watch sessions, read rounds, answer questions: refine serve --store DIR [--llm …]", cmdServe},
		"mcp":      {"serve sessions to an MCP client (stdio, or --http ADDR): its model plays the roles, its user answers", cmdMCP},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c := &cli{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, isTerminal: isTerminal(os.Stdin) && isTerminal(os.Stderr), getenv: os.Getenv}
	os.Exit(c.main(ctx, os.Args[1:]))
}

func (c *cli) main(ctx context.Context, args []string) int {
	if len(args) == 0 {
		c.usage(c.stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help":
		c.usage(c.stdout)
		return exitOK
	case "help":
		if len(args) == 1 {
			c.usage(c.stdout)
			return exitOK
		}
		return c.commandHelp(ctx, args[1])
	case "version", "-version", "--version":
		fmt.Fprintln(c.stdout, version())
		return exitOK
	}
	cmd, ok := commandTable()[args[0]]
	if !ok {
		fmt.Fprintf(c.stderr, "refine: unknown command %q\n\n", args[0])
		c.usage(c.stderr)
		return exitUsage
	}
	if wantsHelp(args[1:]) {
		return c.commandHelp(ctx, args[0])
	}
	return cmd.run(ctx, c, args[1:])
}

// wantsHelp reports whether a command's arguments ask for its help, before
// any "--" that ends the flags.
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// commandHelp prints a command's summary and flags on standard output and
// exits 0, as "refine CMD --help" and "refine help CMD" both do.
func (c *cli) commandHelp(ctx context.Context, name string) int {
	cmd, ok := commandTable()[name]
	if !ok {
		fmt.Fprintf(c.stderr, "refine help: unknown command %q\n\n", name)
		c.usage(c.stderr)
		return exitUsage
	}
	fmt.Fprintf(c.stdout, "refine %s: %s\n\n", name, cmd.summary)
	// Each command prints its flags when parsing -h; send that to stdout.
	help := *c
	help.stderr = c.stdout
	cmd.run(ctx, &help, []string{"-h"})
	return exitOK
}

// version describes this build: the module version (or "devel" for a
// build from a work tree), the VCS revision when recorded, and the Go
// release.
func version() string {
	v, rev := "devel", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				rev = " " + s.Value[:12]
			}
		}
	}
	return fmt.Sprintf("refine %s%s (%s %s/%s)", v, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
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
	fmt.Fprintln(w, "\nRun \"refine help <command>\" or \"refine <command> --help\" for a command's flags;")
	fmt.Fprintln(w, "\"refine version\" prints this build's version.")
}

// isTerminal reports whether f is an interactive terminal. A character
// device is not enough: /dev/null is one.
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
