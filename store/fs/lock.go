package fs

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/refine-spec/refine/store"
)

// checkLockFile refuses a lock file that is not a regular file: opening a
// planted link would truncate whatever it points to.
func checkLockFile(root *os.Root, dir string) error {
	fi, err := root.Lstat(lockName)
	if err != nil || fi.Mode().IsRegular() {
		return nil // absent is fine; other errors surface when opening it
	}
	return fmt.Errorf("fs: open %s: %s is not a regular file (%v); remove it", dir, filepath.Join(dir, lockName), fi.Mode().Type())
}

// writeHolder records this process in the lock file, for the error another
// Open shows.
func writeHolder(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return err
}

// holderLeft reports whether the lock file still names a holder: one
// that stopped without Close, which empties it.
func holderLeft(f *os.File) bool {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	_, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	return err == nil
}

// lockedError names the folder, who holds it when known, and what to do.
func lockedError(dir string, f io.Reader, hint string) error {
	lockPath := filepath.Join(dir, lockName)
	who := "another process holds " + lockPath
	if f != nil {
		b, _ := io.ReadAll(io.LimitReader(f, 32))
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			who = fmt.Sprintf("process %d holds %s", pid, lockPath)
			if pid == os.Getpid() {
				return fmt.Errorf("fs: open %s: %w: this process already has it open; Close that Store first", dir, store.ErrLocked)
			}
		}
	}
	return fmt.Errorf("fs: open %s: %w: %s; wait for that run to finish (refine status --dir %s shows it meanwhile)%s", dir, store.ErrLocked, who, dir, hint)
}
