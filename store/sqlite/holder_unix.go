//go:build unix

package sqlite

import (
	"os"

	"golang.org/x/sys/unix"
)

// lockHolder asks fcntl (cmd F_GETLK or F_OFD_GETLK) who holds the write
// lock bytes SQLite takes, in the -shm file (WAL) then in the database
// file (rollback journal).
func lockHolder(path string, cmd int) (int, bool) {
	for _, l := range []struct {
		file     string
		start, n int64
	}{{path + "-shm", walWriteLock, 1}, {path, pendingByte, 2}} {
		f, err := os.Open(l.file)
		if err != nil {
			continue
		}
		lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: l.start, Len: l.n}
		err = unix.FcntlFlock(f.Fd(), cmd, &lk)
		f.Close()
		if err == nil && lk.Type != unix.F_UNLCK && lk.Pid > 0 {
			return int(lk.Pid), true
		}
	}
	return 0, false
}
