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
func lockFile(root *os.Root, dir string) (*os.File, error) {
	if err := checkLockFile(root, dir); err != nil {
		return nil, err
	}
	f, err := root.OpenFile(lockName, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("fs: open %s: lock: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, lockedError(dir, f, "")
		}
		return nil, fmt.Errorf("fs: open %s: lock %s: %w", dir, lockName, err)
	}
	if err := writeHolder(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("fs: open %s: lock: %w", dir, err)
	}
	return f, nil
}

// unlockFile releases the lock by closing the file.
func unlockFile(_ *os.Root, f *os.File) error {
	return f.Close()
}
