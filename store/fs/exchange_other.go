//go:build !(linux && (amd64 || arm64 || riscv64 || loong64))

package fs

import "errors"

// exchange is renameat2(RENAME_EXCHANGE) where the store knows how to call
// it; elsewhere puts are renamed over their keys.
func exchange(a, b string) error { return errors.ErrUnsupported }
