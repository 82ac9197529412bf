// Package devserver starts a Temporal development server for tests: the
// `temporal server start-dev` of the Temporal CLI, on loopback, in
// memory, stopped when the test ends.
package devserver

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// RequireEnv makes a missing CLI fail the test instead of skipping it.
const RequireEnv = "REFINE_REQUIRE_TEMPORAL"

// Binary finds the Temporal CLI: $REFINE_TEMPORAL_CLI, then temporal on
// $PATH, then $(go env GOPATH)/bin/temporal. It skips the test when there
// is none, unless REFINE_REQUIRE_TEMPORAL is set.
func Binary(t testing.TB) string {
	t.Helper()
	candidates := []string{os.Getenv("REFINE_TEMPORAL_CLI")}
	if p, err := exec.LookPath("temporal"); err == nil {
		candidates = append(candidates, p)
	}
	if gopath, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		candidates = append(candidates, filepath.Join(strings.TrimSpace(string(gopath)), "bin", "temporal"))
	}
	for _, c := range candidates {
		if c == "" {
			continue
		}
		if fi, err := os.Stat(c); err == nil && !fi.IsDir() {
			return c
		}
	}
	msg := "needs the Temporal CLI (package github.com/temporalio/cli: go install github.com/temporalio/cli/cmd/temporal@v1.5.0)"
	if os.Getenv(RequireEnv) != "" {
		t.Fatalf("%s is set but the test %s", RequireEnv, msg)
	}
	t.Skip("skipped: " + msg)
	return ""
}

// Start starts a dev server on a free loopback port and returns its
// frontend address (host:port). The server stops when the test ends.
// Each of dynamicConfig is a KEY=VALUE pair for the server's dynamic
// configuration (VALUE in JSON), as `--dynamic-config-value` takes it.
func Start(t testing.TB, dynamicConfig ...string) string {
	t.Helper()
	return Run(t, dynamicConfig...).Addr
}

// Server is a running dev server.
type Server struct {
	// Addr is its frontend address (host:port).
	Addr string
	pid  int
}

// Run starts a dev server as Start does and returns it.
func Run(t testing.TB, dynamicConfig ...string) Server {
	t.Helper()
	bin := Binary(t)
	port := freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	args := []string{"server", "start-dev", "--headless",
		"--ip", "127.0.0.1", "--port", fmt.Sprint(port), "--log-level", "error"}
	for _, kv := range dynamicConfig {
		args = append(args, "--dynamic-config-value", kv)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start %s: %v", bin, err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	// The server prints "Server:  HOST:PORT" once it serves.
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		announced := false
		for sc.Scan() {
			if !announced && strings.HasPrefix(sc.Text(), "Server:") {
				announced = true
				ready <- nil
			}
		}
		if !announced {
			ready <- fmt.Errorf("the dev server exited before serving: %v", sc.Err())
		}
	}()
	select {
	case err := <-ready:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the dev server did not start within 2 minutes")
	}
	return Server{Addr: addr, pid: cmd.Process.Pid}
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
