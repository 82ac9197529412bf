//go:build race

package scaling

// RaceEnabled reports whether the race detector is on.
const RaceEnabled = true
