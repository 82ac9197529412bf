//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package fs

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
)

// lockFile creates the lock file exclusively: its existence is the lock.
// Without flock a crashed process leaves it behind, so the error says how
// to clear a stale one; it never reports crashed, since a crash's lock
// file is deleted by hand.
func lockFile(root *os.Root, dir string) (f *os.File, crashed bool, err error) {
	if err := checkLockFile(root, dir); err != nil {
		return nil, false, err
	}
	f, err = root.OpenFile(lockName, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, iofs.ErrExist) {
		hint := fmt.Sprintf("; if no refine process is running, a crash left the lock behind: delete %s", filepath.Join(dir, lockName))
		held, err := root.Open(lockName)
		if err != nil {
			return nil, false, lockedError(dir, nil, hint)
		}
		defer held.Close()
		return nil, false, lockedError(dir, held, hint)
	}
	if err != nil {
		return nil, false, fmt.Errorf("fs: open %s: lock: %w", dir, err)
	}
	if err := writeHolder(f); err != nil {
		f.Close()
		root.Remove(lockName)
		return nil, false, fmt.Errorf("fs: open %s: lock: %w", dir, err)
	}
	return f, false, nil
}

// unlockFile releases the lock by removing the file.
func unlockFile(root *os.Root, f *os.File) error {
	return errors.Join(f.Close(), root.Remove(lockName))
}

// shareLock refuses a snapshot of a folder whose lock file exists: here
// its existence is the lock, which a writer holds (or a crash left). It
// takes nothing, and creates and writes nothing.
func shareLock(root *os.Root, dir string) (*os.File, error) {
	if err := checkLockFile(root, dir); err != nil {
		return nil, err
	}
	held, err := root.Open(lockName)
	if isNotExist(err) {
		return nil, nil
	}
	hint := fmt.Sprintf("; if no refine process is running, a crash left the lock behind: delete %s", filepath.Join(dir, lockName))
	if err != nil {
		return nil, lockedError(dir, nil, hint)
	}
	defer held.Close()
	return nil, lockedError(dir, held, hint)
}
