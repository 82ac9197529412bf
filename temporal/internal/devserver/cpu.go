package devserver

import (
	"fmt"
	"math"
	"os"
	"strings"
	"time"
)

// ticksPerSecond is Linux's USER_HZ, the unit of /proc/PID/stat's times
// (100 on every architecture Go supports).
const ticksPerSecond = 100

// CPU returns the CPU time (user and system) the server process has used
// so far, in steps of 10 ms, read from /proc: an error where there is no
// /proc (not Linux).
func (s Server) CPU() (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.pid))
	if err != nil {
		return 0, fmt.Errorf("dev server CPU time: %w", err)
	}
	return parseStat(string(b))
}

// parseStat reads utime and stime (fields 14 and 15) from a
// /proc/PID/stat line; the command name (field 2) is in parentheses and
// may hold spaces, so fields are counted after its closing one.
func parseStat(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("dev server CPU time: no command name in %q", stat)
	}
	f := strings.Fields(stat[i+1:]) // from field 3 on
	if len(f) < 13 {
		return 0, fmt.Errorf("dev server CPU time: %d fields in %q, want at least 15", len(f)+2, stat)
	}
	var user, sys int64
	if _, err := fmt.Sscan(f[11], &user); err != nil {
		return 0, fmt.Errorf("dev server CPU time: utime %q: %w", f[11], err)
	}
	if _, err := fmt.Sscan(f[12], &sys); err != nil {
		return 0, fmt.Errorf("dev server CPU time: stime %q: %w", f[12], err)
	}
	if user < 0 || sys < 0 || user > math.MaxInt64/int64(time.Second)-sys {
		return 0, fmt.Errorf("dev server CPU time: utime %d and stime %d out of range", user, sys)
	}
	return time.Duration(user+sys) * time.Second / ticksPerSecond, nil
}
