package scaling

import (
	"strings"
	"testing"
)

// fakeT records failures instead of failing the real test.
type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Errorf(string, ...any) { f.failed = true }
func (f *fakeT) Helper()               {}
func (f *fakeT) Logf(string, ...any)   {}

func TestLinearPassesLinearAndCatchesQuadratic(t *testing.T) {
	if RaceEnabled || testing.Short() {
		t.Skip("scaling test: runs without -race and -short")
	}
	linear := &fakeT{TB: t}
	Linear(linear, "linear", 1<<14, 16, func(n int) int { return n }, func(n int) { _ = strings.Repeat("x", n) })
	if linear.failed {
		t.Error("linear work reported as super-linear")
	}
	quadratic := &fakeT{TB: t}
	Linear(quadratic, "quadratic", 1<<8, 16, func(n int) int { return n }, func(n int) {
		s := ""
		for range n {
			s += "x" // copies the whole string each time: n² bytes
		}
	})
	if !quadratic.failed {
		t.Error("quadratic work passed as linear")
	}
}
