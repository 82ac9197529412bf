package fs

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"sort"
	"strings"

	"github.com/refine-spec/refine/store"
)

// change is one key's net effect in a commit: the last op on a key decides
// it, since each op replaces the key's whole state.
type change struct {
	key   string
	value []byte
	del   bool
}

// Commit applies ops atomically: after it returns nil every op is durable
// and every read through this Store sees it; after any error, or a crash,
// the folder holds either all of them or none (see the package
// documentation for how). Invalid keys, reserved names and a key that
// would also be a folder of other keys fail with store.ErrInvalidKey
// before anything is written. A context cancelled before the commit point
// stops the commit and applies nothing; after the commit point the commit
// completes.
//
// Commit returns at the commit point, when the commit's log record is
// durable; its values reach the session's files in the background, in
// commit order, and Close waits for them (see applier.go). It waits first
// if many earlier commits are still on their way to the files.
//
// If a commit fails after its commit point (an I/O error while writing
// its record, applying it or checkpointing the log), the error says so,
// here or at the next call, and the Store refuses further use: Close it
// and Open the folder again, which replays the commit from the log.
func (s *Store) Commit(ctx context.Context, ops ...store.Op) error {
	if s.readOnly {
		return fmt.Errorf("fs: commit in %s: %w; open the folder with Open to write", s.dir, ErrReadOnly)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("fs: commit: %w", err)
	}
	if err := store.ValidStoreOps(ops, true, true); err != nil {
		return fmt.Errorf("fs: commit: %w", err)
	}
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	changes := netChanges(ops) // the keys, for messages; appends and copies are resolved below
	if len(changes) == 0 {
		return nil
	}
	if err := s.usableNow("commit " + describe(changes)); err != nil {
		return err
	}
	if err := s.waitForRoom(); err != nil {
		return s.failed("commit "+describe(changes), err)
	}
	ops, err := s.resolveOps(ops)
	if err != nil {
		return fmt.Errorf("fs: commit: %w", err)
	}
	changes = netChanges(ops)
	if err := s.checkLayout(changes); err != nil {
		return err
	}
	seq := s.nextSeq
	record := encodeRecord(seq, changes)
	committed, inFile, err := s.appendRecord(ctx, seq, record)
	if !committed {
		return fmt.Errorf("fs: commit %s: %w", describe(changes), err)
	}
	// Past the commit point: the record is the commit, whatever happens
	// to the files from here on.
	s.nextSeq = seq + 1
	// The caller may change its values once Commit returns: the overlay
	// and the applier take them from the record, which nothing changes.
	var owned []change
	if err == nil {
		_, owned, err = decodeRecord(record)
	}
	if err == nil {
		err = s.hook("recorded")
	}
	if err != nil {
		// The files may not match the log now, so a checkpoint (Close's
		// among them) must not run: recovery at the next Open puts things
		// right.
		s.mu.Lock()
		s.broken = err
		s.mu.Unlock()
		return fmt.Errorf("fs: commit %s: %w; the commit is in the log and completes when the folder is opened again: Close this store and Open %s",
			describe(changes), err, s.dir)
	}
	s.mu.Lock()
	s.overlay.add(seq, owned)
	s.mu.Unlock()
	s.apl.enqueue(queued{seq: seq, size: len(record), file: inFile, changes: owned})
	return nil
}

// usableNow is usable with s.mu taken.
func (s *Store) usableNow(op string) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.usable(op)
}

// failed reports an error from the applier, which breaks the Store: as
// usable words it when it can.
func (s *Store) failed(op string, err error) error {
	if uerr := s.usableNow(op); uerr != nil {
		return uerr
	}
	return fmt.Errorf("fs: %s: %w", op, err)
}

// resolveOps turns each append into a put of the key's whole new value
// (its value before the commit, or as an earlier op of the commit left
// it, with the appended bytes after it) and each copy into a put of its
// source's value at that point. The log then records whole values as
// ever, so recovery needs nothing new; what an append or a copy saves is
// the caller's work and the bytes it hands over, and, for a key that
// grows by small records, a new file per record. A key's value before the
// commit may still be in the overlay. A copy of an absent key fails the
// commit with an error wrapping store.ErrNotFound. s.commitMu must be
// held.
func (s *Store) resolveOps(ops []store.Op) ([]store.Op, error) {
	has := false
	for _, op := range ops {
		has = has || op.Kind == store.OpAppend || op.Kind == store.OpCopy
	}
	if !has {
		return ops, nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]store.Op, len(ops))
	staged := map[string][]byte{} // key → value as the commit so far leaves it; nil: deleted
	current := func(key string) ([]byte, bool, error) {
		if v, ok := staged[key]; ok {
			return v, v != nil, nil
		}
		b, err := s.readLogical(key)
		if errors.Is(err, store.ErrNotFound) {
			return nil, false, nil
		}
		return b, err == nil, err
	}
	for i, op := range ops {
		switch op.Kind {
		case store.OpPut:
			v := op.Value
			if v == nil {
				v = []byte{} // an empty value, not a deletion
			}
			staged[op.Key] = v
			out[i] = op
		case store.OpDelete:
			staged[op.Key] = nil
			out[i] = op
		case store.OpAppend:
			base, _, err := current(op.Key)
			if err != nil {
				return nil, fmt.Errorf("append %s: %w", op.Key, err)
			}
			v := make([]byte, 0, len(base)+len(op.Value))
			v = append(append(v, base...), op.Value...)
			staged[op.Key] = v
			out[i] = store.Put(op.Key, v)
		case store.OpCopy:
			v, ok, err := current(op.From)
			if err != nil {
				return nil, fmt.Errorf("copy %s to %s: %w", op.From, op.Key, err)
			}
			if !ok {
				return nil, fmt.Errorf("copy %s to %s: %w", op.From, op.Key, store.ErrNotFound)
			}
			staged[op.Key] = v
			out[i] = store.Put(op.Key, v)
		}
	}
	return out, nil
}

func netChanges(ops []store.Op) []change {
	last := make(map[string]int, len(ops))
	for i, op := range ops {
		last[op.Key] = i
	}
	changes := make([]change, 0, len(last))
	for k, i := range last {
		changes = append(changes, change{key: k, value: ops[i].Value, del: ops[i].Kind == store.OpDelete})
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
// keys, a put below a link. It judges the state the commit would leave,
// after the commits still on their way to the files: a key pending in the
// overlay is what the overlay says; other keys are what the files say,
// unless a pending key is above or below one of the commit's puts, in
// which case it waits for the files to catch up (rare: a key turned into
// a folder, or the reverse). s.commitMu must be held.
func (s *Store) checkLayout(changes []change) error {
	s.mu.RLock()
	entangled := s.overlay.entangles(changes)
	s.mu.RUnlock()
	if entangled {
		if err := s.hook("wait for the files"); err != nil {
			return err
		}
		if err := s.flush(); err != nil {
			return s.failed("commit "+describe(changes), err)
		}
	}
	// Held throughout, so no commit is half applied while the files are
	// looked at.
	s.mu.RLock()
	defer s.mu.RUnlock()
	fs := s.folders() // each folder looked up once for the whole commit
	defer fs.close()
	final := make(map[string]bool, len(changes)) // key → put (true) or delete
	for _, c := range changes {
		final[c.key] = !c.del
	}
	for _, c := range changes {
		if c.del {
			continue // removing never needs room
		}
		invalid := func(format string, args ...any) error {
			return fmt.Errorf("fs: commit %s: %w: %s", c.key, store.ErrInvalidKey, fmt.Sprintf(format, args...))
		}
		for i := strings.IndexByte(c.key, '/'); i >= 0; i = nextSlash(c.key, i) {
			if final[c.key[:i]] {
				return invalid("%q is put in the same commit, so nothing can be stored below it", c.key[:i])
			}
		}
		fi, blocker, err := fs.lstatKey(c.key)
		p, isPending := s.overlay.lookup(c.key)
		switch {
		case err != nil:
			return fmt.Errorf("fs: commit %s: %w", c.key, err)
		case blocker != "":
			if put, ok := final[blocker]; ok && !put {
				if bfi, _, err := fs.lstatKey(blocker); err == nil && bfi != nil && bfi.Mode().IsRegular() {
					continue // deleted first, then replaced by a folder
				}
			}
			return invalid("%q is a key, so nothing can be stored below it; delete it in the same commit to turn it into a folder", blocker)
		case isPending && !p.del:
			// A value on its way to key: a file, whatever is there now.
		case fi == nil, fi.Mode().IsRegular(), fi.Mode()&iofs.ModeSymlink != 0:
			// Absent, or replaced: rename replaces a link, it does not follow it.
			// A pending delete leaves it absent.
		case fi.IsDir():
			if err := s.checkEmptied(c.key, final); err != nil {
				return invalid("%v", err)
			}
		case isPending:
			// Not a regular file, but a pending delete removes it.
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
