//go:build !linux

package fs

import "os"

// datasync is f.Sync where fdatasync(2) is not used: on macOS that is
// F_FULLFSYNC, which the log needs to be durable.
func datasync(f *os.File) error { return f.Sync() }
