//go:build !linux

package fs

import (
	"errors"
	"os"
)

// exchange is renameat2(RENAME_EXCHANGE) where the store knows how to call
// it; elsewhere puts are renamed over their keys.
func exchange(a, b string) error { return errors.ErrUnsupported }

// recycles: without exchange there are no spares to rewrite (see spares.go).
const recycles = false

func lockSpare(*os.File) bool   { return false }
func readLock(*os.File) error   { return nil }
func reusable(os.FileInfo) bool { return false }

const noFollow = 0
