package statedoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/store"
)

// State backups that refer to the journal (see persist.go): what a round's
// backup holds, which snapshots the backups keep, and how a backup is read
// back as a whole state.

// backupRef is the content of a state backup in schema 2: the journal
// record after which round Round ended.
type backupRef struct {
	Schema    int `json:"schema"`
	BackupRef struct {
		Round      int   `json:"round"`
		JournalSeq int64 `json:"journal_seq"`
	} `json:"backup_ref"`
}

// StateBackupOps returns the state backup of round n, st as it is now: a
// reference to a journal record holding it, written in the same commit.
func (j *StateJournal) StateBackupOps(st *state.State, n int) ([]store.Op, error) {
	var ops []store.Op
	if op, ok, err := j.record(st); err != nil {
		return nil, err
	} else if ok {
		ops = append(ops, op)
	}
	j.Hist.Freeze(st) // round n has ended: its history entries are settled
	if j.Seq == 0 {
		// Nothing journaled yet (a session just opened from an older
		// refine): make this position a snapshot at the next commit, and
		// the backup its whole state.
		// record has just encoded the state.
		return append(ops, store.Put(state.BackupKeyState(n), SealDoc(j.Ver.Bytes()))), nil
	}
	var ref backupRef
	ref.Schema = state.SchemaVersion
	ref.BackupRef.Round, ref.BackupRef.JournalSeq = n, j.Seq
	b, _ := json.Marshal(ref)
	j.newSegment() // the round about to start gets a segment of its own
	return append(ops, store.Put(state.BackupKeyState(n), SealDoc(b))), nil
}

// keptBases returns the snapshots among bases that the state backups
// rebuild from: for each backup older than the new snapshot at seq, the
// newest complete snapshot at or before it. Each backup needs its own: a
// whole snapshot (a rollback's state.json) takes a journal position that
// has no record, so the records cannot carry a backup across it from an
// older snapshot. oldest is the oldest kept snapshot's position (-1:
// none), from which on the records are kept.
func keptBases(v StoreView, bases []*SnapshotBase, seq int64) (keep map[*SnapshotBase]bool, oldest int64, err error) {
	refs, err := backupSeqs(v)
	if err != nil {
		return nil, -1, err
	}
	keep, oldest = map[*SnapshotBase]bool{}, -1
	for _, want := range refs {
		if want >= seq {
			continue // the new snapshot, or the records after it, hold it
		}
		b, err := NewestComplete(v.Store, bases, want)
		if err != nil {
			return nil, -1, err
		}
		if b == nil {
			continue
		}
		keep[b] = true
		if oldest < 0 || b.Seq < oldest {
			oldest = b.Seq
		}
	}
	return keep, oldest, nil
}

// backupSeqs returns the journal positions the state backups refer to
// (backups holding a whole state are not among them), as they will be
// once the commit being built applies: a round's start stages its backup
// in the same commit that may write a whole snapshot, so the staged
// backups count (v.get reads staged writes and deletes first).
func backupSeqs(v StoreView) ([]int64, error) {
	keys, err := v.Store.List("state_backup_round_")
	if err != nil {
		return nil, fmt.Errorf("list backups: %w", err)
	}
	for _, op := range v.Pending {
		if strings.HasPrefix(op.Key, "state_backup_round_") && op.Kind != store.OpDelete && !slices.Contains(keys, op.Key) {
			keys = append(keys, op.Key)
		}
	}
	var seqs []int64
	for _, k := range keys {
		b, err := v.Get(k)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", k, err)
		}
		if ref, ok := ParseBackupRef(b); ok {
			seqs = append(seqs, ref.BackupRef.JournalSeq)
		}
	}
	return seqs, nil
}

// ParseBackupRef recognises a schema-2 state backup.
func ParseBackupRef(b []byte) (backupRef, bool) {
	if !bytes.Contains(b, []byte(`"backup_ref"`)) {
		return backupRef{}, false
	}
	var ref backupRef
	if err := json.Unmarshal(b, &ref); err != nil || ref.BackupRef.JournalSeq <= 0 {
		return backupRef{}, false
	}
	return ref, true
}

// ReadStateBackup returns the state as it was after round n, as state.json
// bytes, read through v: a schema-1 backup holds it whole; a schema-2
// backup refers to the journal and is rebuilt from the newest snapshot at
// or before it.
func ReadStateBackup(v StoreView, n int) ([]byte, error) {
	b, err := v.Get(state.BackupKeyState(n))
	if err != nil {
		return nil, err
	}
	return ResolveBackup(v.Store, state.BackupKeyState(n), b)
}

// ResolveBackup turns a state backup's content, read from key in store,
// into a whole state, compact and newline-terminated: a schema-1 backup is
// one already; a later backup is verified (checksum.go) and, when it
// refers to the journal, rebuilt from the newest snapshot at or before its
// journal position.
func ResolveBackup(sv view, key string, b []byte) ([]byte, error) {
	b, _, err := OpenDoc(key, b)
	if err != nil {
		return nil, err
	}
	ref, ok := ParseBackupRef(b)
	if !ok {
		return append(b, '\n'), nil
	}
	want := ref.BackupRef.JournalSeq
	bases, err := SnapshotBases(sv)
	if err != nil {
		return nil, err
	}
	base, err := NewestComplete(sv, bases, want)
	if err != nil {
		return nil, err
	}
	if base == nil {
		return nil, fmt.Errorf("%w: no snapshot at or before journal record %d for the backup of round %d", store.ErrCorrupt, want, ref.BackupRef.Round)
	}
	doc, _, _, err := Replay(sv, base.Plain, want)
	if err != nil {
		return nil, fmt.Errorf("rebuild the backup of round %d: %w", ref.BackupRef.Round, err)
	}
	return append(doc, '\n'), nil
}
