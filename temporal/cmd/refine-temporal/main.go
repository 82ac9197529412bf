// Command refine-temporal runs refine sessions on Temporal: a worker that
// plays them, and the commands that start, answer and inspect them.
//
//	refine-temporal worker --llm openai|ollama|replay [--replay DIR] [--mirror STORE]
//	refine-temporal start  --spec FILE [--gaps FILE] [--id ID] [--no-mirror] [--local-calls]
//	refine-temporal answer --id ID --key KEY [--text TEXT] [--question QID]
//	refine-temporal status --id ID [--json]
//
// Every command takes --address (default 127.0.0.1:7233), --namespace
// (default "default") and --task-queue (default "refine"). The worker asks
// the server for eager activity dispatch, which saves a task-queue round
// trip per role call; a dev server grants it when started with
// `temporal server start-dev --dynamic-config-value
// system.enableActivityEagerExecution=true`.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"syscall"
)

// Exit codes, as refine's: 0 done, 1 the operation failed, 2 bad usage.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], env{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}))
}

// env is what a command may touch besides its flags.
type env struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	// ready, when set, is called once a worker is polling (tests).
	ready func()
}

type command struct {
	summary string
	run     func(ctx context.Context, args []string, e env) int
}

func commands() map[string]command {
	return map[string]command{
		"worker": {"run a worker that plays sessions: worker --llm openai|ollama|replay [--replay DIR] [--mirror STORE]", cmdWorker},
		"start":  {"start a session: start --spec FILE [--gaps FILE] [--id ID] [--no-mirror] [--local-calls]", cmdStart},
		"answer": {"answer the session's question: answer --id ID --key KEY [--text TEXT]", cmdAnswer},
		"status": {"show a session: status --id ID [--json]", cmdStatus},
	}
}

func run(ctx context.Context, args []string, e env) int {
	cmds := commands()
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(e.stdout, cmds)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	c, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(e.stderr, "refine-temporal: unknown command %q\n", args[0])
		usage(e.stderr, cmds)
		return exitUsage
	}
	return c.run(ctx, args[1:], e)
}

func usage(w io.Writer, cmds map[string]command) {
	fmt.Fprintln(w, "refine-temporal: refine sessions as Temporal workflows")
	fmt.Fprintln(w, "\nCommands:")
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-7s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, "\nEvery command takes --address (default 127.0.0.1:7233), --namespace and --task-queue.")
}
