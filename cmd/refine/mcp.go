package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/mcpserver"
)

// mcpTokenEnv names the environment variable that may carry the --http
// token instead of --token.
const mcpTokenEnv = "REFINE_MCP_TOKEN"

func cmdMCP(ctx context.Context, c *cli, args []string) int {
	fl := flag.NewFlagSet("refine mcp", flag.ContinueOnError)
	fl.SetOutput(c.stderr)
	storeURL := storeFlag(fl, defaultMCPStore(c.getenv), "the sessions (default: a folder under your state directory)")
	httpAddr := fl.String("http", "", "serve streamable HTTP on this address (127.0.0.1:PORT) instead of stdio; anything but loopback needs --token")
	token := fl.String("token", "", "with --http, require this token as Authorization: Bearer TOKEN (or set "+mcpTokenEnv+")")
	var f sessionFlags
	fl.StringVar(&f.llm, "llm", "", "who plays the roles: sampling (the client's model; the default when the client offers sampling), or a server-side backend: openai, anthropic, ollama or replay")
	f.registerProviders(fl)
	fl.StringVar(&f.model, "model", "", "model for both roles (a hint to the client under sampling)")
	fl.StringVar(&f.engineerModel, "engineer-model", "", "model for the Engineer (overrides --model; a sampling model hint)")
	fl.StringVar(&f.reviewerModel, "reviewer-model", "", "model for the Reviewer (overrides --model; a sampling model hint)")
	fl.StringVar(&f.baseURL, "base-url", "", "backend URL (OpenAI-compatible /v1 endpoint or Ollama server)")
	fl.StringVar(&f.replayDir, "replay", "", "folder of engineer-NNN.md / reviewer-NNN.md responses (--llm replay)")
	fl.DurationVar(&f.timeout, "timeout", 5*time.Minute, "timeout of one server-side LLM call")
	fl.IntVar(&f.retries, "transport-retries", 5, "retries of a call that failed with a rate limit, timeout or server error")
	fl.DurationVar(&f.backoff, "backoff-base", time.Second, "first backoff ceiling between transport retries")
	budget := fl.Duration("call-budget", mcpserver.DefaultCallBudget, "how long one tool call drives a session before returning (the agent then calls refine_continue)")
	idle := fl.Duration("idle-timeout", mcpserver.DefaultIdleTimeout, "stop a running session no tool call drove for this long (it stays resumable)")
	if err := fl.Parse(args); err != nil {
		return exitUsage
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(c.stderr, "refine mcp: unexpected argument %q\n", fl.Arg(0))
		return exitUsage
	}
	if err := checkFlagValues(fl); err != nil {
		fmt.Fprintf(c.stderr, "refine mcp: %v\n", err)
		return exitUsage
	}
	if *storeURL == "" {
		fmt.Fprintln(c.stderr, "refine mcp: --store is required: no state directory is known here (set XDG_STATE_HOME or HOME)")
		return exitUsage
	}
	if *token == "" && c.getenv != nil {
		*token = c.getenv(mcpTokenEnv)
	}
	if f.llm == "" && f.replayDir != "" {
		f.llm = "replay"
	}
	cfg := mcpserver.Config{Version: version(), CallBudget: *budget, IdleTimeout: *idle, Logger: c.storeLogger(),
		EngineerHint: cmp.Or(f.engineerModel, f.model), ReviewerHint: cmp.Or(f.reviewerModel, f.model), AllowPaths: *httpAddr == ""}
	switch {
	case f.llm == "" && f.engineer == "" && f.reviewer == "":
	case f.llm == mcpserver.SamplingKind && f.engineer == "" && f.reviewer == "":
		cfg.Roles = mcpserver.RolesSampling
	case !f.hasBackend() || f.llm == mcpserver.SamplingKind:
		// A role per provider is a server-side backend: both roles named.
		fmt.Fprintln(c.stderr, "refine mcp: --engineer and --reviewer PROVIDER:MODEL go together (or with --llm openai|anthropic|ollama|replay for the other role); under sampling the client's model plays both")
		return exitUsage
	default:
		if _, _, err := c.roles(&f, 0); err != nil {
			fmt.Fprintf(c.stderr, "refine mcp: %v\n", err)
			return exitUsage
		}
		cfg.Roles = mcpserver.RolesServer
		f.quiet = true // stdout may be the protocol's; progress goes to the client
		cfg.Configure = func(ctx context.Context, id string, st refine.Store) (refine.Config, error) {
			fc := f
			sc, code := c.sessionConfig(ctx, &fc, st)
			if code != exitOK {
				return sc, fmt.Errorf("session %s: the backend flags were refused (see the server's log)", id)
			}
			return sc, nil
		}
	}
	var loop bool
	if *httpAddr != "" {
		var err error
		if loop, err = isLoopback(*httpAddr); err != nil {
			fmt.Fprintf(c.stderr, "refine mcp: --http %s: %v\n", *httpAddr, err)
			return exitUsage
		}
		if !loop && *token == "" {
			fmt.Fprintf(c.stderr, "refine mcp: --http %s is reachable from other machines: give --token (or %s), or listen on 127.0.0.1\n", *httpAddr, mcpTokenEnv)
			return exitUsage
		}
	}
	backend, err := c.serveBackend(ctx, *storeURL)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine mcp: %v\n", safeErr(err))
		return exitUsage
	}
	defer backend.Close()
	cfg.Backend = backend
	srv, err := mcpserver.New(cfg)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine mcp: %v\n", err)
		return exitUsage
	}
	defer srv.Close() // running sessions commit and stay resumable
	if *httpAddr == "" {
		t := &mcp.IOTransport{Reader: io.NopCloser(c.stdin), Writer: nopWriteCloser{c.stdout}}
		// The client closing its end (EOF, a closed pipe, even while a
		// notification was being sent) is the normal end of a stdio server.
		if err := srv.MCP().Run(ctx, t); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) &&
			!clientClosed(err) && !errors.Is(err, mcp.ErrConnectionClosed) {
			fmt.Fprintf(c.stderr, "refine mcp: %v\n", err)
			return exitFailed
		}
		return exitOK
	}
	ln, err := net.Listen("tcp", *httpAddr)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine mcp: %v\n", err)
		return exitUsage
	}
	hs := &http.Server{Handler: srv.HTTPHandler(mcpserver.Guard{Token: *token, Loopback: loop}), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(c.stderr, "refine mcp: streamable HTTP at http://%s/ over %s. Ctrl-C stops it.\n", ln.Addr(), *storeURL)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err = <-errc:
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		err = hs.Shutdown(sctx)
		cancel()
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(c.stderr, "refine mcp: %v\n", err)
		return exitFailed
	}
	return exitOK
}

// nopWriteCloser keeps the process's standard output open when the
// transport closes.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// defaultMCPStore is the store refine mcp uses without --store: a
// "refine/sessions" folder under the user's state directory
// ($XDG_STATE_HOME, else ~/.local/state; ~/Library/Application Support on
// macOS; %LocalAppData% on Windows). "" when none is known.
func defaultMCPStore(getenv func(string) string) string {
	if getenv == nil {
		getenv = os.Getenv
	}
	var base string
	switch {
	case getenv("XDG_STATE_HOME") != "":
		base = getenv("XDG_STATE_HOME")
	case runtime.GOOS == "windows" && getenv("LocalAppData") != "":
		base = getenv("LocalAppData")
	case getenv("HOME") != "" && runtime.GOOS == "darwin":
		base = filepath.Join(getenv("HOME"), "Library", "Application Support")
	case getenv("HOME") != "":
		base = filepath.Join(getenv("HOME"), ".local", "state")
	default:
		return ""
	}
	return "file:" + filepath.Join(base, "refine", "sessions")
}

// clientClosed reports whether err says the client closed its end of the
// pipe; the SDK may report it as text rather than wrap io.ErrClosedPipe.
func clientClosed(err error) bool {
	return errors.Is(err, io.ErrClosedPipe) || strings.Contains(err.Error(), io.ErrClosedPipe.Error())
}
