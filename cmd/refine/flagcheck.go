package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/rollback"
)

// intFlagRange is the usable values of a numeric flag: at least min, and
// at most max when max > 0.
type intFlagRange struct{ min, max int }

// intFlagRanges are the numeric flags the session's settings take, with
// the values Config.Validate accepts. A flag given on the command line is
// checked here, so its error names the flag (the library's names the Go
// field) and comes before anything is created or changed (#40).
var intFlagRanges = map[string]intFlagRange{
	"max-rounds":         {1, refine.MaxRoundsLimit},
	"parallel":           {1, 0},
	"gaps-per-round":     {1, 0},
	"rollback-limit":     {0, 0},
	"analysis-threshold": {1, 0},
	"backup-retention":   {1, 0},
	"transport-retries":  {0, 0},
}

// positiveDurationFlags must be above zero when given.
var positiveDurationFlags = map[string]bool{"timeout": true, "backoff-base": true}

// rollbackModeNames are --rollback-mode's values as its help writes them.
const rollbackModeNames = "interactive, auto-retry or strict"

// checkFlagValues checks the values of the flags given on fl's command
// line; the error names the first bad one and what it wants.
func checkFlagValues(fl *flag.FlagSet) error {
	var err error
	fl.Visit(func(f *flag.Flag) {
		if err != nil {
			return
		}
		v := f.Value.String()
		if r, ok := intFlagRanges[f.Name]; ok {
			n, _ := strconv.Atoi(v)
			switch {
			case r.max > 0 && (n < r.min || n > r.max):
				err = fmt.Errorf("--%s %d: want %d to %d", f.Name, n, r.min, r.max)
			case n < r.min && r.min == 0:
				err = fmt.Errorf("--%s %d: want 0 or more", f.Name, n)
			case n < r.min:
				err = fmt.Errorf("--%s %d: want at least %d", f.Name, n, r.min)
			}
			return
		}
		if positiveDurationFlags[f.Name] {
			if d, _ := time.ParseDuration(v); d <= 0 {
				err = fmt.Errorf("--%s %s: want a positive duration (30s, 5m)", f.Name, v)
			}
			return
		}
		if f.Name == "rollback-mode" {
			if _, perr := rollback.ParseMode(v); perr != nil {
				err = fmt.Errorf("--rollback-mode %s: want %s", strings.TrimSpace(v), rollbackModeNames)
			}
		}
	})
	return err
}
