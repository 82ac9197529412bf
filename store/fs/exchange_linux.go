//go:build linux && (amd64 || arm64 || riscv64 || loong64)

package fs

import (
	"os"
	"runtime"
	"syscall"
	"unsafe"
)

// sysRenameat2 is renameat2(2)'s number; the frozen syscall package lacks
// it on amd64, and x/sys is not a dependency of this module.
var sysRenameat2 = map[string]uintptr{"amd64": 316, "arm64": 276, "riscv64": 276, "loong64": 276}[runtime.GOARCH]

const renameExchange = 1 << 1 // RENAME_EXCHANGE

// exchange atomically swaps the files at the absolute paths a and b. It
// fails if either is missing, or if the file system cannot swap (the
// caller then renames).
func exchange(a, b string) error {
	pa, err := syscall.BytePtrFromString(a)
	if err != nil {
		return err
	}
	pb, err := syscall.BytePtrFromString(b)
	if err != nil {
		return err
	}
	atFDCWD := -100 // AT_FDCWD; the paths are absolute anyway
	_, _, errno := syscall.Syscall6(sysRenameat2, uintptr(atFDCWD), uintptr(unsafe.Pointer(pa)), uintptr(atFDCWD), uintptr(unsafe.Pointer(pb)), renameExchange, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// recycles says the store keeps the files that exchange swaps out of keys
// as spares, and rewrites them for later puts (see spares.go): creating a
// file costs far more here than rewriting one.
const recycles = true

// lockSpare takes an exclusive flock on a spare about to be rewritten,
// without waiting: false means a reader holds it (see readLocked).
func lockSpare(f *os.File) bool {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}

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
// this user, and linked nowhere else (a hard link planted at a key must
// not let a put write outside the folder).
func reusable(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && fi.Mode().IsRegular() && fi.Mode().Perm() == 0o600 &&
		st.Nlink == 1 && int(st.Uid) == os.Geteuid()
}

// noFollow makes an open fail on a symbolic link.
const noFollow = syscall.O_NOFOLLOW
