package fs

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/refine-spec/refine"
)

// change is one key's net effect in a commit: the last op on a key decides
// it, since each op replaces the key's whole state.
type change struct {
	key   string
	value []byte
	del   bool
}

// Commit applies ops atomically: after it returns nil every op is durable;
// after any error, or a crash, the folder holds either all of them or none
// (see the package documentation for how). Invalid keys, reserved names
// and a key that would also be a folder of other keys fail with
// refine.ErrInvalidKey before anything is written. A context cancelled
// before the commit point stops the commit and applies nothing; after the
// commit point the commit completes.
//
// If a commit fails after its commit point (an I/O error while applying
// it, or while checkpointing the log), the error says so and the Store
// refuses further use: Close it and Open the folder again, which replays
// the commit from the log.
func (s *Store) Commit(ctx context.Context, ops ...refine.Op) error {
	if s.readOnly {
		return fmt.Errorf("fs: commit in %s: %w; open the folder with Open to write", s.dir, ErrReadOnly)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("fs: commit: %w", err)
	}
	if err := refine.ValidAppendOps(ops); err != nil {
		return fmt.Errorf("fs: commit: %w", err)
	}
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	ops, err := s.resolveAppends(ops)
	if err != nil {
		return fmt.Errorf("fs: commit: %w", err)
	}
	changes := netChanges(ops)
	if len(changes) == 0 {
		return nil
	}

	s.mu.RLock()
	err = s.usable("commit " + describe(changes))
	s.mu.RUnlock()
	if err != nil {
		return err
	}
	if err := s.checkLayout(changes); err != nil {
		return err
	}
	seq := s.wal.next
	record := encodeRecord(seq, changes)
	// The puts' temporary files do not depend on the commit point, so they
	// are written while the record's fsync waits on the disk.
	type staged struct {
		temps []string
		err   error
	}
	stagedc := make(chan staged, 1)
	go func() {
		temps, err := s.stage(seq, changes)
		stagedc <- staged{temps, err}
	}()
	committed, err := s.appendRecord(ctx, seq, record)
	st := <-stagedc
	if !committed {
		s.discard(st.temps)
		return fmt.Errorf("fs: commit %s: %w", describe(changes), err)
	}
	// Past the commit point: the record is the commit, whatever happens
	// to the files from here on.
	s.wal.logged(seq, len(record), changes)
	if err == nil {
		err = st.err
	}
	if err == nil {
		err = s.hook("recorded")
	}
	if err == nil {
		err = s.apply(changes, st.temps)
	}
	s.discard(st.temps) // any a failure left behind
	if err == nil {
		err = s.hook("applied")
	}
	if err == nil && s.wal.due() {
		err = s.checkpoint()
	}
	if err == nil {
		return nil
	}
	// The files may not match the log now, so a checkpoint (Close's among
	// them) must not run: recovery at the next Open puts things right.
	s.mu.Lock()
	s.broken = err
	s.mu.Unlock()
	return fmt.Errorf("fs: commit %s: %w; the commit is in the log and completes when the folder is opened again: Close this store and Open %s",
		describe(changes), err, s.dir)
}

// resolveAppends turns each append into a put of the key's whole new
// value: its value before the commit (or as an earlier op of the commit
// left it) with the appended bytes after it. The log then records whole
// values as ever, so recovery needs nothing new; what an append saves is
// the caller's work and the bytes it hands over, and, for a key that
// grows by small records, a new file per record. s.commitMu must be held.
func (s *Store) resolveAppends(ops []refine.Op) ([]refine.Op, error) {
	has := false
	for _, op := range ops {
		has = has || op.Kind == refine.OpAppend
	}
	if !has {
		return ops, nil
	}
	out := make([]refine.Op, len(ops))
	staged := map[string][]byte{} // key → value as the commit so far leaves it; nil: deleted
	for i, op := range ops {
		switch op.Kind {
		case refine.OpPut:
			staged[op.Key] = op.Value
			out[i] = op
		case refine.OpDelete:
			staged[op.Key] = nil
			out[i] = op
		case refine.OpAppend:
			base, ok := staged[op.Key]
			if !ok {
				b, err := s.read(op.Key)
				if err != nil && !errors.Is(err, refine.ErrNotFound) {
					return nil, fmt.Errorf("append %s: %w", op.Key, err)
				}
				base = b
			}
			v := make([]byte, 0, len(base)+len(op.Value))
			v = append(append(v, base...), op.Value...)
			staged[op.Key] = v
			out[i] = refine.Put(op.Key, v)
		}
	}
	return out, nil
}

func netChanges(ops []refine.Op) []change {
	last := make(map[string]int, len(ops))
	for i, op := range ops {
		last[op.Key] = i
	}
	changes := make([]change, 0, len(last))
	for k, i := range last {
		changes = append(changes, change{key: k, value: ops[i].Value, del: ops[i].Kind == refine.OpDelete})
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].key < changes[j].key })
	return changes
}

// describe names a commit in errors by its first key.
func describe(changes []change) string {
	if len(changes) == 1 {
		return changes[0].key
	}
	return fmt.Sprintf("%s (and %d more keys)", changes[0].key, len(changes)-1)
}

// checkLayout rejects, before anything is written, a commit the folder
// cannot hold: a key below a key, a key over a folder that still holds
// keys, a put below a link. It judges the state the commit would leave.
func (s *Store) checkLayout(changes []change) error {
	final := make(map[string]bool, len(changes)) // key → put (true) or delete
	for _, c := range changes {
		final[c.key] = !c.del
	}
	for _, c := range changes {
		if c.del {
			continue // removing never needs room
		}
		invalid := func(format string, args ...any) error {
			return fmt.Errorf("fs: commit %s: %w: %s", c.key, refine.ErrInvalidKey, fmt.Sprintf(format, args...))
		}
		for i := strings.IndexByte(c.key, '/'); i >= 0; i = nextSlash(c.key, i) {
			if final[c.key[:i]] {
				return invalid("%q is put in the same commit, so nothing can be stored below it", c.key[:i])
			}
		}
		fi, blocker, err := s.lstatKey(c.key)
		switch {
		case err != nil:
			return fmt.Errorf("fs: commit %s: %w", c.key, err)
		case blocker != "":
			if put, ok := final[blocker]; ok && !put {
				if bfi, err := s.root.Lstat(filepath.FromSlash(blocker)); err == nil && bfi.Mode().IsRegular() {
					continue // deleted first, then replaced by a folder
				}
			}
			return invalid("%q is a key, so nothing can be stored below it; delete it in the same commit to turn it into a folder", blocker)
		case fi == nil, fi.Mode().IsRegular(), fi.Mode()&iofs.ModeSymlink != 0:
			// Absent, or replaced: rename replaces a link, it does not follow it.
		case fi.IsDir():
			if err := s.checkEmptied(c.key, final); err != nil {
				return invalid("%v", err)
			}
		default:
			return fmt.Errorf("fs: commit %s: it is not a regular file (%v); remove it", c.key, fi.Mode().Type())
		}
	}
	return nil
}

// checkEmptied reports an error unless the folder at key would hold only
// folders once the commit's deletes are done, so a put can take its place.
func (s *Store) checkEmptied(key string, final map[string]bool) error {
	return iofs.WalkDir(s.root.FS(), key, func(p string, d iofs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if put, ok := final[p]; ok && !put && d.Type().IsRegular() {
			return nil
		}
		return fmt.Errorf("%q is stored below it, so it is a folder; delete the keys below it in the same commit to turn it into a key", p)
	})
}
