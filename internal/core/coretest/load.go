package coretest

import (
	"context"
	"fmt"
	"slices"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/internal/core"
	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/internal/core/statedoc"
	"github.com/refine-spec/refine/store"
)

// capsOf returns the capabilities of st the decisions' writes may use,
// as the root's driver reads them.
func capsOf(st store.Store) core.StoreCaps {
	a, appends := st.(store.Appender)
	c, copies := st.(store.Copier)
	return core.StoreCaps{Appends: appends && a.Appends(), Copies: copies && c.Copies()}
}

// view is a Store as the decisions read it: Get and List without a
// context (the harness has none to end).
type view struct{ st store.Store }

func (v view) Get(key string) ([]byte, error) { return v.st.Get(context.Background(), key) }

func (v view) List(prefix string) ([]string, error) {
	return v.st.List(context.Background(), prefix)
}

// load takes the session in st up as a new process does: the newest
// complete snapshot, the journal records after it replayed, and core.Load
// over the state they rebuild. It is the root's loadState without what
// only a reader beside a live writer needs (reading again when a newer
// snapshot appears meanwhile).
func load(o core.Options, st store.Store) (*core.Engine, error) {
	v := view{st}
	bases, err := statedoc.SnapshotBases(v)
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(bases, func(b *statedoc.SnapshotBase) bool { return b.Key == state.KeyState }) {
		return nil, fmt.Errorf("load: %w: the store has no state.json", core.ErrNoSession)
	}
	base, err := statedoc.NewestComplete(v, bases, -1)
	if err != nil {
		return nil, err
	}
	doc, since, last, err := statedoc.Replay(v, base.Plain, -1)
	if err != nil {
		return nil, err
	}
	sd, err := state.ParseState(doc)
	if err != nil {
		return nil, err
	}
	j := statedoc.StateJournal{Seq: last, Since: since, SnapSeq: base.Seq, SnapSize: len(base.Doc), SnapKey: base.Key,
		LegacyState: sd.Schema < 2, Appends: o.Caps.Appends}
	if sd.Schema < state.SchemaVersion {
		sd.Schema, j.SnapshotNext = state.SchemaVersion, true
	}
	ver, err := statedoc.EncodeState(sd, &j.Hist)
	if err != nil {
		return nil, err
	}
	j.Ver, j.Has = ver, true
	return core.Load(o, sd, j)
}

// StateDoc returns the state of the session in st, as a state.json
// snapshot would hold it: for a test that builds a stored session the
// decisions cannot reach through their inputs (one saved by an older
// refine, say).
func StateDoc(st store.Store) ([]byte, error) {
	set := refine.DefaultConfig().Settings
	eng, err := load(core.Options{Params: core.Params{Settings: set, Defaults: set}, Caps: capsOf(st)}, st)
	if err != nil {
		return nil, err
	}
	return eng.StateDoc()
}
