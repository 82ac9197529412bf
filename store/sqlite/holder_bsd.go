//go:build unix && !linux

package sqlite

import "golang.org/x/sys/unix"

// writeLockHolder returns the process ID holding the database's write
// lock, from fcntl F_GETLK, which sees the locks of other processes only.
func writeLockHolder(path string) (int, bool) { return lockHolder(path, unix.F_GETLK) }
