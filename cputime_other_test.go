//go:build !linux

package refine_test

import "time"

var processStart = time.Now()

// threadCPU falls back to wall time where the thread's CPU time is not
// at hand.
func threadCPU() time.Duration { return time.Since(processStart) }
