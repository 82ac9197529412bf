// Command testrun is the README's test command: it runs go vet, then
// go test -json with the given flags and packages, prints the results as
// go test does (a line per package, the output of what failed), and after
// them one line per real component whose tests skipped because it is not
// installed (PostgreSQL, Chromium, the Temporal CLI): the package, what is
// missing and how to get it. A plain go test hides those skips, since it
// shows a passing package's output only with -v.
//
//	go run ./internal/testrun -race ./... ./temporal/...
//
// Flags before the first package are go test's; a flag that takes a value
// may be written -run X or -run=X. The exit code is go test's (1 when a
// test or vet failed, 2 when a command could not run).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// valued are go test's flags that take a value, for -flag VALUE.
var valued = map[string]bool{
	"-run": true, "-skip": true, "-count": true, "-timeout": true, "-p": true, "-parallel": true,
	"-bench": true, "-benchtime": true, "-cpu": true, "-tags": true, "-shuffle": true, "-coverprofile": true,
	"-fuzz": true, "-fuzztime": true, "-list": true, "-ldflags": true, "-gcflags": true, "-o": true,
}

// splitArgs separates go test's flags from the packages.
func splitArgs(args []string) (flags, pkgs []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			return flags, args[i:]
		}
		flags = append(flags, a)
		if valued[a] && i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	return flags, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	flags, pkgs := splitArgs(args)
	if len(pkgs) == 0 {
		pkgs = []string{"./..."}
	}
	vet := exec.CommandContext(ctx, "go", append([]string{"vet"}, pkgs...)...)
	vet.Stdout, vet.Stderr = stdout, stderr
	if err := vet.Run(); err != nil {
		fmt.Fprintf(stderr, "testrun: go vet failed (%v); the tests did not run\n", err)
		return exitOf(err)
	}

	cmd := exec.CommandContext(ctx, "go", append(append([]string{"test", "-json"}, flags...), pkgs...)...)
	cmd.Stderr = stderr
	events, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintf(stderr, "testrun: %v\n", err)
		return 2
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "testrun: go test: %v\n", err)
		return 2
	}
	rep := newReport(stdout)
	if err := rep.read(events); err != nil {
		fmt.Fprintf(stderr, "testrun: reading go test -json: %v\n", err)
	}
	waitErr := cmd.Wait()
	rep.summary()
	if waitErr != nil || rep.failed {
		return max(exitOf(waitErr), 1)
	}
	return 0
}

// exitOf is the exit code a command's error stands for.
func exitOf(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() > 0 {
		return ee.ExitCode()
	}
	return 2
}
