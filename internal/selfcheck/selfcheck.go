// Package selfcheck says whether the engine checks its own caches and
// kept writes against whole recomputations: in test binaries, unless they
// run benchmarks (a check is a whole encoding). The driver asks it once
// per session and hands the answer to the decisions, which import neither
// testing nor flag.
package selfcheck

import (
	"flag"
	"testing"
)

// Enabled reports whether self-checks are on: in a test binary that runs
// no benchmark.
func Enabled() bool {
	if !testing.Testing() {
		return false
	}
	bench := flag.Lookup("test.bench")
	return bench == nil || bench.Value.String() == ""
}
