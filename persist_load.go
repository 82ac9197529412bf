package refine

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/refine-spec/refine/internal/journal"
)

// Reading a stored session: its snapshots, and the journal records
// replayed onto the newest complete one (see persist.go).

// snapshotBase is a snapshot a reader may start from.
type snapshotBase struct {
	key string
	seq int64
	// doc, when read, is its content; plain, once verified, is the state
	// document it holds (checksum.go).
	doc, plain []byte
}

// complete reads the snapshot and reports whether it is whole: a
// background snapshot is an incomplete JSON document until its last chunk.
func (b *snapshotBase) complete(store view) (bool, error) {
	if b.doc == nil {
		d, err := store.Get(b.key)
		if errors.Is(err, ErrNotFound) {
			return false, nil // dropped meanwhile by a writer
		}
		if err != nil {
			return false, fmt.Errorf("read %s: %w", b.key, err)
		}
		b.doc = d
	}
	if b.plain == nil {
		plain, ok, err := openDoc(b.key, b.doc)
		if err != nil || !ok {
			return false, err
		}
		b.plain = plain
	}
	return true, nil
}

// newestComplete returns the newest complete snapshot among bases at or
// before journal record upTo (-1: any), or nil.
func newestComplete(store view, bases []*snapshotBase, upTo int64) (*snapshotBase, error) {
	for _, b := range bases {
		if upTo >= 0 && b.seq > upTo {
			continue
		}
		ok, err := b.complete(store)
		if err != nil {
			return nil, err
		}
		if ok {
			return b, nil
		}
	}
	return nil, nil
}

// snapshotBases lists the snapshots in store, newest first: state.json
// (read, if there is one yet) and those under snapshots/, complete or not.
func snapshotBases(store view) ([]*snapshotBase, error) {
	keys, err := store.List(snapshotPrefix)
	if err != nil {
		return nil, fmt.Errorf("list snapshots: %w", err)
	}
	var out []*snapshotBase
	for _, k := range keys {
		if n, ok := seqOf(k, snapshotPrefix); ok {
			out = append(out, &snapshotBase{key: k, seq: n})
		}
	}
	b, err := store.Get(keyState)
	switch {
	case errors.Is(err, ErrNotFound):
		// A session's first commit writes it.
	case err != nil:
		return nil, fmt.Errorf("read state.json: %w", err)
	default:
		// A damaged state.json is refused here: passing over it would
		// start from an older snapshot and silently roll the session back.
		plain, _, err := openDoc(keyState, b)
		if err != nil {
			return nil, err
		}
		var head struct {
			JournalSeq int64 `json:"journal_seq"`
		}
		if err := json.Unmarshal(plain, &head); err != nil {
			return nil, fmt.Errorf("%w: state.json: %v (the file is left untouched)", ErrCorrupt, err)
		}
		out = append(out, &snapshotBase{key: keyState, seq: head.JournalSeq, doc: b, plain: plain})
	}
	slices.SortStableFunc(out, func(a, b *snapshotBase) int {
		if a.seq != b.seq {
			return cmp.Compare(b.seq, a.seq)
		}
		return strings.Compare(b.key, a.key) // state.json first among equals
	})
	return out, nil
}

// loadedState is a session's state as read from its Store.
type loadedState struct {
	st *state
	j  stateJournal
	// raw is the state document as rebuilt (for Status).
	raw []byte
}

// loadState reads the snapshot and applies the journal records after it.
// A state.json written by an older refine (schema 1) has no journal.
func loadState(ctx context.Context, store Store) (loadedState, error) {
	var base *snapshotBase
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
		doc, since, last, err = replay(bind(ctx, store), base.plain, -1)
		if err == nil || !errors.Is(err, ErrCorrupt) || try == 3 {
			break
		}
		if now, gerr := newestSnapshot(ctx, store); gerr != nil || now.key == base.key && bytes.Equal(now.doc, base.doc) {
			break // not a concurrent snapshot: the journal is damaged
		}
	}
	if err != nil {
		return loadedState{}, passedOver(ctx, store, base, err)
	}
	st, err := parseState(doc)
	if err != nil {
		return loadedState{}, err
	}
	j := stateJournal{seq: last, since: since, snapSeq: base.seq, snapSize: len(base.doc), snapKey: base.key, legacyState: st.Schema < 2, appends: appends(store)}
	if st.Schema < schemaVersion {
		st.Schema = schemaVersion
		j.snapshotNext = true // rewrite it in this refine's format at the next commit
	}
	ver, err := encodeState(st, &j.hist)
	if err != nil {
		return loadedState{}, err
	}
	canonical := ver.Bytes()
	j.ver, j.has = ver, true
	return loadedState{st: st, j: j, raw: canonical}, nil
}

// passedOver adds to a failed replay from base the snapshots newer than
// base that were passed over as incomplete: a damaged one looks so when
// the damage is to its size (checksum.go), and the records it held are
// then missing.
func passedOver(ctx context.Context, store Store, base *snapshotBase, err error) error {
	if base == nil || !errors.Is(err, ErrCorrupt) {
		return err
	}
	bases, lerr := snapshotBases(bind(ctx, store))
	if lerr != nil {
		return err
	}
	var newer []string
	for _, b := range bases {
		if b.seq > base.seq && b.key != keyState {
			newer = append(newer, b.key)
		}
	}
	if len(newer) == 0 {
		return err
	}
	return fmt.Errorf("%w (starting from %s: the newer %s is incomplete or damaged)", err, base.key, strings.Join(newer, ", "))
}

// newestSnapshot returns the newest complete snapshot in store, read.
func newestSnapshot(ctx context.Context, store Store) (*snapshotBase, error) {
	bases, err := snapshotBases(bind(ctx, store))
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(bases, func(b *snapshotBase) bool { return b.key == keyState }) {
		return nil, fmt.Errorf("%w: the store has no state.json; start a session with `refine run` (or refine.New)", ErrNoSession)
	}
	return newestComplete(bind(ctx, store), bases, -1) // state.json at least
}

// replay applies to the snapshot b (verified, compact: snapshotBase.plain)
// the journal records after it, up to and
// including record upTo (-1: all). It returns the rebuilt document, the
// bytes of the records applied and the last record's number.
func replay(store view, b []byte, upTo int64) (doc []byte, since int, last int64, err error) {
	var head struct {
		Schema     int   `json:"schema"`
		JournalSeq int64 `json:"journal_seq"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, 0, 0, fmt.Errorf("%w: state.json: %v (the file is left untouched; restore it from state_backup_round_N.json)", ErrCorrupt, err)
	}
	doc = bytes.TrimSpace(b)
	if head.Schema < 2 {
		return doc, 0, 0, nil // no journal before schema 2
	}
	r := replayer{doc: journal.NewDoc(doc), from: head.JournalSeq, last: head.JournalSeq, upTo: upTo}
	keys, err := store.List(journalPrefix)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("list journal: %w", err)
	}
	for _, k := range keys {
		start, ok := seqOf(k, journalPrefix)
		if !ok {
			continue
		}
		if upTo >= 0 && start > upTo {
			break
		}
		if err := r.segment(store, k, start); err != nil {
			return nil, 0, 0, err
		}
	}
	if upTo >= 0 && r.last != upTo {
		return nil, 0, 0, fmt.Errorf("%w: journal record %d is missing", ErrCorrupt, upTo)
	}
	return r.doc.Bytes(), r.since, r.last, nil
}

// replayer applies journal records to a snapshot's document.
type replayer struct {
	doc *journal.Doc
	// from is the snapshot's position: the records up to it are in doc.
	from int64
	// upTo is the last record to apply (-1: all).
	upTo int64
	// last is the last record applied, since the bytes applied.
	last  int64
	since int
}

// segment applies the records of the journal segment at key in store,
// whose first record is start.
func (r *replayer) segment(store view, key string, start int64) error {
	rb, err := store.Get(key)
	if errors.Is(err, ErrNotFound) {
		return fmt.Errorf("%w: journal segment %s vanished while it was read", ErrCorrupt, key)
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", key, err)
	}
	for i, line := range bytes.Split(bytes.TrimSuffix(rb, []byte("\n")), []byte("\n")) {
		rec, err := journal.ParseRecord(line)
		if err != nil || rec.Seq != start+int64(i) {
			return fmt.Errorf("%w: %s line %d: not journal record %d: %v", ErrCorrupt, key, i+1, start+int64(i), err)
		}
		n := rec.Seq
		if n <= r.from {
			continue // a record the snapshot already holds
		}
		if r.upTo >= 0 && n > r.upTo {
			return nil
		}
		if n != r.last+1 {
			return fmt.Errorf("%w: journal record %d is missing (the next is %d, in %s)", ErrCorrupt, r.last+1, n, key)
		}
		if err := r.doc.Apply(rec); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrCorrupt, key, err)
		}
		r.since += len(line) + 1
		r.last = n
	}
	return nil
}
