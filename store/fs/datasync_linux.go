//go:build linux

package fs

import (
	"os"

	"golang.org/x/sys/unix"
)

// datasync flushes f's data, and only the metadata needed to read it back
// (fdatasync(2)): for the log file, whose size and blocks never change,
// that is the data alone.
func datasync(f *os.File) error {
	for {
		err := unix.Fdatasync(int(f.Fd()))
		if err != unix.EINTR {
			return err
		}
	}
}
