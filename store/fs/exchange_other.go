//go:build !linux

package fs

import "os"

// recycles: without exchange there are no spares to rewrite (see spares.go).
const recycles = false

func lockSpare(*os.File) bool        { return false }
func readLock(*os.File) error        { return nil }
func reusable(os.FileInfo, int) bool { return false }

const noFollow = 0
