package refine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/refine-spec/refine/internal/core"
	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/internal/selfcheck"
	"github.com/refine-spec/refine/store"
)

// Session is a refinement session bound to a Store. It implements Mediator.
// Its methods are safe to call from several goroutines. Run, Step, Answer,
// Rollback and the other methods that change the session run one at a
// time; Status never waits for them: it reads the snapshot published at the
// last durable point.
//
// A Session is a driver around the session's decisions: it hands each
// input to them, commits the writes they decide, makes the role calls they
// ask for, asks its Asker their questions, and hands the results back
// (drive.go). The decisions take no context, read no clock and do no I/O.
type Session struct {
	// core decides: the state, and everything the decisions need. nil
	// until loaded, and again after a failed commit: the next call takes
	// the session up again from its Store.
	core *core.Engine
	// tel is the session's telemetry: it reports the decisions' events
	// to the Observer and keeps the SpanObserver scopes.
	tel *telemetry
	// clock is the host's Clock (or the system's): every input carries
	// its time, and the driver sleeps on it between transport retries.
	clock Clock
	// config is the host's Config as given (with its defaults filled in):
	// the Store, the roles and the Asker the driver uses.
	config Config
	// jitter draws the backoff jitter of transport retries.
	jitter *rand.Rand
	// turn serialises the methods that change the session; unlike a
	// mutex, waiting for it honours the caller's context.
	turn chan struct{}
	// commits counts the commits of the last Ready that Next handed out,
	// until Advance says they are in the Store.
	commits int
	// calls are the role calls the last Next asked for, and delivered the
	// results Deliver handed over for them, for the next Next.
	calls     []Request
	delivered []core.CallResult
	// published is the state as of the last durable point, as stored;
	// Status reads it without taking a turn.
	published atomic.Pointer[Status]
	// unrecorded are the IDs of the Store's repairs the state took in,
	// which the Store is told are recorded after the next commit
	// (repairs.go).
	unrecorded []string
}

// lock takes the session's turn, or returns ctx's error if ctx ends
// first.
func (s *Session) lock(ctx context.Context) error {
	select {
	case s.turn <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for the session: %w", ctx.Err())
	}
}

func (s *Session) unlock() { <-s.turn }

// publish makes the state as just committed or loaded what Status
// reports.
func (s *Session) publish() {
	st := s.core.Status()
	s.published.Store(&st)
}

var _ Mediator = (*Session)(nil)

func prepare(cfg Config) (*Session, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Session{config: cfg, turn: make(chan struct{}, 1)}
	if s.clock = cfg.Clock; s.clock == nil {
		s.clock = SystemClock{}
	}
	if s.config.Tokenizer == nil {
		s.config.Tokenizer = CharTokenizer{}
	}
	if s.config.Logger == nil {
		s.config.Logger = slog.New(slog.DiscardHandler)
	}
	if s.config.IDs == nil {
		s.config.IDs = randomIDs{clock: s.clock}
	}
	s.tel = &telemetry{observer: cfg.Observer, clock: s.clock, status: s.published.Load, attempts: map[core.CallID]context.Context{}}
	seed := cfg.JitterSeed
	if seed == 0 {
		seed = uint64(s.clock.Now().UnixNano())
	}
	s.jitter = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	return s, nil
}

// options are what the decisions are made with.
func (s *Session) options() core.Options {
	return core.Options{Params: s.config.params(), Caps: capsOf(s.config.Store), Tok: s.config.Tokenizer, Log: s.config.Logger, SelfCheck: selfcheck.Enabled()}
}

// capsOf returns the capabilities of st the decisions' writes may use.
func capsOf(st Store) core.StoreCaps { return core.StoreCaps{Appends: appends(st), Copies: copies(st)} }

// appends reports whether st accepts store.OpAppend.
func appends(st Store) bool {
	a, ok := st.(store.Appender)
	return ok && a.Appends()
}

// copies reports whether st accepts store.OpCopy.
func copies(st Store) bool {
	c, ok := st.(store.Copier)
	return ok && c.Copies()
}

// storeSessionID returns the session ID st knows, if any and valid.
func storeSessionID(st Store) (string, bool) {
	i, ok := st.(store.Identified)
	if !ok {
		return "", false
	}
	id := i.SessionID()
	return id, id != "" && store.ValidSessionID(id) == nil
}

// now is the time of an input.
func (s *Session) now() time.Time { return s.clock.Now() }

// New starts a session in cfg.Store from cfg.Spec and cfg.Gaps. It fails
// with ErrSessionExists if the Store already holds one (use Open).
func New(ctx context.Context, cfg Config) (*Session, error) {
	s, err := prepare(cfg)
	if err != nil {
		return nil, err
	}
	if err := cfg.validateNew(); err != nil {
		return nil, err
	}
	if _, err := cfg.Store.Get(ctx, state.KeyState); err == nil {
		return nil, fmt.Errorf("new session: %w: the store already has state.json; use Open to resume it", ErrSessionExists)
	} else if !errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("new session: read state.json: %w", err)
	}
	id, ok := storeSessionID(s.config.Store)
	if !ok {
		id = s.config.IDs.NewID()
	}
	c, r, err := core.Create(s.options(), bind(ctx, cfg.Store), id, cfg.Spec, cfg.Gaps, s.now())
	if err != nil {
		return nil, err
	}
	s.core = c
	if err := s.persist(ctx, r); err != nil {
		return nil, fmt.Errorf("new session: %w", err)
	}
	return s, nil
}

// Open resumes the session in cfg.Store. cfg.Spec and cfg.Gaps are ignored.
// A state.json written by a newer refine fails with ErrSchema and a
// corrupted one with ErrCorrupt; neither is modified.
func Open(ctx context.Context, cfg Config) (*Session, error) {
	s, err := prepare(cfg)
	if err != nil {
		return nil, err
	}
	if err := s.reload(ctx); err != nil {
		return nil, fmt.Errorf("open session: %w", err)
	}
	return s, nil
}

// reload takes the session up from its Store.
func (s *Session) reload(ctx context.Context) error {
	ls, err := loadState(ctx, s.config.Store)
	if err != nil {
		return err
	}
	o := s.options()
	o.Repairs = s.storeRepairs()
	c, err := core.Load(o, ls.st, ls.j)
	if err != nil {
		return err
	}
	s.core, s.calls, s.delivered = c, nil, nil
	s.publish()
	return nil
}

// begin makes sure the decisions are loaded.
func (s *Session) begin(ctx context.Context) error {
	if s.core == nil {
		return s.reload(ctx)
	}
	return nil
}

// Answer records a for the pending question questionID. It fails with
// ErrUnknownQuestion if no such question is pending and ErrInvalidAnswer if
// a picks an option that was not offered.
func (s *Session) Answer(ctx context.Context, questionID string, a Answer) error {
	_, err := s.input(ctx, core.Answered{At: s.now(), Question: questionID, Answer: a}, false)
	return err
}

// Status reports where the session stood at its last durable point. It
// never waits for a running Run: a host may poll it from another goroutine
// while a role call is in flight. It returns ctx's error if ctx is done.
func (s *Session) Status(ctx context.Context) (Status, error) {
	if err := ctx.Err(); err != nil {
		return Status{}, err
	}
	p := s.published.Load()
	if p == nil {
		return Status{}, fmt.Errorf("status: %w", ErrNoSession)
	}
	return p.Clone(), nil
}

// Inspect reads the status of the session in st without opening it: no
// lock, no roles, nothing written. Use it to show a session another process
// is running.
func Inspect(ctx context.Context, st Store) (Status, error) {
	ls, err := loadState(ctx, st)
	if err != nil {
		return Status{}, fmt.Errorf("inspect: %w", err)
	}
	return withStoreRepairs(core.StatusOf(ls.st, DefaultConfig().Settings), st), nil
}
