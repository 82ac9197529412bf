//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package fs

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockFile takes an flock(2) on the lock file. The kernel releases it when
// the process dies, so a crash never leaves the folder locked. The file
// itself stays: removing it would let two processes lock different files.
// A holder that closes cleanly empties the file first (Close), so a holder still
// named in it when the lock is taken stopped without closing: crashed
// reports that.
func lockFile(root *os.Root, dir string) (f *os.File, crashed bool, err error) {
	if err := checkLockFile(root, dir); err != nil {
		return nil, false, err
	}
	f, err = root.OpenFile(lockName, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false, fmt.Errorf("fs: open %s: lock: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, false, lockedError(dir, f, "")
		}
		return nil, false, fmt.Errorf("fs: open %s: lock %s: %w", dir, lockName, err)
	}
	crashed = holderLeft(f)
	if err := writeHolder(f); err != nil {
		f.Close()
		return nil, false, fmt.Errorf("fs: open %s: lock: %w", dir, err)
	}
	return f, crashed, nil
}

// unlockFile releases the lock by closing the file.
func unlockFile(_ *os.Root, f *os.File) error {
	return f.Close()
}

// shareLock takes the lock file's flock shared, for a snapshot: no
// writer opens the folder while it is held, and a writer holding it
// refuses the snapshot. A folder without a lock file was never opened by
// a writer: nothing is taken and f is nil. It creates and writes nothing.
func shareLock(root *os.Root, dir string) (f *os.File, err error) {
	if err := checkLockFile(root, dir); err != nil {
		return nil, err
	}
	f, err = root.OpenFile(lockName, os.O_RDONLY|noFollow, 0)
	if isNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("fs: open %s: lock: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, lockedError(dir, f, "")
		}
		return nil, fmt.Errorf("fs: open %s: lock %s: %w", dir, lockName, err)
	}
	return f, nil
}
