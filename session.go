package refine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync/atomic"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/core"
)

// Session is a refinement session bound to a Store. It implements Mediator.
// Its methods are safe to call from several goroutines. Run, Step, Answer,
// Rollback and the other methods that change the session run one at a
// time; Status never waits for them: it reads the snapshot published at the
// last durable point.
//
// All of a session's state changes happen on the goroutine running the
// method: the drivers make parallel drafting's role calls on goroutines
// that only call the Engineer and hand the results back.
type Session struct {
	// Engine decides (internal/core): the state, the Ready being decided
	// and everything the decisions need. The Session is the shell around
	// it: it takes the turn, reads and commits the Store, makes the role
	// calls, asks the Asker (drive.go) and publishes what Status reports.
	*core.Engine
	// tel is the session's telemetry: the decisions report through it
	// (as the Engine's Telemetry), the driver opens and closes the run's scope with it.
	tel *telemetry
	// clock is the host's Clock (or the system's): the driver sleeps on
	// it between transport retries, the decisions read its time.
	clock Clock
	// config is the host's Config as given (with its defaults filled in):
	// the Store, the roles and the Asker the driver uses.
	config Config
	// turn serialises the methods that change the session; unlike a
	// mutex, waiting for it honours the caller's context.
	turn chan struct{}
	// unpersisted counts the commits of the last Ready.Persist until
	// Advance says they are in the Store.
	unpersisted int
	// published is the state as of the last durable point, as stored;
	// Status reads it without taking a turn.
	published atomic.Pointer[Status]
	// status holds what publishing reuses between durable points.
	status statusCache
	// unrecorded are the IDs of the Store's repairs the state took in,
	// which the Store is told are recorded after the next commit
	// (repairs.go).
	unrecorded []string
}

// statusCache is what building a Status reuses from the last one: the
// validation records of ended rounds and the decoded settings, which
// change rarely (decoding them at every durable point was a twentieth
// of a short session's time).
type statusCache struct {
	validation   core.ValidationCache
	settingsRaw  []byte
	settings     Settings
	settingsRead bool
}

// settingsOf returns the settings stored in raw (validated when stored),
// decoding them only when they changed since the last call.
func (c *statusCache) settingsOf(raw []byte) Settings {
	if c != nil && c.settingsRead && bytes.Equal(raw, c.settingsRaw) {
		return c.settings
	}
	set := DefaultConfig().Settings
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &set) // validated when stored
	}
	if c != nil {
		c.settingsRaw = append(c.settingsRaw[:0], raw...)
		c.settings, c.settingsRead = set, true
	}
	return set
}

// lock takes the session's turn, or returns ctx's error if ctx ends
// first, or ErrNotPersisted while what Next decided waits to be persisted.
func (s *Session) lock(ctx context.Context) error {
	select {
	case s.turn <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("waiting for the session: %w", ctx.Err())
	}
	if s.unpersisted > 0 {
		s.unlock()
		return fmt.Errorf("%w: commit the last Ready.Persist to the Store, then call Advance", ErrNotPersisted)
	}
	return nil
}

func (s *Session) unlock() { <-s.turn }

// publish makes the state as just committed or loaded what Status
// reports. It is called at a durable point, where s.st is that state; the
// Status is built now, as a copy, so Status neither waits for the turn
// nor parses the stored state.
func (s *Session) publish() {
	st := statusOf(s.St, &s.status).Clone()
	s.published.Store(&st)
}

var _ Mediator = (*Session)(nil)

func prepare(cfg Config) (*Session, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Session{config: cfg, Engine: &core.Engine{Cfg: cfg.params(), Tok: cfg.Tokenizer, Log: cfg.Logger, Ext: core.NewExternalCalls(), J: core.NewJournal(cfg.Store)}, turn: make(chan struct{}, 1)}
	if s.clock = cfg.Clock; s.clock == nil {
		s.clock = SystemClock{}
	}
	s.Engine.Clock = s.clock
	if s.Tok == nil {
		s.Tok = CharTokenizer{}
	}
	if s.Log == nil {
		s.Log = slog.New(slog.DiscardHandler)
	}
	if s.config.IDs == nil {
		s.config.IDs = randomIDs{clock: s.clock}
	}
	s.tel = &telemetry{observer: cfg.Observer, clock: s.clock, state: func() *core.State { return s.St }}
	s.Engine.Tel = s.tel
	seed := cfg.JitterSeed
	if seed == 0 {
		seed = uint64(s.clock.Now().UnixNano())
	}
	s.Rnd = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	return s, nil
}

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
	if _, err := cfg.Store.Get(ctx, core.KeyState); err == nil {
		return nil, fmt.Errorf("new session: %w: the store already has state.json; use Open to resume it", ErrSessionExists)
	} else if !errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("new session: read state.json: %w", err)
	}
	now := s.clock.Now().UTC()
	id, ok := core.StoreSessionID(s.config.Store)
	if !ok {
		id = s.config.IDs.NewID()
	}
	st := &core.State{Schema: core.SchemaVersion, SessionID: id, CreatedAt: now, UpdatedAt: now}
	initial := make([]gap.Gap, len(cfg.Gaps))
	for i, g := range cfg.Gaps {
		g.State, g.History, g.Round = gap.Open, nil, 0
		initial[i] = g
	}
	if err := st.Ledger.AddAll(initial); err != nil {
		return nil, fmt.Errorf("new session: %w", err)
	}
	st.PrevLedger = core.SnapshotLedger(&st.Ledger)
	s.St = st
	if err := s.St.StoreSettings(s.Cfg.Settings); err != nil {
		return nil, fmt.Errorf("new session: %w", err)
	}
	if err := s.apply(ctx, func() error { return s.Checkpoint(Put(core.KeySpec, []byte(cfg.Spec))) }); err != nil {
		return nil, fmt.Errorf("new session: %w", err)
	}
	s.Log.Info("session created", "session", st.SessionID, "gaps", len(cfg.Gaps))
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

func (s *Session) reload(ctx context.Context) error {
	ls, err := loadState(ctx, s.config.Store)
	if err != nil {
		return err
	}
	s.St, s.J, s.Stale = ls.st, ls.j, false
	s.Pending, s.Dirty, s.LastRendered = nil, false, nil
	set, err := core.RestoredSettings(s.Cfg, s.St)
	if err != nil {
		return err
	}
	s.Cfg.Settings = set
	s.noteRepairs()
	s.publish()
	return nil
}

func (s *Session) begin(ctx context.Context) error {
	if s.Stale || s.St == nil {
		return s.reload(ctx)
	}
	return nil
}

// Answer records a for the pending question questionID. It fails with
// ErrUnknownQuestion if no such question is pending and ErrInvalidAnswer if
// a picks an option that was not offered.
func (s *Session) Answer(ctx context.Context, questionID string, a Answer) error {
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.unlock()
	if err := s.begin(ctx); err != nil {
		return err
	}
	i := slices.IndexFunc(s.St.Pending, func(q Question) bool { return q.ID == questionID })
	if i < 0 {
		ids := make([]string, len(s.St.Pending))
		for k, q := range s.St.Pending {
			ids[k] = q.ID
		}
		return fmt.Errorf("answer %q: %w (pending: %v)", questionID, ErrUnknownQuestion, ids)
	}
	if err := s.St.AcceptAnswer(s.St.Pending[i], a); err != nil {
		return fmt.Errorf("answer %q: %w", questionID, err)
	}
	return s.apply(ctx, func() error { return s.Checkpoint() })
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
	return withStoreRepairs(statusOf(ls.st, nil), st), nil
}

// cloneOrNil copies xs, or returns nil if it is empty: an empty list in
// the session's memory and a missing one in its stored state are the same
// Status.
func cloneOrNil[T any](xs []T) []T {
	if len(xs) == 0 {
		return nil
	}
	return slices.Clone(xs)
}

func statusOf(s *core.State, c *statusCache) Status {
	st := Status{
		SessionID: s.SessionID,
		Round:     s.Round,
		Reason:    s.OutcomeReason,
		Usage:     s.Usage.Total,
		Calls:     s.Usage.Calls,
		Responses: map[RoleName]int{},
		UpdatedAt: s.UpdatedAt,
	}
	st.Pending = cloneOrNil(s.Pending)
	for r, n := range s.Usage.Responses {
		st.Responses[RoleName(r)] = n
	}
	st.Settings = c.settingsOf(s.Settings)
	st.FinalSpec, st.FinalSpecReason = core.FinalSpecStatus(s) // integrate.go
	st.Outcome = s.Outcome
	switch {
	case len(s.Pending) > 0 && !s.Outcome.Terminal():
		// A finished session keeps its outcome while a question waits
		// (the integration's, a rollback's dialog, the archive cleanup).
		st.Outcome = StatusPaused
	case st.Outcome == "":
		st.Outcome = StatusRunning
	}
	if s.Current != nil {
		st.Phase = s.Current.Phase
	}
	for _, g := range s.Ledger.Gaps {
		st.Gaps = append(st.Gaps, GapStatus{ID: g.ID, Title: g.Title, Severity: g.Severity, State: g.State, History: slices.Clone(g.History)})
	}
	for _, d := range s.Decisions {
		st.Decisions = append(st.Decisions, DecisionStatus{ID: d.ID, Issue: d.Issue, Option: d.Option, Decision: d.Decision})
	}
	for _, d := range s.ConflictDecisions {
		st.Decisions = append(st.Decisions, DecisionStatus{ID: d.ID, Issue: d.IssueID, Option: d.ChosenOption, Decision: d.Decision})
	}
	slices.SortStableFunc(st.Decisions, func(a, b DecisionStatus) int { return core.CompareDecisionIDs(a.ID, b.ID) })
	if c != nil {
		st.Validation = c.validation.Records(s)
	} else {
		st.Validation = core.ValidationRecords(s.ValidationRows(0, 0))
	}
	st.Normalized = s.NormalizedCounts()
	st.Conflicts = cloneOrNil(s.Conflicts)
	st.Rollbacks = cloneOrNil(s.Rollbacks.Records)
	st.Repairs = cloneOrNil(s.Repairs)
	if s.Tracker != nil {
		st.Convergence = s.Tracker.Rows()
		st.ConvergenceState = string(s.Tracker.Current())
	}
	return st
}
