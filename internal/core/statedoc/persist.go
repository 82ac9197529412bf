package statedoc

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/internal/journal"
	"github.com/refine-spec/refine/store"
)

// How a session's state is stored.
//
// A snapshot is the whole state as of journal record JournalSeq:
// state.json, or a newer one under snapshots/. Every durable point after
// it commits one small record of
// what changed (internal/journal), in the same Store commit as the outputs
// it concerns. Records are lines of a journal segment,
// journal/NNNNNNNNNN.jsonl, named by its first record; a segment holds one
// round's records (a new one starts at each round and after each
// snapshot). A Store that is a store.Appender is handed only each new
// line; another gets the segment rewritten. Opening a session reads the
// snapshot and applies the records after it. A new snapshot is due when
// the records since the last one outweigh it (so the bytes a session hands
// its Store grow with what happens, not with the state's size times the
// number of durable points). With an Appender it is written in the
// background: the state as of one record is frozen and appended to
// snapshots/state_NNNNNNNNNN.json a chunk per commit, each at most the
// larger of that commit's records and snapshotChunk, so no durable point pays
// for the whole state; the commit that appends the last chunk drops what
// the new snapshot makes unnecessary. Until then the file is an
// incomplete JSON document, which readers pass over. state.json is then
// older than the newest snapshot: readers start from the newest complete
// one. state.json is written whole, at once, when the state is replaced
// wholesale (a rollback), when a session written by an older refine is
// first committed, when the session ends, and when the Store cannot
// append.
//
// A round's state backup (state_backup_round_N.json) is a reference to the
// journal record that ended round N, resolved from the newest snapshot at
// or before it plus the records up to it. Older snapshots are kept under
// snapshots/ while a backup needs one, and records are kept from the
// oldest snapshot still needed.

const (
	JournalPrefix  = "journal/"
	SnapshotPrefix = "snapshots/"
	// snapshotMinBytes is the journal size below which no new snapshot is
	// written, however small the state.
	snapshotMinBytes = 256 << 10
	// snapshotChunk is the least a commit appends of a background
	// snapshot; a commit whose record is larger appends as much.
	snapshotChunk = 2 << 10
)

func journalKey(seq int64) string  { return fmt.Sprintf("%s%010d.jsonl", JournalPrefix, seq) }
func snapshotKey(seq int64) string { return fmt.Sprintf("%sstate_%010d.json", SnapshotPrefix, seq) }

// seqOf parses the sequence number out of a journal or snapshot key.
func seqOf(key, prefix string) (int64, bool) {
	name := strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(key, prefix), ".jsonl"), ".json")
	name = strings.TrimPrefix(name, "state_")
	n, err := strconv.ParseInt(name, 10, 64)
	return n, err == nil && n >= 0 && strings.HasPrefix(key, prefix)
}

// StateJournal is how a session's state is stored: its position in the
// journal, the snapshot being written in the background and the Store
// capability it writes for. At each durable point the session asks it for
// the ops that make the state durable (commitOps) and commits them with
// its own; it reads the Store only through the view it is handed
// (storeView) and writes nothing itself.
type StateJournal struct {
	// Ver is the state as of the last record, split for the next diff
	// (see journal.Version); its document (compact JSON, no newline) is
	// joined only when a snapshot needs it. has says there is one.
	Ver journal.Version
	Has bool
	// Hist reuses the encoding of the state's history (statedoc.go).
	Hist HistoryCache
	// Seq is the last record's number.
	Seq int64
	// Since counts the record bytes written after the last snapshot.
	Since int
	// SnapSeq, snapSize: the last snapshot's position and size.
	SnapSeq  int64
	SnapSize int
	// SnapshotNext forces a whole snapshot (state.json) at the next commit.
	SnapshotNext bool
	// SnapKey is where the last snapshot is: state.json or a key under
	// snapshots/.
	SnapKey string
	// LegacyState says state.json was written by an older refine (schema
	// 1): no journal snapshot, not to be kept for backups.
	LegacyState bool
	// bg is the snapshot being written in the background, if any.
	bg *bgSnapshot
	// segStart is the first record of the segment being written (0: the
	// next record starts one); seg is its content, kept for Stores that
	// cannot append.
	segStart int64
	seg      []byte
	// Appends says the Store takes OpAppend (store.Appender): a record
	// is then appended to its segment, and snapshots are written in the
	// background.
	Appends bool
}

// NewJournal returns the journal of a session not stored yet, in a Store
// that takes appends when appends is set:
// its first commit writes a whole snapshot.
func NewJournal(appends bool) StateJournal { return StateJournal{Appends: appends} }

// StoreView is what the journal reads of the session's Store: the Store as
// committed, and the writes the session has staged for the commit being
// built (Session.pending), which the state backups are read with.
type StoreView struct {
	Store   view
	Pending []store.Op
}

// Get reads key as the commit being built will leave it: the latest
// staged write, else the Store (as Session.get does).
func (v StoreView) Get(key string) ([]byte, error) {
	for i := len(v.Pending) - 1; i >= 0; i-- {
		if op := v.Pending[i]; op.Key == key {
			switch op.Kind {
			case store.OpDelete:
				return nil, fmt.Errorf("get %s: %w", key, store.ErrNotFound)
			case store.OpCopy:
				return v.Get(op.From)
			}
			return op.Value, nil
		}
	}
	return v.Store.Get(key)
}

// bgSnapshot is a snapshot written a chunk per commit: the state as of
// record seq.
type bgSnapshot struct {
	seq int64
	doc []byte // the whole document, newline-terminated
	off int    // the bytes handed to the Store so far
	// since counts the record bytes written after seq.
	since int
}

// CommitOps returns the ops that make st durable in the commit being
// built, after staged (the rest of that commit): a whole snapshot when one
// is due, else the record of what changed and the next chunk of a
// background snapshot.
func (j *StateJournal) CommitOps(v StoreView, st *state.State, staged []store.Op) ([]store.Op, error) {
	if j.snapshotDue() {
		return j.snapshotOps(v, st)
	}
	return j.recordOps(v, st, staged)
}

// record returns the record of what changed in st since the last record,
// and advances the journal to st; ok is false when nothing did.
func (j *StateJournal) record(st *state.State) (op store.Op, ok bool, err error) {
	ver, err := EncodeState(st, &j.Hist)
	if err != nil {
		return store.Op{}, false, err
	}
	ops := journal.DiffVersions(j.Ver, ver)
	if j.Hist.Check {
		// The writer's splits (encodeLedger) spare the diff a scan; the
		// operations must be those of the documents scanned.
		if want := journal.Diff(j.Ver.Bytes(), ver.Bytes()); !slices.EqualFunc(ops, want, sameOp) {
			return store.Op{}, false, fmt.Errorf("journal: the diff of the split state differs from the diff of its documents:\nsplit   %v\nscanned %v", ops, want)
		}
	}
	if len(ops) == 0 {
		// The same document: keep the new version all the same, as the
		// next encoding writes over the buffers of the one before it.
		j.Ver, j.Has = ver, true
		return store.Op{}, false, nil
	}
	j.Seq++
	enc, err := journal.Record{Seq: j.Seq, Ops: ops}.Marshal()
	if err != nil {
		return store.Op{}, false, fmt.Errorf("encode journal record: %w", err)
	}
	enc = append(enc, '\n')
	j.Ver, j.Has = ver, true
	j.Since += len(enc)
	if j.bg != nil {
		j.bg.since += len(enc)
	}
	if j.segStart == 0 {
		j.segStart, j.seg = j.Seq, nil
	}
	key := journalKey(j.segStart)
	if j.Appends {
		return store.Append(key, enc), true, nil
	}
	j.seg = append(j.seg, enc...)
	return store.Put(key, slices.Clone(j.seg)), true, nil
}

// newSegment makes the next record start a new journal segment.
func (j *StateJournal) newSegment() { j.segStart, j.seg = 0, nil }

// snapshotDue reports whether this commit should write state.json whole.
func (j *StateJournal) snapshotDue() bool {
	return j.SnapshotNext || !j.Has || !j.Appends && j.rotationDue()
}

// rotationDue reports whether the records since the last snapshot
// outweigh it.
func (j *StateJournal) rotationDue() bool {
	return j.Since > max(snapshotMinBytes, 2*j.SnapSize)
}

// recordOps returns this commit's journal record, and the next chunk of
// a background snapshot: one starts, frozen at this record, when a
// rotation is due and none is being written. staged is the rest of the
// commit: the records in it count towards the chunk's size.
func (j *StateJournal) recordOps(v StoreView, st *state.State, staged []store.Op) ([]store.Op, error) {
	start := j.bg == nil && j.rotationDue()
	if start {
		// The record is the snapshot's position, and says so.
		st.JournalSeq = j.Seq + 1
	}
	var ops []store.Op
	op, ok, err := j.record(st)
	if err != nil {
		return nil, err
	}
	if ok {
		ops = append(ops, op)
	}
	if start {
		j.bg = &bgSnapshot{seq: j.Seq, doc: SealDoc(j.Ver.Bytes())}
		j.newSegment() // the records after the snapshot start a segment
	}
	if j.bg == nil {
		return ops, nil
	}
	more, err := j.chunkOps(v, recordBytes(staged, ops))
	return append(ops, more...), err
}

// recordBytes counts the bytes of the journal records among the ops of a
// commit.
func recordBytes(staged, ops []store.Op) int {
	rec := 0
	for _, list := range [][]store.Op{staged, ops} {
		for _, op := range list {
			if strings.HasPrefix(op.Key, JournalPrefix) {
				rec += len(op.Value)
			}
		}
	}
	return rec
}

// chunkOps appends the next chunk of the background snapshot, at least
// rec bytes, and when it is the last, drops what the snapshot makes
// unnecessary.
func (j *StateJournal) chunkOps(v StoreView, rec int) ([]store.Op, error) {
	bg := j.bg
	n := min(len(bg.doc)-bg.off, max(snapshotChunk, rec))
	key := snapshotKey(bg.seq)
	var ops []store.Op
	if bg.off == 0 {
		ops = append(ops, store.Put(key, bg.doc[:n])) // over any leftover of a crash
	} else {
		ops = append(ops, store.Append(key, bg.doc[bg.off:bg.off+n]))
	}
	bg.off += n
	if bg.off < len(bg.doc) {
		return ops, nil
	}
	drop, err := j.dropBefore(v, bg.seq, key)
	if err != nil {
		return nil, err
	}
	j.Since, j.SnapSeq, j.SnapSize, j.SnapKey, j.bg = bg.since, bg.seq, len(bg.doc), key, nil
	return append(ops, drop...), nil
}

// dropBefore returns the deletions a new snapshot at seq, kept at key,
// allows: the records at or before it and the older snapshots, except
// what the state backups still need (see keptBases).
func (j *StateJournal) dropBefore(v StoreView, seq int64, key string) ([]store.Op, error) {
	bases, err := SnapshotBases(v.Store)
	if err != nil {
		return nil, err
	}
	keep, oldest, err := keptBases(v, bases, seq)
	if err != nil {
		return nil, err
	}
	var ops []store.Op
	for _, b := range bases {
		if b.Key != state.KeyState && b.Key != key && !keep[b] {
			ops = append(ops, store.Delete(b.Key))
		}
	}
	dead, err := j.segmentsUpTo(v.Store, keptFrom(seq, oldest))
	return append(ops, dead...), err
}

// keptFrom returns the last record a new snapshot at seq makes
// unnecessary, given the oldest snapshot a backup still needs (-1: none).
func keptFrom(seq, oldest int64) int64 {
	if oldest >= 0 {
		return oldest
	}
	return seq
}

// snapshotOps writes state.json whole, st as of a new journal position,
// and deletes the records and older snapshots no backup needs any more.
func (j *StateJournal) snapshotOps(v StoreView, st *state.State) ([]store.Op, error) {
	bases, err := SnapshotBases(v.Store)
	if err != nil {
		return nil, err
	}
	if j.LegacyState {
		// An older refine's state.json is no journal snapshot.
		bases = slices.DeleteFunc(bases, func(b *SnapshotBase) bool { return b.Key == state.KeyState })
	}
	j.Seq++ // the snapshot is a journal position of its own
	st.JournalSeq = j.Seq
	keep, oldest, err := keptBases(v, bases, j.Seq)
	if err != nil {
		return nil, err
	}
	ver, err := EncodeState(st, &j.Hist)
	if err != nil {
		return nil, err
	}
	ops := replacedBases(bases, keep)
	dead, err := j.segmentsUpTo(v.Store, keptFrom(j.Seq, oldest))
	if err != nil {
		return nil, err
	}
	ops = append(ops, dead...)
	sealed := SealDoc(ver.Bytes())
	ops = append(ops, store.Put(state.KeyState, sealed))
	j.Ver, j.Has, j.Since, j.SnapSeq, j.SnapSize, j.SnapshotNext, j.SnapKey, j.bg =
		ver, true, 0, j.Seq, len(sealed), false, state.KeyState, nil
	j.LegacyState = false
	j.newSegment()
	return ops, nil
}

// replacedBases returns what becomes of the snapshots when state.json is
// written whole: the one it replaces is kept under snapshots/ when a
// backup needs it, and the others no backup needs are deleted.
func replacedBases(bases []*SnapshotBase, keep map[*SnapshotBase]bool) []store.Op {
	var ops []store.Op
	for _, b := range bases {
		switch {
		case b.Key == state.KeyState && keep[b]:
			// The snapshot being replaced is a backup's base: keep it.
			ops = append(ops, store.Put(snapshotKey(b.Seq), b.Doc))
		case b.Key != state.KeyState && !keep[b]:
			ops = append(ops, store.Delete(b.Key))
		}
	}
	return ops
}

// segmentsUpTo returns the deletions of the journal segments in store
// whose records are all at or before seq.
func (j *StateJournal) segmentsUpTo(sv view, seq int64) ([]store.Op, error) {
	records, err := sv.List(JournalPrefix)
	if err != nil {
		return nil, fmt.Errorf("list journal: %w", err)
	}
	var starts []int64
	for _, k := range records {
		if n, ok := seqOf(k, JournalPrefix); ok {
			starts = append(starts, n)
		}
	}
	slices.Sort(starts)
	var ops []store.Op
	for i, n := range starts {
		// A segment's records run up to the next segment's first, or to
		// the last record written.
		last := j.Seq
		if i+1 < len(starts) {
			last = starts[i+1] - 1
		}
		if last <= seq {
			ops = append(ops, store.Delete(journalKey(n)))
		}
	}
	return ops, nil
}
