package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/store"
)

// DefaultMaxBodyBytes is the largest request body the console reads when
// Config.MaxBodyBytes is zero: answers and rollback reasons are short.
const DefaultMaxBodyBytes = 64 << 10

// ConfigureFunc builds the Config that opens session id, whose Store (locked
// for writing) is st: the roles, and settings the session does not keep
// itself. The console then sets Store to st, Asker to one that defers every
// question, and adds its own progress Observer after cfg.Observer.
type ConfigureFunc func(ctx context.Context, id string, st refine.Store) (refine.Config, error)

// Config configures a Server.
type Config struct {
	// Backend holds the sessions. Required.
	Backend store.Backend
	// Configure lets the console drive sessions (answer, resume, roll
	// back). Nil makes the console read-only: those requests fail with 503.
	Configure ConfigureFunc
	// Token, when set, is required: as "Authorization: Bearer TOKEN" by the
	// API, through the login form's cookie by the pages.
	Token string
	// MaxBodyBytes caps request bodies; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Logger receives request errors and background run results; nil
	// discards them.
	Logger *slog.Logger
	// Addr is the address the console listens on (host:port, the
	// listener's): requests must name it, or localhost, 127.0.0.1 or [::1]
	// with its port, in their Host header (hosts.go). Empty: the loopback
	// names with any port.
	Addr string
	// AllowedHosts are further names requests may carry in Host, each
	// NAME (any port) or NAME:PORT: a reverse proxy's public name.
	AllowedHosts []string
	// ResumeCommand names the command line that resumes session id
	// outside the console ("refine resume --store file:ROOT --session
	// ID"): a console without Configure shows it, with each option's
	// --answer, under a pending question. Nil: "refine resume --store
	// URL --session ID".
	ResumeCommand func(id string) string
}

// Validate reports a Config that cannot work.
func (c *Config) Validate() error {
	if c.Backend == nil {
		return errors.New("web: Config.Backend is required")
	}
	if c.MaxBodyBytes < 0 {
		return fmt.Errorf("web: Config.MaxBodyBytes %d is negative", c.MaxBodyBytes)
	}
	_, err := newHostPolicy(c.Addr, c.AllowedHosts)
	return err
}

// Server is the console. It is an http.Handler; Close stops the sessions it
// is running (they stay resumable) and waits for them.
type Server struct {
	cfg     Config
	log     *slog.Logger
	handler http.Handler
	pages   *pages
	hosts   *hostPolicy

	ctx    context.Context // parent of background runs; cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	runners map[string]*runner
	closed  bool
}

// New returns a console over cfg.Backend.
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	s := &Server{cfg: cfg, log: cfg.Logger, runners: map[string]*runner{}}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	p, err := parsePages()
	if err != nil {
		return nil, err
	}
	s.pages = p
	if s.hosts, err = newHostPolicy(cfg.Addr, cfg.AllowedHosts); err != nil {
		return nil, err
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.handler = s.routes()
	return s, nil
}

// ServeHTTP serves the console.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Close cancels the sessions the console is running and waits until each
// has committed its state. It does not close the Backend.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
	return nil
}

// Wait blocks until no session is running in the background or ctx ends:
// for tests and for a host that wants to exit after the work is done.
func (s *Server) Wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	// Pages.
	mux.HandleFunc("GET /{$}", s.authPage(s.handleList))
	mux.HandleFunc("GET /sessions/{id}", s.authPage(s.withID(s.handleSession)))
	mux.HandleFunc("GET /sessions/{id}/convergence.svg", s.authPage(s.withID(s.handleChart)))
	mux.HandleFunc("GET /sessions/{id}/rounds/{n}", s.authPage(s.withID(s.handleRound)))
	mux.HandleFunc("GET /sessions/{id}/files/{name}", s.authPage(s.withID(s.handleFile)))
	mux.HandleFunc("GET /sessions/{id}/final", s.authPage(s.withID(s.handleFinalDiff)))
	mux.HandleFunc("POST /sessions/{id}/answers", s.authPage(s.withID(s.handleAnswerForm)))
	mux.HandleFunc("POST /sessions/{id}/rollback", s.authPage(s.withID(s.handleRollbackForm)))
	mux.HandleFunc("POST /sessions/{id}/resume", s.authPage(s.withID(s.handleResumeForm)))
	mux.HandleFunc("GET /login", s.handleLoginPage)
	mux.HandleFunc("POST /login", s.handleLogin)
	mux.HandleFunc("POST /logout", s.handleLogout)
	mux.Handle("GET /static/", staticHandler())
	// JSON API.
	mux.HandleFunc("GET /api/sessions", s.authAPI(s.apiList))
	mux.HandleFunc("GET /api/sessions/{id}", s.authAPI(s.withID(s.apiStatus)))
	mux.HandleFunc("GET /api/sessions/{id}/live", s.authAPI(s.withID(s.apiLive)))
	mux.HandleFunc("POST /api/sessions/{id}/answers", s.authAPI(s.withID(s.apiAnswer)))
	mux.HandleFunc("POST /api/sessions/{id}/rollback", s.authAPI(s.withID(s.apiRollback)))
	mux.HandleFunc("POST /api/sessions/{id}/resume", s.authAPI(s.withID(s.apiResume)))

	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "cross-origin request refused: post from the console's own pages", http.StatusForbidden)
	}))
	return s.secure(s.checkHost(cop.Handler(mux)))
}
