//go:build linux && (amd64 || arm64 || riscv64 || loong64)

package fs

import (
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
