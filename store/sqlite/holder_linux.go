//go:build linux

package sqlite

import "golang.org/x/sys/unix"

// writeLockHolder returns the process ID holding the database's write
// lock, from fcntl F_OFD_GETLK, which sees the traditional locks SQLite
// takes in every process, this one's included.
func writeLockHolder(path string) (int, bool) { return lockHolder(path, unix.F_OFD_GETLK) }
