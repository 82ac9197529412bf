// Package scaling checks in tests that work grows linearly with its input:
// it measures the work at two sizes and compares the growth of the bytes
// allocated (deterministic, immune to machine load) and of the best-of-three
// time against the growth of the input. Quadratic code fails by a wide
// margin; linear code passes on a loaded machine.
//
// Timing is meaningless under the race detector, so Linear skips there;
// CI runs these tests in a separate pass without -race.
package scaling

import (
	"runtime"
	"testing"
	"time"
)

// Linear builds inputs of size n and factor*n with build, runs work on
// each (only work is measured), and fails t when the bytes allocated grow
// more than 1.5×factor or the best-of-five time more than factor²/2. A
// quadratic algorithm grows factor² (256× for factor 16, against 16× for
// linear code): allocations, which machine load does not disturb, are the
// precise check; time is the coarse one, with room for a loaded machine.
func Linear[T any](t testing.TB, name string, n, factor int, build func(size int) T, work func(T)) {
	t.Helper()
	if RaceEnabled {
		t.Skipf("%s: scaling test skipped under the race detector; CI runs it without -race", name)
	}
	if testing.Short() {
		t.Skipf("%s: scaling test skipped with -short", name)
	}
	small, large := build(n), build(n*factor)
	ts, as := measure(func() { work(small) })
	tl, al := measure(func() { work(large) })
	f := float64(factor)
	// A constant 64 KiB of slack: tiny allocations (a few buffers) say
	// nothing about growth.
	if float64(al) > 1.5*f*float64(as)+64<<10 {
		t.Errorf("%s: allocations grew %.1f× for %d× the input (%d → %d bytes): not linear", name, float64(al)/float64(as), factor, as, al)
	}
	// Below a few microseconds the clock is too coarse to compare.
	if ts > 20*time.Microsecond && float64(tl) > f*f/2*float64(ts) {
		t.Errorf("%s: time grew %.1f× for %d× the input (%v → %v): not linear", name, float64(tl)/float64(ts), factor, ts, tl)
	}
	t.Logf("%s: ×%d input → time ×%.1f, allocations ×%.1f", name, factor, float64(tl)/float64(max(ts, 1)), float64(al)/float64(max(as, 1)))
}

// measure returns the best of five wall times and the bytes allocated by
// one run of work.
func measure(work func()) (best time.Duration, alloc uint64) {
	best = time.Duration(1<<63 - 1)
	for range 5 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		start := time.Now()
		work()
		best = min(best, time.Since(start))
		runtime.ReadMemStats(&after)
		alloc = after.TotalAlloc - before.TotalAlloc
	}
	return best, alloc
}
