//go:build linux

package fs

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// syncsFileSystems says a checkpoint syncs the file systems its files are
// on, one syncfs(2) each, rather than fsyncing every file and folder (see
// syncTouched).
const syncsFileSystems = true

// syncfs flushes the whole file system f is on: every file's data and
// metadata, every folder's entries (syncfs(2); since Linux 5.8 it reports
// the file system's write-back errors).
func syncfs(f *os.File) error {
	for {
		err := unix.Syncfs(int(f.Fd()))
		if err != unix.EINTR {
			return err
		}
	}
}

// device returns the file system fi is on.
func device(fi os.FileInfo) (uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Dev), true
}
