package refine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/internal/core/statedoc"
)

// Reading a stored session: its snapshots, and the journal records
// replayed onto the newest complete one (see persist.go).

// loadedState is a session's state as read from its Store.
type loadedState struct {
	st *state.State
	j  statedoc.StateJournal
	// raw is the state document as rebuilt (for Status).
	raw []byte
}

// loadState reads the snapshot and applies the journal records after it.
// A state.json written by an older refine (schema 1) has no journal.
func loadState(ctx context.Context, store Store) (loadedState, error) {
	var base *statedoc.SnapshotBase
	var doc []byte
	var since int
	var last int64
	var err error
	// A reader beside a live writer (a console, `refine status`) can pick
	// a snapshot just before the writer completes a newer one and drops
	// the records it holds: it then finds a record missing. When the
	// newest snapshot changed meanwhile, that is the reason: read again.
	for try := 1; ; try++ {
		if base, err = newestSnapshot(ctx, store); err != nil {
			return loadedState{}, err
		}
		doc, since, last, err = statedoc.Replay(bind(ctx, store), base.Plain, -1)
		if err == nil || !errors.Is(err, ErrCorrupt) || try == 3 {
			break
		}
		if now, gerr := newestSnapshot(ctx, store); gerr != nil || now.Key == base.Key && bytes.Equal(now.Doc, base.Doc) {
			break // not a concurrent snapshot: the journal is damaged
		}
	}
	if err != nil {
		return loadedState{}, passedOver(ctx, store, base, err)
	}
	st, err := state.ParseState(doc)
	if err != nil {
		return loadedState{}, err
	}
	j := statedoc.StateJournal{Seq: last, Since: since, SnapSeq: base.Seq, SnapSize: len(base.Doc), SnapKey: base.Key, LegacyState: st.Schema < 2, Appends: appends(store)}
	if st.Schema < state.SchemaVersion {
		st.Schema = state.SchemaVersion
		j.SnapshotNext = true // rewrite it in this refine's format at the next commit
	}
	ver, err := statedoc.EncodeState(st, &j.Hist)
	if err != nil {
		return loadedState{}, err
	}
	canonical := ver.Bytes()
	j.Ver, j.Has = ver, true
	return loadedState{st: st, j: j, raw: canonical}, nil
}

// passedOver adds to a failed replay from base the snapshots newer than
// base that were passed over as incomplete: a damaged one looks so when
// the damage is to its size (checksum.go), and the records it held are
// then missing.
func passedOver(ctx context.Context, store Store, base *statedoc.SnapshotBase, err error) error {
	if base == nil || !errors.Is(err, ErrCorrupt) {
		return err
	}
	bases, lerr := statedoc.SnapshotBases(bind(ctx, store))
	if lerr != nil {
		return err
	}
	var newer []string
	for _, b := range bases {
		if b.Seq > base.Seq && b.Key != state.KeyState {
			newer = append(newer, b.Key)
		}
	}
	if len(newer) == 0 {
		return err
	}
	return fmt.Errorf("%w (starting from %s: the newer %s is incomplete or damaged)", err, base.Key, strings.Join(newer, ", "))
}

// newestSnapshot returns the newest complete snapshot in store, read.
func newestSnapshot(ctx context.Context, store Store) (*statedoc.SnapshotBase, error) {
	bases, err := statedoc.SnapshotBases(bind(ctx, store))
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(bases, func(b *statedoc.SnapshotBase) bool { return b.Key == state.KeyState }) {
		return nil, fmt.Errorf("%w: the store has no state.json; start a session with `refine run` (or refine.New)", ErrNoSession)
	}
	return statedoc.NewestComplete(bind(ctx, store), bases, -1) // state.json at least
}
