package fs

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/refine-spec/refine/store"
)

// Repairs. After a clean Close (which the lock file records, where the
// lock is flock: Linux, macOS, the BSDs) every file holds its last
// committed value
// (in the kernel's cache at least), so a file Open finds holding another
// value, while the log still holds the commit that wrote it, was damaged
// or changed behind the store's back (the disk, a power loss in the
// seconds after the Close, another program): Open writes the logged
// value again, as it replays a crashed writer's commits, and the log's
// checksums vouch for that value. That is a repair, and it is not kept
// quiet: Open logs it at Warn and notes it in the log folder
// (repairsName), where Repairs reports it, to this Store and to any
// later one, until the session records it in its state
// (RepairsRecorded). After a crash, or when the lock file does not say
// (a folder copied without it), files behind the log are expected, and
// replaying them is recovery, logged at Info.

// repairsName is the file in the log folder holding the repairs not yet
// recorded by the session: a JSON array of store.Repair. scanLog ignores
// it, as every name it does not write.
const repairsName = "repairs.json"

var _ store.Repairer = (*Store)(nil)

// repairDetail says what the file at c's key holds instead of c's value,
// as "it held …" reads.
func (s *Store) repairDetail(c change) string {
	fi, blocker, err := s.lstatKey(c.key)
	switch {
	case err != nil:
		return fmt.Sprintf("an unreadable file (%v)", err)
	case c.del:
		return "a file the last commits deleted"
	case blocker != "" || fi == nil:
		return "nothing: the file was missing"
	case !fi.Mode().IsRegular():
		return fmt.Sprintf("a %v, not a file", fi.Mode().Type())
	case fi.Size() != int64(len(c.value)):
		return fmt.Sprintf("%d bytes; the log holds %d", fi.Size(), len(c.value))
	}
	return fmt.Sprintf("other bytes of the same size (%d)", fi.Size())
}

// noteRepairs logs the repairs and adds them to the file of repairs not
// recorded yet. A failure to note them is logged, not Open's: the files
// are repaired either way.
func (s *Store) noteRepairs(repairs []store.Repair) {
	for _, r := range repairs {
		s.log.Warn("fs: repaired a file from the log: it did not hold its last committed value (damaged on disk, or changed by another program)",
			"dir", s.dir, "key", r.Key, "found", r.Detail)
	}
	old, err := s.Repairs()
	if err == nil {
		err = s.writeRepairs(append(old, repairs...))
	}
	if err != nil {
		s.log.Warn("fs: could not note the repairs for the session's state; they are logged here only", "dir", s.dir, "err", err)
	}
}

// newRepairs makes the repairs of changes, found at now.
func (s *Store) newRepairs(changes []change, now time.Time) []store.Repair {
	out := make([]store.Repair, len(changes))
	for i, c := range changes {
		out[i] = store.Repair{ID: fmt.Sprintf("%s %s", now.UTC().Format("20060102T150405.000000000Z"), c.key), At: now.UTC(), Key: c.key, Detail: s.repairDetail(c)}
	}
	return out
}

// Repairs returns the repairs an Open of this folder made that the
// session has not recorded yet (store.Repairer). A read-only Store reports
// them too.
func (s *Store) Repairs() ([]store.Repair, error) {
	b, err := s.readLogFile(walPath(repairsName))
	if isNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("fs: read the repairs of %s: %w", s.dir, err)
	}
	var rs []store.Repair
	if err := json.Unmarshal(b, &rs); err != nil {
		return nil, fmt.Errorf("fs: read the repairs of %s: %s: %w", s.dir, walPath(repairsName), err)
	}
	return rs, nil
}

// RepairsRecorded drops the repairs with these IDs from those Repairs
// reports: the session's state holds them now (store.Repairer).
func (s *Store) RepairsRecorded(ids []string) error {
	if s.readOnly {
		return fmt.Errorf("fs: record repairs in %s: %w", s.dir, ErrReadOnly)
	}
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	rs, err := s.Repairs()
	if err != nil {
		return err
	}
	kept := slices.DeleteFunc(rs, func(r store.Repair) bool { return slices.Contains(ids, r.ID) })
	if err := s.writeRepairs(kept); err != nil {
		return fmt.Errorf("fs: record repairs in %s: %w", s.dir, err)
	}
	return nil
}

// writeRepairs replaces the file of repairs with rs (removes it when rs
// is empty), through a temporary file and a rename.
func (s *Store) writeRepairs(rs []store.Repair) error {
	if len(rs) == 0 {
		if err := s.walDir.remove(repairsName); err != nil && !isNotExist(err) {
			return err
		}
		return nil
	}
	b, err := json.MarshalIndent(rs, "", "  ")
	if err != nil {
		return err
	}
	temp := walPath(repairsName + tempSuffix)
	if err := s.replaceFile(temp, append(b, '\n'), syncOpen); err != nil {
		return err
	}
	if err := s.walDir.renameTo(walBase(temp), s.walDir, repairsName, false); err != nil {
		s.walDir.remove(walBase(temp))
		return err
	}
	return nil
}
