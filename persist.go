package refine

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/refine-spec/refine/internal/journal"
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
// snapshot). A Store that is a refine.Appender is handed only each new
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
	journalPrefix  = "journal/"
	snapshotPrefix = "snapshots/"
	// snapshotMinBytes is the journal size below which no new snapshot is
	// written, however small the state.
	snapshotMinBytes = 256 << 10
	// snapshotChunk is the least a commit appends of a background
	// snapshot; a commit whose record is larger appends as much.
	snapshotChunk = 2 << 10
)

func journalKey(seq int64) string  { return fmt.Sprintf("%s%010d.jsonl", journalPrefix, seq) }
func snapshotKey(seq int64) string { return fmt.Sprintf("%sstate_%010d.json", snapshotPrefix, seq) }

// seqOf parses the sequence number out of a journal or snapshot key.
func seqOf(key, prefix string) (int64, bool) {
	name := strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(key, prefix), ".jsonl"), ".json")
	name = strings.TrimPrefix(name, "state_")
	n, err := strconv.ParseInt(name, 10, 64)
	return n, err == nil && n >= 0 && strings.HasPrefix(key, prefix)
}

// journalState is the session's position in its journal.
type journalState struct {
	// ver is the state as of the last record, split for the next diff
	// (see journal.Version); its document (compact JSON, no newline) is
	// joined only when a snapshot needs it. has says there is one.
	ver journal.Version
	has bool
	// hist reuses the encoding of the state's history (statedoc.go).
	hist historyCache
	// seq is the last record's number.
	seq int64
	// since counts the record bytes written after the last snapshot.
	since int
	// snapSeq, snapSize: the last snapshot's position and size.
	snapSeq  int64
	snapSize int
	// snapshotNext forces a whole snapshot (state.json) at the next commit.
	snapshotNext bool
	// snapKey is where the last snapshot is: state.json or a key under
	// snapshots/.
	snapKey string
	// legacyState says state.json was written by an older refine (schema
	// 1): no journal snapshot, not to be kept for backups.
	legacyState bool
	// bg is the snapshot being written in the background, if any.
	bg *bgSnapshot
	// segStart is the first record of the segment being written (0: the
	// next record starts one); seg is its content, kept for Stores that
	// cannot append.
	segStart int64
	seg      []byte
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

// backupRef is the content of a state backup in schema 2: the journal
// record after which round Round ended.
type backupRef struct {
	Schema    int `json:"schema"`
	BackupRef struct {
		Round      int   `json:"round"`
		JournalSeq int64 `json:"journal_seq"`
	} `json:"backup_ref"`
}

// journalOp returns the record of what changed since the last record, and
// advances the journal to the current state; ok is false when nothing did.
func (s *Session) journalOp() (op Op, ok bool, err error) {
	ver, err := encodeState(s.st, &s.j.hist)
	if err != nil {
		return Op{}, false, err
	}
	ops := journal.DiffVersions(s.j.ver, ver)
	if checkingHistory() {
		// The writer's splits (encodeLedger) spare the diff a scan; the
		// operations must be those of the documents scanned.
		if want := journal.Diff(s.j.ver.Bytes(), ver.Bytes()); !slices.EqualFunc(ops, want, sameOp) {
			return Op{}, false, fmt.Errorf("journal: the diff of the split state differs from the diff of its documents:\nsplit   %v\nscanned %v", ops, want)
		}
	}
	if len(ops) == 0 {
		// The same document: keep the new version all the same, as the
		// next encoding writes over the buffers of the one before it.
		s.j.ver, s.j.has = ver, true
		return Op{}, false, nil
	}
	s.j.seq++
	enc, err := journal.Record{Seq: s.j.seq, Ops: ops}.Marshal()
	if err != nil {
		return Op{}, false, fmt.Errorf("encode journal record: %w", err)
	}
	enc = append(enc, '\n')
	s.j.ver, s.j.has = ver, true
	s.j.since += len(enc)
	if s.j.bg != nil {
		s.j.bg.since += len(enc)
	}
	if s.j.segStart == 0 {
		s.j.segStart, s.j.seg = s.j.seq, nil
	}
	key := journalKey(s.j.segStart)
	if appends(s.cfg.Store) {
		return Append(key, enc), true, nil
	}
	s.j.seg = append(s.j.seg, enc...)
	return Put(key, slices.Clone(s.j.seg)), true, nil
}

// newSegment makes the next record start a new journal segment.
func (s *Session) newSegment() { s.j.segStart, s.j.seg = 0, nil }

// snapshotDue reports whether this commit should write state.json whole.
func (s *Session) snapshotDue() bool {
	return s.j.snapshotNext || !s.j.has || !appends(s.cfg.Store) && s.rotationDue()
}

// rotationDue reports whether the records since the last snapshot
// outweigh it.
func (s *Session) rotationDue() bool {
	return s.j.since > max(snapshotMinBytes, 2*s.j.snapSize)
}

// journalOps returns this commit's journal record, and the next chunk of
// a background snapshot: one starts, frozen at this record, when a
// rotation is due and none is being written. staged is the rest of the
// commit: the records in it count towards the chunk's size.
func (s *Session) journalOps(ctx context.Context, staged []Op) ([]Op, error) {
	start := s.j.bg == nil && s.rotationDue()
	if start {
		// The record is the snapshot's position, and says so.
		s.st.JournalSeq = s.j.seq + 1
	}
	var ops []Op
	op, ok, err := s.journalOp()
	if err != nil {
		return nil, err
	}
	rec := 0
	if ok {
		ops = append(ops, op)
	}
	for _, op := range append(staged, ops...) {
		if strings.HasPrefix(op.Key, journalPrefix) {
			rec += len(op.Value)
		}
	}
	if start {
		s.j.bg = &bgSnapshot{seq: s.j.seq, doc: sealDoc(s.j.ver.Bytes())}
		s.newSegment() // the records after the snapshot start a segment
	}
	if s.j.bg == nil {
		return ops, nil
	}
	more, err := s.snapshotChunkOps(ctx, rec)
	return append(ops, more...), err
}

// snapshotChunkOps appends the next chunk of the background snapshot, and
// when it is the last, drops what the snapshot makes unnecessary.
func (s *Session) snapshotChunkOps(ctx context.Context, rec int) ([]Op, error) {
	bg := s.j.bg
	n := min(len(bg.doc)-bg.off, max(snapshotChunk, rec))
	key := snapshotKey(bg.seq)
	var ops []Op
	if bg.off == 0 {
		ops = append(ops, Put(key, bg.doc[:n])) // over any leftover of a crash
	} else {
		ops = append(ops, Append(key, bg.doc[bg.off:bg.off+n]))
	}
	bg.off += n
	if bg.off < len(bg.doc) {
		return ops, nil
	}
	drop, err := s.dropBefore(ctx, bg.seq, key)
	if err != nil {
		return nil, err
	}
	s.j.since, s.j.snapSeq, s.j.snapSize, s.j.snapKey, s.j.bg = bg.since, bg.seq, len(bg.doc), key, nil
	return append(ops, drop...), nil
}

// dropBefore returns the deletions a new snapshot at seq, kept at key,
// allows: the records at or before it and the older snapshots, except
// what the state backups still need (see keptBases).
func (s *Session) dropBefore(ctx context.Context, seq int64, key string) ([]Op, error) {
	bases, err := snapshotBases(ctx, s.cfg.Store)
	if err != nil {
		return nil, err
	}
	keep, oldest, err := s.keptBases(ctx, bases, seq)
	if err != nil {
		return nil, err
	}
	var ops []Op
	for _, b := range bases {
		if b.key != keyState && b.key != key && !keep[b] {
			ops = append(ops, Delete(b.key))
		}
	}
	upTo := seq
	if oldest >= 0 {
		upTo = oldest
	}
	dead, err := s.segmentsUpTo(ctx, upTo)
	return append(ops, dead...), err
}

// keptBases returns the snapshots among bases that the state backups
// rebuild from: for each backup older than the new snapshot at seq, the
// newest complete snapshot at or before it. Each backup needs its own: a
// whole snapshot (a rollback's state.json) takes a journal position that
// has no record, so the records cannot carry a backup across it from an
// older snapshot. oldest is the oldest kept snapshot's position (-1:
// none), from which on the records are kept.
func (s *Session) keptBases(ctx context.Context, bases []*snapshotBase, seq int64) (keep map[*snapshotBase]bool, oldest int64, err error) {
	refs, err := s.backupSeqs(ctx)
	if err != nil {
		return nil, -1, err
	}
	keep, oldest = map[*snapshotBase]bool{}, -1
	for _, want := range refs {
		if want >= seq {
			continue // the new snapshot, or the records after it, hold it
		}
		b, err := newestComplete(ctx, s.cfg.Store, bases, want)
		if err != nil {
			return nil, -1, err
		}
		if b == nil {
			continue
		}
		keep[b] = true
		if oldest < 0 || b.seq < oldest {
			oldest = b.seq
		}
	}
	return keep, oldest, nil
}

// segmentsUpTo returns the deletions of the journal segments whose
// records are all at or before seq.
func (s *Session) segmentsUpTo(ctx context.Context, seq int64) ([]Op, error) {
	records, err := s.cfg.Store.List(ctx, journalPrefix)
	if err != nil {
		return nil, fmt.Errorf("list journal: %w", err)
	}
	var starts []int64
	for _, k := range records {
		if n, ok := seqOf(k, journalPrefix); ok {
			starts = append(starts, n)
		}
	}
	slices.Sort(starts)
	var ops []Op
	for i, n := range starts {
		// A segment's records run up to the next segment's first, or to
		// the last record written.
		last := s.j.seq
		if i+1 < len(starts) {
			last = starts[i+1] - 1
		}
		if last <= seq {
			ops = append(ops, Delete(journalKey(n)))
		}
	}
	return ops, nil
}

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
func (b *snapshotBase) complete(ctx context.Context, store Store) (bool, error) {
	if b.doc == nil {
		d, err := store.Get(ctx, b.key)
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
func newestComplete(ctx context.Context, store Store, bases []*snapshotBase, upTo int64) (*snapshotBase, error) {
	for _, b := range bases {
		if upTo >= 0 && b.seq > upTo {
			continue
		}
		ok, err := b.complete(ctx, store)
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
func snapshotBases(ctx context.Context, store Store) ([]*snapshotBase, error) {
	keys, err := store.List(ctx, snapshotPrefix)
	if err != nil {
		return nil, fmt.Errorf("list snapshots: %w", err)
	}
	var out []*snapshotBase
	for _, k := range keys {
		if n, ok := seqOf(k, snapshotPrefix); ok {
			out = append(out, &snapshotBase{key: k, seq: n})
		}
	}
	b, err := store.Get(ctx, keyState)
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

// snapshotOps writes state.json whole as of a new journal position and
// deletes the records and older snapshots no backup needs any more.
func (s *Session) snapshotOps(ctx context.Context) ([]Op, error) {
	bases, err := snapshotBases(ctx, s.cfg.Store)
	if err != nil {
		return nil, err
	}
	if s.j.legacyState {
		// An older refine's state.json is no journal snapshot.
		bases = slices.DeleteFunc(bases, func(b *snapshotBase) bool { return b.key == keyState })
	}
	s.j.seq++ // the snapshot is a journal position of its own
	s.st.JournalSeq = s.j.seq
	keep, oldest, err := s.keptBases(ctx, bases, s.j.seq)
	if err != nil {
		return nil, err
	}
	ver, err := encodeState(s.st, &s.j.hist)
	if err != nil {
		return nil, err
	}
	doc := ver.Bytes()
	var ops []Op
	for _, b := range bases {
		switch {
		case b.key == keyState && keep[b]:
			// The snapshot being replaced is a backup's base: keep it.
			ops = append(ops, Put(snapshotKey(b.seq), b.doc))
		case b.key != keyState && !keep[b]:
			ops = append(ops, Delete(b.key))
		}
	}
	upTo := s.j.seq
	if oldest >= 0 {
		upTo = oldest
	}
	dead, err := s.segmentsUpTo(ctx, upTo)
	if err != nil {
		return nil, err
	}
	ops = append(ops, dead...)
	sealed := sealDoc(doc)
	ops = append(ops, Put(keyState, sealed))
	s.j.ver, s.j.has, s.j.since, s.j.snapSeq, s.j.snapSize, s.j.snapshotNext, s.j.snapKey, s.j.bg =
		ver, true, 0, s.j.seq, len(sealed), false, keyState, nil
	s.j.legacyState = false
	s.newSegment()
	return ops, nil
}

// backupSeqs returns the journal positions the state backups refer to
// (backups holding a whole state are not among them), as they will be
// once the commit being built applies: a round's start stages its backup
// in the same commit that may write a whole snapshot, so the staged
// backups count (s.get reads staged writes and deletes first).
func (s *Session) backupSeqs(ctx context.Context) ([]int64, error) {
	keys, err := s.cfg.Store.List(ctx, "state_backup_round_")
	if err != nil {
		return nil, fmt.Errorf("list backups: %w", err)
	}
	for _, op := range s.pending {
		if strings.HasPrefix(op.Key, "state_backup_round_") && op.Kind != OpDelete && !slices.Contains(keys, op.Key) {
			keys = append(keys, op.Key)
		}
	}
	var seqs []int64
	for _, k := range keys {
		b, err := s.get(ctx, k)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", k, err)
		}
		if ref, ok := parseBackupRef(b); ok {
			seqs = append(seqs, ref.BackupRef.JournalSeq)
		}
	}
	return seqs, nil
}

// parseBackupRef recognises a schema-2 state backup.
func parseBackupRef(b []byte) (backupRef, bool) {
	if !bytes.Contains(b, []byte(`"backup_ref"`)) {
		return backupRef{}, false
	}
	var ref backupRef
	if err := json.Unmarshal(b, &ref); err != nil || ref.BackupRef.JournalSeq <= 0 {
		return backupRef{}, false
	}
	return ref, true
}

// backupStateOp stages the state backup of round n: a reference to a
// journal record holding the state as it is now, written in the same
// commit.
func (s *Session) backupStateOps(n int) ([]Op, error) {
	var ops []Op
	if op, ok, err := s.journalOp(); err != nil {
		return nil, err
	} else if ok {
		ops = append(ops, op)
	}
	s.j.hist.freeze(s.st) // round n has ended: its history entries are settled
	if s.j.seq == 0 {
		// Nothing journaled yet (a session just opened from an older
		// refine): make this position a snapshot at the next commit, and
		// the backup its whole state.
		// journalOp has just encoded the state.
		return append(ops, Put(backupKeyState(n), sealDoc(s.j.ver.Bytes()))), nil
	}
	var ref backupRef
	ref.Schema = schemaVersion
	ref.BackupRef.Round, ref.BackupRef.JournalSeq = n, s.j.seq
	b, _ := json.Marshal(ref)
	s.newSegment() // the round about to start gets a segment of its own
	return append(ops, Put(backupKeyState(n), sealDoc(b))), nil
}

// loadedState is a session's state as read from its Store.
type loadedState struct {
	st *state
	j  journalState
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
		doc, since, last, err = replay(ctx, store, base.plain, -1)
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
	j := journalState{seq: last, since: since, snapSeq: base.seq, snapSize: len(base.doc), snapKey: base.key, legacyState: st.Schema < 2}
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
	bases, lerr := snapshotBases(ctx, store)
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
	bases, err := snapshotBases(ctx, store)
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(bases, func(b *snapshotBase) bool { return b.key == keyState }) {
		return nil, fmt.Errorf("%w: the store has no state.json; start a session with `refine run` (or refine.New)", ErrNoSession)
	}
	return newestComplete(ctx, store, bases, -1) // state.json at least
}

// replay applies to the snapshot b (verified, compact: snapshotBase.plain)
// the journal records after it, up to and
// including record upTo (-1: all). It returns the rebuilt document, the
// bytes of the records applied and the last record's number.
func replay(ctx context.Context, store Store, b []byte, upTo int64) (doc []byte, since int, last int64, err error) {
	var head struct {
		Schema     int   `json:"schema"`
		JournalSeq int64 `json:"journal_seq"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, 0, 0, fmt.Errorf("%w: state.json: %v (the file is left untouched; restore it from state_backup_round_N.json)", ErrCorrupt, err)
	}
	doc, last = bytes.TrimSpace(b), head.JournalSeq
	if head.Schema < 2 {
		return doc, 0, 0, nil // no journal before schema 2
	}
	rebuilt := journal.NewDoc(doc)
	keys, err := store.List(ctx, journalPrefix)
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
		rb, err := store.Get(ctx, k)
		if errors.Is(err, ErrNotFound) {
			return nil, 0, 0, fmt.Errorf("%w: journal segment %s vanished while it was read", ErrCorrupt, k)
		}
		if err != nil {
			return nil, 0, 0, fmt.Errorf("read %s: %w", k, err)
		}
		for i, line := range bytes.Split(bytes.TrimSuffix(rb, []byte("\n")), []byte("\n")) {
			rec, err := journal.ParseRecord(line)
			if err != nil || rec.Seq != start+int64(i) {
				return nil, 0, 0, fmt.Errorf("%w: %s line %d: not journal record %d: %v", ErrCorrupt, k, i+1, start+int64(i), err)
			}
			n := rec.Seq
			if n <= head.JournalSeq {
				continue // a record the snapshot already holds
			}
			if upTo >= 0 && n > upTo {
				break
			}
			if n != last+1 {
				return nil, 0, 0, fmt.Errorf("%w: journal record %d is missing (the next is %d, in %s)", ErrCorrupt, last+1, n, k)
			}
			if err := rebuilt.Apply(rec); err != nil {
				return nil, 0, 0, fmt.Errorf("%w: %s: %v", ErrCorrupt, k, err)
			}
			since += len(line) + 1
			last = n
		}
	}
	if upTo >= 0 && last != upTo {
		return nil, 0, 0, fmt.Errorf("%w: journal record %d is missing", ErrCorrupt, upTo)
	}
	return rebuilt.Bytes(), since, last, nil
}

// readStateBackup returns the state as it was after round n, as state.json
// bytes: a schema-1 backup holds it whole; a schema-2 backup refers to the
// journal and is rebuilt from the newest snapshot at or before it.
func (s *Session) readStateBackup(ctx context.Context, n int) ([]byte, error) {
	b, err := s.get(ctx, backupKeyState(n))
	if err != nil {
		return nil, err
	}
	return s.resolveBackup(ctx, backupKeyState(n), b)
}

// resolveBackup turns a state backup's content, read from key, into a
// whole state.
func (s *Session) resolveBackup(ctx context.Context, key string, b []byte) ([]byte, error) {
	return resolveBackup(ctx, s.cfg.Store, key, b)
}

// resolveBackup turns a state backup's content, read from key in store,
// into a whole state, compact and newline-terminated: a schema-1 backup is
// one already; a later backup is verified (checksum.go) and, when it
// refers to the journal, rebuilt from the newest snapshot at or before its
// journal position.
func resolveBackup(ctx context.Context, store Store, key string, b []byte) ([]byte, error) {
	b, _, err := openDoc(key, b)
	if err != nil {
		return nil, err
	}
	ref, ok := parseBackupRef(b)
	if !ok {
		return append(b, '\n'), nil
	}
	want := ref.BackupRef.JournalSeq
	bases, err := snapshotBases(ctx, store)
	if err != nil {
		return nil, err
	}
	base, err := newestComplete(ctx, store, bases, want)
	if err != nil {
		return nil, err
	}
	if base == nil {
		return nil, fmt.Errorf("%w: no snapshot at or before journal record %d for the backup of round %d", ErrCorrupt, want, ref.BackupRef.Round)
	}
	doc, _, _, err := replay(ctx, store, base.plain, want)
	if err != nil {
		return nil, fmt.Errorf("rebuild the backup of round %d: %w", ref.BackupRef.Round, err)
	}
	return append(doc, '\n'), nil
}

// Compact rewrites the session in st so that it stands on its own: the
// journal is folded into one whole state.json, every state backup that
// refers to the journal becomes a whole state, and the journal and the
// older snapshots are deleted, in one commit. `refine export` does this to
// the folder it writes; a host may do it before archiving a session. No
// session may be running on st meanwhile. The session opens and resumes as
// before; later durable points journal again.
func Compact(ctx context.Context, st Store) error {
	ls, err := loadState(ctx, st)
	if err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	keys, err := st.List(ctx, "")
	if err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	var ops []Op
	for _, k := range keys {
		switch {
		case strings.HasPrefix(k, journalPrefix), strings.HasPrefix(k, snapshotPrefix):
			ops = append(ops, Delete(k))
		case strings.HasPrefix(k, "state_backup_round_"):
			b, err := st.Get(ctx, k)
			if err != nil {
				return fmt.Errorf("compact: read %s: %w", k, err)
			}
			if _, isRef := parseBackupRef(b); isRef {
				whole, err := resolveBackup(ctx, st, k, b)
				if err != nil {
					return fmt.Errorf("compact: %s: %w", k, err)
				}
				ops = append(ops, Put(k, sealDoc(bytes.TrimSuffix(whole, []byte("\n")))))
			}
		}
	}
	ls.st.JournalSeq = ls.j.seq
	doc, err := json.Marshal(ls.st)
	if err != nil {
		return fmt.Errorf("compact: encode state: %w", err)
	}
	ops = append(ops, Put(keyState, sealDoc(doc)))
	if err := st.Commit(ctx, ops...); err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	return nil
}
