package fs

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// stage writes each put's value to a temporary file in the log folder,
// where readers never look, rewriting a spare where there is one (see
// spares.go), and returns the files' names (empty for a delete). Nothing
// is fsynced: see apply. On error it removes what it wrote.
func (s *Store) stage(seq uint64, changes []change) ([]string, error) {
	temps := make([]string, len(changes))
	for i, c := range changes {
		if c.del {
			continue
		}
		name, spare := s.tempName(seq, i)
		temps[i] = name
		err := errNotSpare
		if spare {
			err = s.writeSpare(name, c.value)
		}
		if errors.Is(err, errNotSpare) {
			err = s.replaceFile(name, c.value, syncNone)
		}
		if err != nil {
			s.root.Remove(name)
			temps[i] = ""
			s.discard(temps)
			return nil, fmt.Errorf("put %s: %w", c.key, err)
		}
	}
	return temps, nil
}

// discard removes staged files that were not renamed into place. It is
// only tidiness: Open discards temporary files anyway.
func (s *Store) discard(temps []string) {
	for _, t := range temps {
		if t != "" {
			s.root.Remove(t)
		}
	}
}

// apply makes the session's files hold changes, the net effect of logged
// commit seq (or of every record recovery replays), from the files stage
// wrote: with readers held off, deleted keys are removed and the puts
// moved over their keys (see replace), and then the commit's entries are
// dropped from the overlay, so in-process readers see the files once
// they hold the whole commit. A put moved into place leaves its entry in
// temps empty; the old value it displaced becomes a spare. Only the
// applier (or recovery, before it starts) calls apply.
//
// Nothing is fsynced: the commit's record is durable already, and a
// checkpoint fsyncs everything apply touched before the record is
// deleted. apply is idempotent, since it writes final values rather than
// edits, so recovery can run it on whatever a crash left, as often as it
// takes.
func (s *Store) apply(seq uint64, changes []change, temps []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Deletes first, so a put can take the place of a deleted key's folder.
	for _, c := range changes {
		if !c.del {
			continue
		}
		if err := s.removeKey(c.key); err != nil {
			return fmt.Errorf("delete %s: %w", c.key, err)
		}
	}
	for i, c := range changes {
		if c.del {
			continue
		}
		if err := s.hook("put " + c.key); err != nil {
			return err
		}
		swapped, err := s.place(temps[i], c.key)
		if err != nil {
			return fmt.Errorf("put %s: %w", c.key, err)
		}
		if swapped {
			s.keepSpare(temps[i])
		}
		temps[i] = ""
	}
	s.overlay.applied(seq, changes)
	return nil
}

// removeKey removes the file at key, if any, and prunes the folders that
// leaves empty. A key below a link is not a key of this store.
func (s *Store) removeKey(key string) error {
	fi, _, err := s.lstatKey(key)
	switch {
	case errors.Is(err, errLink):
		return nil
	case err != nil:
		return err
	case fi == nil || fi.IsDir():
		return nil
	}
	if err := s.root.Remove(filepath.FromSlash(key)); err != nil {
		return err
	}
	for i := strings.LastIndexByte(key, '/'); i > 0; i = strings.LastIndexByte(key[:i], '/') {
		if s.root.Remove(filepath.FromSlash(key[:i])) != nil {
			break // not empty: keep it and its parents
		}
	}
	return nil
}

// place moves the temporary file temp over key, creating key's folders.
// swapped reports that temp now holds key's old file, a regular one (see
// replace).
func (s *Store) place(temp, key string) (swapped bool, err error) {
	if err := s.mkdirParents(key); err != nil {
		return false, err
	}
	fi, _, err := s.lstatKey(key)
	if err != nil {
		return false, err
	}
	if fi != nil && fi.IsDir() {
		if err := s.removeEmptyTree(key); err != nil {
			return false, err
		}
	}
	swapped, err = s.replace(temp, key, fi != nil && !fi.IsDir())
	if swapped && !fi.Mode().IsRegular() {
		// A link swapped out of key is no spare.
		s.root.Remove(temp)
		swapped = false
	}
	return swapped, err
}

// replace moves the temporary file temp to key, atomically: a reader, even
// in another process, finds either the old value or the new one there,
// never nothing. exists says something (a file or a link) is at key.
//
// Over an existing file it swaps the two with renameat2(RENAME_EXCHANGE),
// rather than renaming over it, and reports swapped: temp then holds the
// old file, which the caller keeps as a spare (see spares.go). On ext4
// (data=ordered, auto_da_alloc, the defaults) a rename over a file also
// forces the new file's data out with the next journal commit, so the
// next commit's record fsync would wait for this commit's files:
// measured, that took a commit of four 4 KB files from about 0.65 ms to
// 1.0-1.4 ms. Those writes belong to the checkpoint, which fsyncs many
// commits' files at once. Where swapping is not available the put is
// renamed over the key.
//
// Paths are absolute: os.Root has no Rename before Go 1.25 (see the
// package doc).
func (s *Store) replace(temp, key string, exists bool) (swapped bool, err error) {
	from, to := filepath.Join(s.dir, temp), filepath.Join(s.dir, filepath.FromSlash(key))
	if exists && !s.noExchange.Load() {
		err := exchange(from, to)
		if err == nil {
			return true, nil
		}
		if errors.Is(err, errors.ErrUnsupported) || errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.EINVAL) {
			s.noExchange.Store(true) // this file system cannot swap: stop trying
		}
		// Any other failure (the key vanished meanwhile, say): the rename
		// below either works or reports the real problem.
	}
	return false, os.Rename(from, to)
}

// mkdirParents creates key's missing folders one at a time, checking each
// existing one is a real folder, so no link is followed on the way.
func (s *Store) mkdirParents(key string) error {
	for i := strings.IndexByte(key, '/'); i >= 0; i = nextSlash(key, i) {
		anc := filepath.FromSlash(key[:i])
		fi, err := s.root.Lstat(anc)
		if isNotExist(err) {
			if err = s.root.Mkdir(anc, 0o700); err == nil {
				continue
			}
			if errors.Is(err, iofs.ErrExist) {
				fi, err = s.root.Lstat(anc) // created meanwhile: check what it is
			}
		}
		switch {
		case err != nil:
			return err
		case fi.Mode()&iofs.ModeSymlink != 0:
			return linkError(key[:i])
		case !fi.IsDir():
			return fmt.Errorf("%s is a file, so it cannot be a folder", key[:i])
		}
	}
	return nil
}

// removeEmptyTree removes the folder at key, which must hold nothing but
// folders once the commit's deletes are done (checkLayout makes sure of it
// before a commit; recovery finds out here).
func (s *Store) removeEmptyTree(key string) error {
	var dirs []string
	err := iofs.WalkDir(s.root.FS(), key, func(p string, d iofs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return fmt.Errorf("%s holds %s, so a value cannot replace it; remove it", key, p)
		}
		dirs = append(dirs, p)
		return nil
	})
	if err != nil {
		return err
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := s.root.Remove(filepath.FromSlash(dirs[i])); err != nil {
			return err
		}
	}
	return nil
}
