package rollback

import (
	"slices"
)

// AvailableTargets returns the rounds a session at round `current` can be
// rolled back to, newest first: every round r < current whose three backups
// (status, decisions and state) are all present in keys. Round r means "the
// state as it was after round r"; 0 is the state before round 1.
func AvailableTargets(current int, keys []string) []int {
	have := map[int]int{}
	for _, k := range keys {
		if _, n, ok := ParseBackupKey(k); ok && n < current {
			have[n]++
		}
	}
	var out []int
	for n, c := range have {
		if c == len(backupKinds()) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	slices.Reverse(out)
	return out
}
