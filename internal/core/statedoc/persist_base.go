package statedoc

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/internal/journal"
	"github.com/refine-spec/refine/store"
)

// SnapshotBase is a snapshot a reader may start from.
type SnapshotBase struct {
	Key string
	Seq int64
	// doc, when read, is its content; plain, once verified, is the state
	// document it holds (checksum.go).
	Doc, Plain []byte
}

// complete reads the snapshot and reports whether it is whole: a
// background snapshot is an incomplete JSON document until its last chunk.
func (b *SnapshotBase) complete(sv view) (bool, error) {
	if b.Doc == nil {
		d, err := sv.Get(b.Key)
		if errors.Is(err, store.ErrNotFound) {
			return false, nil // dropped meanwhile by a writer
		}
		if err != nil {
			return false, fmt.Errorf("read %s: %w", b.Key, err)
		}
		b.Doc = d
	}
	if b.Plain == nil {
		plain, ok, err := OpenDoc(b.Key, b.Doc)
		if err != nil || !ok {
			return false, err
		}
		b.Plain = plain
	}
	return true, nil
}

// NewestComplete returns the newest complete snapshot among bases at or
// before journal record upTo (-1: any), or nil.
func NewestComplete(sv view, bases []*SnapshotBase, upTo int64) (*SnapshotBase, error) {
	for _, b := range bases {
		if upTo >= 0 && b.Seq > upTo {
			continue
		}
		ok, err := b.complete(sv)
		if err != nil {
			return nil, err
		}
		if ok {
			return b, nil
		}
	}
	return nil, nil
}

// SnapshotBases lists the snapshots in store, newest first: state.json
// (read, if there is one yet) and those under snapshots/, complete or not.
func SnapshotBases(sv view) ([]*SnapshotBase, error) {
	keys, err := sv.List(SnapshotPrefix)
	if err != nil {
		return nil, fmt.Errorf("list snapshots: %w", err)
	}
	var out []*SnapshotBase
	for _, k := range keys {
		if n, ok := seqOf(k, SnapshotPrefix); ok {
			out = append(out, &SnapshotBase{Key: k, Seq: n})
		}
	}
	b, err := sv.Get(state.KeyState)
	switch {
	case errors.Is(err, store.ErrNotFound):
		// A session's first commit writes it.
	case err != nil:
		return nil, fmt.Errorf("read state.json: %w", err)
	default:
		// A damaged state.json is refused here: passing over it would
		// start from an older snapshot and silently roll the session back.
		plain, _, err := OpenDoc(state.KeyState, b)
		if err != nil {
			return nil, err
		}
		var head struct {
			JournalSeq int64 `json:"journal_seq"`
		}
		if err := json.Unmarshal(plain, &head); err != nil {
			return nil, fmt.Errorf("%w: state.json: %v (the file is left untouched)", store.ErrCorrupt, err)
		}
		out = append(out, &SnapshotBase{Key: state.KeyState, Seq: head.JournalSeq, Doc: b, Plain: plain})
	}
	slices.SortStableFunc(out, func(a, b *SnapshotBase) int {
		if a.Seq != b.Seq {
			return cmp.Compare(b.Seq, a.Seq)
		}
		return strings.Compare(b.Key, a.Key) // state.json first among equals
	})
	return out, nil
}

// Replay applies to the snapshot b (verified, compact: snapshotBase.plain)
// the journal records after it, up to and
// including record upTo (-1: all). It returns the rebuilt document, the
// bytes of the records applied and the last record's number.
func Replay(sv view, b []byte, upTo int64) (doc []byte, since int, last int64, err error) {
	var head struct {
		Schema     int   `json:"schema"`
		JournalSeq int64 `json:"journal_seq"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, 0, 0, fmt.Errorf("%w: state.json: %v (the file is left untouched; restore it from state_backup_round_N.json)", store.ErrCorrupt, err)
	}
	doc = bytes.TrimSpace(b)
	if head.Schema < 2 {
		return doc, 0, 0, nil // no journal before schema 2
	}
	r := replayer{doc: journal.NewDoc(doc), from: head.JournalSeq, last: head.JournalSeq, upTo: upTo}
	keys, err := sv.List(JournalPrefix)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("list journal: %w", err)
	}
	for _, k := range keys {
		start, ok := seqOf(k, JournalPrefix)
		if !ok {
			continue
		}
		if upTo >= 0 && start > upTo {
			break
		}
		if err := r.segment(sv, k, start); err != nil {
			return nil, 0, 0, err
		}
	}
	if upTo >= 0 && r.last != upTo {
		return nil, 0, 0, fmt.Errorf("%w: journal record %d is missing", store.ErrCorrupt, upTo)
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
func (r *replayer) segment(sv view, key string, start int64) error {
	rb, err := sv.Get(key)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%w: journal segment %s vanished while it was read", store.ErrCorrupt, key)
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", key, err)
	}
	for i, line := range bytes.Split(bytes.TrimSuffix(rb, []byte("\n")), []byte("\n")) {
		rec, err := journal.ParseRecord(line)
		if err != nil || rec.Seq != start+int64(i) {
			return fmt.Errorf("%w: %s line %d: not journal record %d: %v", store.ErrCorrupt, key, i+1, start+int64(i), err)
		}
		n := rec.Seq
		if n <= r.from {
			continue // a record the snapshot already holds
		}
		if r.upTo >= 0 && n > r.upTo {
			return nil
		}
		if n != r.last+1 {
			return fmt.Errorf("%w: journal record %d is missing (the next is %d, in %s)", store.ErrCorrupt, r.last+1, n, key)
		}
		if err := r.doc.Apply(rec); err != nil {
			return fmt.Errorf("%w: %s: %v", store.ErrCorrupt, key, err)
		}
		r.since += len(line) + 1
		r.last = n
	}
	return nil
}
