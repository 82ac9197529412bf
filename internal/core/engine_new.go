package core

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/refine-spec/refine/exemplar"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/internal/core/statedoc"
	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/store"
)

// Options are what the decisions of a session are made with besides its
// state: the host's parameters, what the session's Store accepts, the
// tokenizer that estimates usage and the logger.
type Options struct {
	Params Params
	Caps   StoreCaps
	Tok    exemplar.Tokenizer
	Log    *slog.Logger
	// SelfCheck makes the decisions check their caches and kept writes
	// against whole recomputations (test binaries turn it on).
	SelfCheck bool
	// Repairs are the repairs the session's Store made when it opened
	// (store.Repairer), for Load to record in the state.
	Repairs []store.Repair
}

func newEngine(o Options) *Engine {
	if o.Tok == nil {
		o.Tok = exemplar.CharTokenizer{}
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	s := &Engine{cfg: o.Params, caps: o.Caps, tok: o.Tok, log: o.Log, ext: NewExternalCalls(), checks: o.SelfCheck}
	s.status.validation.Check = o.SelfCheck
	return s
}

// Create starts a new session, id, refining spec's gaps at time at: the
// decisions, and the Ready of its first commit (spec.md, the state, the
// renderings) for the driver to persist and Advance. With no gaps, or
// with Params.Discover, the session starts with discovery.
func Create(o Options, v View, id, spec string, gaps []gap.Gap, at time.Time) (*Engine, Ready, error) {
	at = at.UTC()
	st := &state.State{Schema: state.SchemaVersion, SessionID: id, CreatedAt: at, UpdatedAt: at}
	initial := make([]gap.Gap, len(gaps))
	for i, g := range gaps {
		g.State, g.History, g.Round = gap.Open, nil, 0
		initial[i] = g
	}
	if err := st.Ledger.AddAll(initial); err != nil {
		return nil, Ready{}, fmt.Errorf("new session: %w", err)
	}
	st.PrevLedger = SnapshotLedger(&st.Ledger)
	if err := storeSettings(st, o.Params.Settings); err != nil {
		return nil, Ready{}, fmt.Errorf("new session: %w", err)
	}
	s := newEngine(o)
	s.st, s.journal = st, statedoc.NewJournal(o.Caps.Appends)
	s.journal.Hist.Check = o.SelfCheck
	s.now = at
	if len(gaps) == 0 || o.Params.Discover {
		// The session starts with discovery (discover.go): a spec above
		// the discovery prompt's cap is refused before anything is stored.
		st.Discovery = newDiscovery(initial, o.Params.MaxGaps, o.Params.MaxRetries)
		// The roles' calls are numbered from 1 after it: the discovery
		// calls are numbered apart (a recording's discovery-NNN.md).
		st.Usage.NextCall = map[string]int{string(llm.Engineer): 0, string(llm.Reviewer): 0}
		msgs, _ := discoveryMessages(s.discoveryInput(spec))
		if err := checkDiscoveryCap(s.tok, msgs, s.discoveryCap()); err != nil {
			return nil, Ready{}, fmt.Errorf("new session: %w: %w", ErrInvalidConfig, err)
		}
	}
	s.out = newReadyWrites(s.caps, s.checks)
	s.out.Base = v
	err := s.checkpoint(store.Put(state.KeySpec, []byte(spec)))
	r, rerr := s.ready(err)
	if rerr != nil {
		return nil, Ready{}, fmt.Errorf("new session: %w", rerr)
	}
	s.log.Info("session created", "session", id, "gaps", len(gaps))
	return s, r, nil
}

// Load takes up a session as stored: st and j as the journal's reader
// rebuilt them. The settings are the session's own (Params' when it
// stored none).
func Load(o Options, st *state.State, j statedoc.StateJournal) (*Engine, error) {
	set, err := RestoredSettings(o.Params, st)
	if err != nil {
		return nil, err
	}
	o.Params.Settings = set
	s := newEngine(o)
	j.Hist.Check = o.SelfCheck
	s.st, s.journal = st, j
	if st.NoteRepairs(o.Repairs) {
		s.dirty = true // recorded at the next durable point
	}
	return s, nil
}

// Settings are the session's settings as they stand.
func (s *Engine) Settings() Settings { return s.cfg.Settings }

// RunLink is the link stored for the session's last run (see Run.Link).
func (s *Engine) RunLink() string { return s.st.RunLink }

// StateDoc is the session's whole state as a state.json snapshot would
// hold it, encoded with a cache of its own (the journal's is untouched).
func (s *Engine) StateDoc() ([]byte, error) {
	v, err := statedoc.EncodeState(s.st, &statedoc.HistoryCache{})
	return v.Bytes(), err
}
