// Package readlimit reads the command-line tools' input files with a byte
// limit, so that a device or an endless pipe named by mistake fails at
// once instead of filling memory.
package readlimit

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// MaxInput bounds each file the command-line tools read besides role outputs: the
// spec (--spec), the gap list (--gaps) and the answers file (--answers).
// 16 MiB holds a spec far larger than any prompt budget and some 150,000
// gaps, while a device or an endless pipe named by mistake fails at once
// instead of filling memory. Role outputs given to validate are bounded by
// MaxOutputBytes (1 MiB by default) instead.
const MaxInput = 16 << 20

// ErrTooLarge marks input above its limit.
var ErrTooLarge = errors.New("too large")

// readLimited reads r to its end, or fails with an error wrapping
// ErrTooLarge once it holds more than limit bytes; it never reads more
// than limit+1 bytes. what names the input in the error.
func All(what string, r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", what, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is %w: more than %d bytes, the limit", what, ErrTooLarge, limit)
	}
	return b, nil
}

// readFileLimited reads the file name (which may be a pipe or a device)
// through readLimited. A regular file above the limit fails from its size
// alone, and the error says how large it is.
func File(name string, limit int64) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err // *PathError names the file
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	switch {
	case fi.IsDir():
		return nil, fmt.Errorf("%s is a folder, not a file", name)
	case fi.Mode().IsRegular() && fi.Size() > limit:
		return nil, fmt.Errorf("%s is %w: %d bytes, above the limit of %d bytes", name, ErrTooLarge, fi.Size(), limit)
	}
	return All(name, f, limit)
}
