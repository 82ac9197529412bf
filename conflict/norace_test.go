//go:build !race

package conflict

// raceEnabled: the scaling test is skipped under the race detector.
const raceEnabled = false
