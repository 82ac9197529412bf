package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/store"
)

// RoleMode says who plays the Engineer and Reviewer of the sessions the
// server runs.
type RoleMode string

// The role modes.
const (
	// RolesAuto uses the client's model through sampling when the client
	// declares the sampling capability, else the roles Config.Configure
	// builds (an error when it builds none).
	RolesAuto RoleMode = ""
	// RolesSampling always uses the client's model; a client without the
	// sampling capability gets a tool error saying so.
	RolesSampling RoleMode = "sampling"
	// RolesServer always uses the roles Config.Configure builds (an
	// OpenAI-compatible or Ollama backend, a replay folder).
	RolesServer RoleMode = "server"
)

// SamplingKind is the backend kind a session records when its roles are
// the client's model: resuming it outside an MCP client names another
// backend (refine resume --llm …).
const SamplingKind = "sampling"

// ConfigureFunc builds the Config that opens or starts session id, whose
// Store (locked for writing) is st: server-side roles, a logger, an
// observer, settings the session does not keep. The server then sets Store
// to st, its own Asker, and (for sampling) its own roles, and chains its
// progress observer after cfg.Observer.
type ConfigureFunc func(ctx context.Context, id string, st refine.Store) (refine.Config, error)

// Defaults of the Config fields left zero.
const (
	DefaultCallBudget    = 2 * time.Minute
	DefaultIdleTimeout   = 10 * time.Minute
	DefaultMaxRoundTrips = 8
	// DefaultMaxTokens is the sampling maxTokens when the session's
	// Settings.MaxTokens is 0 (MCP requires a value).
	DefaultMaxTokens = 8192
)

// Config configures a Server.
type Config struct {
	// Backend holds the sessions. Required.
	Backend store.Backend
	// Configure builds each session's base Config. Nil: DefaultConfig and
	// no server-side roles, so sessions need a client that samples.
	Configure ConfigureFunc
	// Roles says who plays the roles (RolesAuto by default).
	Roles RoleMode
	// EngineerHint and ReviewerHint are model names sent as sampling model
	// preference hints ("claude-sonnet", "gpt-4o"); the client may ignore
	// them. They are recorded as the session's model names.
	EngineerHint, ReviewerHint string
	// CallBudget bounds how long one tool call drives a session before it
	// returns with the session still running (refine_continue goes on).
	CallBudget time.Duration
	// MaxRoundTrips bounds the input-request round trips of one tool call
	// on protocol 2026-07-28, below the client SDK's own retry limit.
	MaxRoundTrips int
	// IdleTimeout stops a running session no tool call has driven for
	// this long (it commits and stays resumable).
	IdleTimeout time.Duration
	// AllowPaths lets refine_start read spec_path and gaps_path from the
	// server's file system: right for stdio, where the client is the
	// user's own agent; off for HTTP.
	AllowPaths bool
	// Logger receives the server's errors; nil discards them.
	Logger *slog.Logger
	// Version is reported to clients as the server's version.
	Version string
}

// Server serves refine sessions over MCP. Create it with New; MCP returns
// the protocol server to run on a transport.
type Server struct {
	cfg    Config
	log    *slog.Logger
	sdkLog *slog.Logger // log, with undeliverable notifications at Debug (quietHandler)
	mcp    *mcp.Server

	ctx    context.Context // parent of every run; cancelled by Close
	cancel context.CancelFunc

	mu        sync.Mutex
	runners   map[string]*runner
	resources map[string]bool // URIs registered
	closed    bool
}

// New returns a Server over cfg.Backend with its tools and resources.
func New(cfg Config) (*Server, error) {
	if cfg.Backend == nil {
		return nil, errors.New("mcpserver: Config.Backend is required")
	}
	switch cfg.Roles {
	case RolesAuto, RolesSampling, RolesServer:
	default:
		return nil, fmt.Errorf("mcpserver: Config.Roles %q: want %q, %q or %q", cfg.Roles, RolesAuto, RolesSampling, RolesServer)
	}
	if cfg.Roles == RolesServer && cfg.Configure == nil {
		return nil, errors.New("mcpserver: Config.Roles is server but Config.Configure is nil: nothing builds the roles")
	}
	if cfg.CallBudget <= 0 {
		cfg.CallBudget = DefaultCallBudget
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.MaxRoundTrips <= 0 {
		cfg.MaxRoundTrips = DefaultMaxRoundTrips
	}
	s := &Server{cfg: cfg, log: cfg.Logger, runners: map[string]*runner{}, resources: map[string]bool{}}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.sdkLog = slog.New(quietHandler{s.log.Handler()})
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "refine", Title: "refine: spec refinement sessions", Version: cfg.Version},
		&mcp.ServerOptions{
			Instructions: instructions,
			Logger:       s.sdkLog,
			Capabilities: &mcp.ServerCapabilities{
				Tools:     &mcp.ToolCapabilities{ListChanged: true},
				Resources: &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
			},
			SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
			UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		})
	s.mcp.AddReceivingMiddleware(escapeToolText)
	s.addTools()
	s.addResourceTemplates()
	if err := s.registerExisting(s.ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// instructions tell the client's model how to use the server.
const instructions = `refine runs spec-refinement sessions: an Engineer proposes resolutions to a spec's open gaps, a Reviewer critiques them, round after round, until the gaps are resolved. Start one with refine_start; a session's work runs inside refine_start, refine_continue and refine_answer, each returning when the session pauses for a question, ends, or after a bounded time. While "running" is true, call refine_continue. A pending question comes back whole when it could not be asked through elicitation: answer it with refine_answer. Read a session's files as resources under refine://sessions/{id}/.`

// MCP returns the protocol server: run it with Run on a transport, or
// serve it over HTTP with mcp.NewStreamableHTTPHandler.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Close stops the sessions the server is running (each commits and stays
// resumable) and waits for them. It does not close the Backend.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	rs := make([]*runner, 0, len(s.runners))
	for _, r := range s.runners {
		rs = append(rs, r)
	}
	s.mu.Unlock()
	s.cancel()
	for _, r := range rs {
		<-r.done
	}
	return nil
}

// errClosed: the server is shutting down.
var errClosed = errors.New("the refine MCP server is shutting down")

// running returns the runner of session id, nil when it is not running.
func (s *Server) running(id string) *runner {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runners[id]
}

// runningSession returns session id's Session while it runs here.
func (s *Server) runningSession(id string) *refine.Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.runners[id]; r != nil {
		return r.sess
	}
	return nil
}

// stopRunning stops session id's run when it is going on, so that another
// operation can open the session.
func (s *Server) stopRunning(id string) {
	if r := s.running(id); r != nil {
		r.stop()
	}
}

// sessionConfig builds the Config of session id over st for a run driven
// through r (nil for a one-off operation, which asks nothing).
func (s *Server) sessionConfig(ctx context.Context, id string, st refine.Store, sampling bool, r *runner) (refine.Config, error) {
	cfg := refine.DefaultConfig()
	if s.cfg.Configure != nil {
		c, err := s.cfg.Configure(ctx, id, st)
		if err != nil {
			return cfg, err
		}
		cfg = c
	}
	cfg.Store = st
	cfg.Asker = refine.DeferAsker{}
	if sampling || cfg.Engineer == nil {
		// One-off operations need no roles; a run gets sampling roles.
		var ro refine.Role = refine.RoleFunc(func(context.Context, refine.Request) (refine.Response, error) {
			return refine.Response{}, errors.New("no role is available outside a run")
		})
		if r != nil {
			ro = role{r}
		}
		cfg.Engineer, cfg.Reviewer = ro, ro
	}
	if r != nil {
		cfg.Asker = asker{r}
		cfg.Observer = observer{r: r, next: cfg.Observer}
	}
	return cfg, nil
}

// samplingBackend is what a sampling session records as its backend.
func (s *Server) samplingBackend() refine.BackendInfo {
	return refine.BackendInfo{Kind: SamplingKind, EngineerModel: s.cfg.EngineerHint, ReviewerModel: s.cfg.ReviewerHint}
}

// useSampling decides whether a run driven by p plays the roles through
// sampling.
func (s *Server) useSampling(p peer) (bool, error) {
	switch s.cfg.Roles {
	case RolesSampling:
		if !p.sampling {
			return false, errors.New("this client does not offer sampling, and refine mcp runs its roles only through sampling: restart it with --llm openai|anthropic|ollama|replay (or --engineer and --reviewer PROVIDER:MODEL), or use a client that samples")
		}
		return true, nil
	case RolesServer:
		return false, nil
	}
	if p.sampling {
		return true, nil
	}
	if s.cfg.Configure == nil {
		return false, errors.New("this client does not offer sampling and refine mcp has no server-side backend: restart it with --llm openai|anthropic|ollama|replay (or --engineer and --reviewer PROVIDER:MODEL), or use a client that samples")
	}
	return false, nil
}

// newRunner registers a runner for id; it fails when one is registered.
func (s *Server) newRunner(id string) (*runner, context.Context, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil, errClosed
	}
	if r := s.runners[id]; r != nil {
		return nil, nil, fmt.Errorf("session %s is already running", id)
	}
	ctx, cancel := context.WithCancel(s.ctx)
	r := &runner{id: id, cancel: cancel, idle: s.cfg.IdleTimeout,
		needs: make(chan *need), events: make(chan refine.Event, 64), done: make(chan struct{})}
	s.runners[id] = r
	return r, ctx, nil
}

func (s *Server) dropRunner(id string, r *runner) {
	s.mu.Lock()
	if s.runners[id] == r {
		delete(s.runners, id)
	}
	s.mu.Unlock()
}

// launch starts r's session: sess is New's or Open's, over st.
func (s *Server) launch(ctx context.Context, r *runner, sess *refine.Session, st refine.Store) {
	s.mu.Lock()
	r.sess = sess // statusOf reads it under s.mu
	s.mu.Unlock()
	r.start(ctx, st, func() {
		s.dropRunner(r.id, r)
		s.touch(context.WithoutCancel(ctx), r.id, true)
	})
}

// resume opens session id and starts running it, driven by p. A session
// already running is returned as it is.
func (s *Server) resume(ctx context.Context, id string, p peer) (*runner, error) {
	if r := s.running(id); r != nil {
		return r, nil
	}
	st, err := s.cfg.Backend.Session(ctx, id)
	if err != nil {
		return nil, sessionErr(id, err)
	}
	sampling, err := s.sessionUsesSampling(ctx, st, p)
	if err != nil {
		closeStore(st)
		return nil, err
	}
	r, rctx, err := s.newRunner(id)
	if err != nil {
		closeStore(st)
		if r := s.running(id); r != nil {
			return r, nil
		}
		return nil, err
	}
	cfg, err := s.sessionConfig(ctx, id, st, sampling, r)
	var sess *refine.Session
	if err == nil {
		sess, err = refine.Open(ctx, cfg)
	}
	if err != nil {
		closeStore(st)
		s.dropRunner(id, r)
		r.cancel()
		close(r.done)
		return nil, sessionErr(id, err)
	}
	s.launch(rctx, r, sess, st)
	return r, nil
}

// sessionUsesSampling decides the roles of an existing session's run: a
// session started with sampling keeps sampling when the client offers it.
func (s *Server) sessionUsesSampling(ctx context.Context, st refine.Store, p peer) (bool, error) {
	if s.cfg.Roles == RolesAuto {
		if status, err := refine.Inspect(ctx, st); err == nil && status.Settings.Backend.Kind != SamplingKind && s.cfg.Configure != nil {
			return false, nil
		}
	}
	return s.useSampling(p)
}

// withSession opens session id for a one-off operation (approve, abandon,
// rollback, answer) after stopping its run, and closes it afterwards.
func (s *Server) withSession(ctx context.Context, id string, ask refine.Asker, fn func(*refine.Session) error) error {
	s.stopRunning(id)
	st, err := s.cfg.Backend.Session(ctx, id)
	if err != nil {
		return sessionErr(id, err)
	}
	defer closeStore(st)
	cfg, err := s.sessionConfig(ctx, id, st, true, nil)
	if err != nil {
		return err
	}
	if ask != nil {
		cfg.Asker = ask
	}
	sess, err := refine.Open(ctx, cfg)
	if err != nil {
		return sessionErr(id, err)
	}
	err = fn(sess)
	s.touch(ctx, id, true)
	return err
}

func closeStore(st refine.Store) {
	if c, ok := st.(io.Closer); ok {
		_ = c.Close()
	}
}

// sessionErr says what to do about a session that cannot be opened.
func sessionErr(id string, err error) error {
	switch {
	case errors.Is(err, refine.ErrNotFound), errors.Is(err, refine.ErrNoSession):
		return fmt.Errorf("session_id: no session %q in the store: list them with refine_sessions (%w)", id, err)
	case errors.Is(err, refine.ErrLocked):
		return fmt.Errorf("session %s is open in another process (refine resume, the web console): wait for it to pause, then try again (%w)", id, err)
	}
	return fmt.Errorf("session %s: %w", id, err)
}
