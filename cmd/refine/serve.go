package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/web"
)

// serveTokenEnv names the environment variable that may carry the console
// token instead of --token (command lines are visible to other users).
const serveTokenEnv = "REFINE_SERVE_TOKEN"

func cmdServe(ctx context.Context, c *cli, args []string) int {
	fl := flag.NewFlagSet("refine serve", flag.ContinueOnError)
	fl.SetOutput(c.stderr)
	addr := fl.String("addr", "127.0.0.1:8080", "address to listen on; anything but loopback needs --token")
	storeURL := storeFlag(fl, "", "the sessions (required)")
	token := fl.String("token", "", "require this token: Bearer for the API, a login form for pages (or set "+serveTokenEnv+")")
	var allowedHosts multiFlag
	fl.Var(&allowedHosts, "allowed-host", "also answer requests for this Host, NAME or NAME:PORT: a reverse proxy's name (repeatable); others get 403")
	var f sessionFlags
	fl.StringVar(&f.llm, "llm", "", "backend that drives sessions: openai, anthropic, ollama or replay (without it, or --engineer and --reviewer, the console only shows sessions)")
	f.registerProviders(fl)
	fl.StringVar(&f.model, "model", "", "model name for both roles")
	fl.StringVar(&f.engineerModel, "engineer-model", "", "model for the Engineer (overrides --model)")
	fl.StringVar(&f.reviewerModel, "reviewer-model", "", "model for the Reviewer (overrides --model)")
	fl.StringVar(&f.baseURL, "base-url", "", "backend URL (OpenAI-compatible /v1 endpoint or Ollama server)")
	fl.StringVar(&f.replayDir, "replay", "", "folder of engineer-NNN.md / reviewer-NNN.md responses (--llm replay)")
	fl.DurationVar(&f.timeout, "timeout", 5*time.Minute, "timeout of one LLM call")
	fl.IntVar(&f.retries, "transport-retries", 5, "retries of a call that failed with a rate limit, timeout or server error")
	fl.DurationVar(&f.backoff, "backoff-base", time.Second, "first backoff ceiling between transport retries")
	fl.StringVar(&f.otlpEndpoint, "otlp-endpoint", "", "send traces and metrics of the sessions it drives over OTLP/HTTP to this collector URL; none when unset")
	fl.BoolVar(&f.otlpContent, "otlp-include-content", false, "with --otlp-endpoint, also record prompts, responses and answers in spans")
	if err := fl.Parse(args); err != nil {
		return exitUsage
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(c.stderr, "refine serve: unexpected argument %q\n", fl.Arg(0))
		return exitUsage
	}
	if err := checkFlagValues(fl); err != nil {
		fmt.Fprintf(c.stderr, "refine serve: %v\n", err)
		return exitUsage
	}
	if *storeURL == "" {
		fmt.Fprintln(c.stderr, "refine serve: --store is required (file:ROOT, a folder path, sqlite:PATH or postgres://…)")
		return exitUsage
	}
	if *token == "" && c.getenv != nil {
		*token = c.getenv(serveTokenEnv)
	}
	if f.llm == "" && f.replayDir != "" {
		f.llm = "replay"
	}
	loop, err := isLoopback(*addr)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine serve: --addr %s: %v\n", *addr, err)
		return exitUsage
	}
	if !loop && *token == "" {
		fmt.Fprintf(c.stderr, "refine serve: --addr %s is reachable from other machines: give --token (or %s), or listen on 127.0.0.1\n", *addr, serveTokenEnv)
		return exitUsage
	}
	if f.hasBackend() {
		// Check the backend flags once, before serving.
		if _, _, err := c.roles(&f, 0); err != nil {
			fmt.Fprintf(c.stderr, "refine serve: %v\n", err)
			return exitUsage
		}
	}
	// The console reads the store's sessions: a missing store is refused,
	// not created empty (#40).
	u, err := parseStoreURL(*storeURL)
	var backend store.Backend
	if err == nil {
		backend, err = c.openExistingBackend(ctx, u)
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "refine serve: %v\n", safeErr(err))
		return exitUsage
	}
	defer backend.Close()
	// One exporter for every session the console drives.
	shared, err := newTelemetry(ctx, f.otlpEndpoint, f.otlpContent, nil)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine serve: %v\n", err)
		return exitUsage
	}
	defer c.closeTelemetry(ctx, &sessionFlags{telemetry: shared})

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine serve: %v\n", err)
		return exitUsage
	}
	defer ln.Close()
	// The console answers only requests naming it (DNS rebinding).
	cfg := web.Config{Backend: backend, Token: *token, Logger: c.storeLogger(), Addr: ln.Addr().String(), AllowedHosts: allowedHosts,
		ResumeCommand: serveResumeCommand(u)}
	if f.hasBackend() {
		f.quiet = true // progress shows in the console
		cfg.Configure = func(ctx context.Context, id string, st refine.Store) (refine.Config, error) {
			// Sessions start concurrently: each gets its own copy of the
			// flags, and the shared exporter instruments it.
			fc := f
			fc.otlpEndpoint = ""
			sc, code := c.sessionConfig(ctx, &fc, st)
			if code != exitOK {
				return sc, fmt.Errorf("session %s: the backend flags were refused (see the server's log)", id)
			}
			if shared != nil {
				t := *shared
				ep, em := f.roleTelemetry(refine.Engineer)
				rp, rm := f.roleTelemetry(refine.Reviewer)
				if err := t.instrument(&sc, ep, em, rp, rm); err != nil {
					return sc, fmt.Errorf("session %s: telemetry: %w", id, err)
				}
			}
			return sc, nil
		}
	}
	console, err := web.New(cfg)
	if err != nil {
		fmt.Fprintf(c.stderr, "refine serve: %v\n", err)
		return exitUsage
	}
	srv := &http.Server{Handler: console, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 2 * time.Minute, IdleTimeout: 2 * time.Minute}
	mode := "showing sessions only (give --llm to answer and resume them)"
	if f.hasBackend() {
		mode = "driving sessions with " + f.describeBackend()
	}
	fmt.Fprintf(c.stdout, "refine serve: console at http://%s/ over %s, %s. Ctrl-C stops it.\n", ln.Addr(), *storeURL, mode)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err = <-errc:
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		err = srv.Shutdown(sctx)
		cancel()
	}
	console.Close() // running sessions commit and stay resumable
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(c.stderr, "refine serve: %v\n", err)
		return exitFailed
	}
	return exitOK
}

// isLoopback reports whether addr (host:port) listens on loopback only.
// An empty host listens on every interface.
func isLoopback(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, err
	}
	if strings.EqualFold(host, "localhost") {
		return true, nil
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback(), nil
}

// serveBackend opens the sessions refine mcp's --store names: a folder of
// session folders (created when missing: its default is a folder under the
// state directory nobody made yet), SQLite or PostgreSQL.
func (c *cli) serveBackend(ctx context.Context, raw string) (store.Backend, error) {
	u, err := parseStoreURL(raw)
	if err != nil {
		return nil, err
	}
	if u.Kind == "file" {
		if err := os.MkdirAll(u.Target, 0o700); err != nil {
			return nil, fmt.Errorf("--store %s: %w", raw, err)
		}
	}
	return c.openBackend(ctx, u)
}

// serveResumeCommand is the command a watch-only console shows for
// answering a session's question: resume, naming the session in the
// console's store exactly as the store was given (#40).
func serveResumeCommand(u storeURL) func(id string) string {
	return func(id string) string { return "refine resume " + sessionLoc{store: u.Shown, id: id}.flags() }
}
