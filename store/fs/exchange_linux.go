//go:build linux

package fs

import (
	"os"
	"syscall"
)

// recycles says the store keeps the files that exchange swaps out of keys
// as spares, and rewrites them for later puts (see spares.go): creating a
// file costs far more here than rewriting one.
const recycles = true

// readLock takes a shared flock on a file a read-only Store is reading,
// waiting for a writer rewriting it as a spare; closing f releases it.
func readLock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH)
		if err != syscall.EINTR {
			return err
		}
	}
}

// reusable reports whether the file f, whose FileInfo is fi, may be
// rewritten in place as a spare: a regular file with mode 0600, owned by
// this user (euid), and linked nowhere else (a hard link planted at a key
// must not let a put write outside the folder).
func reusable(fi os.FileInfo, euid int) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && fi.Mode().IsRegular() && fi.Mode().Perm() == 0o600 &&
		st.Nlink == 1 && int(st.Uid) == euid
}

// noFollow makes an open fail on a symbolic link.
const noFollow = syscall.O_NOFOLLOW
