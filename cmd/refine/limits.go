package main

import (
	"io"

	"github.com/refine-spec/refine/internal/readlimit"
)

// maxInputBytes bounds each file the CLI reads besides role outputs (see
// readlimit.MaxInput).
const maxInputBytes = readlimit.MaxInput

// errTooLarge marks input above its limit.
var errTooLarge = readlimit.ErrTooLarge

func readLimited(what string, r io.Reader, limit int64) ([]byte, error) {
	return readlimit.All(what, r, limit)
}

func readFileLimited(name string, limit int64) ([]byte, error) { return readlimit.File(name, limit) }
