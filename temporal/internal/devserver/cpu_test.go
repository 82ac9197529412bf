package devserver

import (
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		name, stat string
		want       time.Duration
		wantErr    bool
	}{
		{"plain", "4242 (temporal) S 1 4242 4242 0 -1 4194560 100 0 0 0 150 25 0 0 20 0 30 0 1000 1 1 1", 1750 * time.Millisecond, false},
		{"name with spaces and parens", "7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 3 4 0 0", 70 * time.Millisecond, false},
		{"short", "7 (x) R 1 2", 0, true},
		{"no name", "7 x R", 0, true},
		{"not a number", "7 (x) R 1 7 7 0 -1 0 0 0 0 0 a 4 0 0", 0, true},
		{"out of range", "7 (x) R 1 7 7 0 -1 0 0 0 0 0 9223372036854775807 4 0 0", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStat(tc.stat)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("parseStat = %v, %v; want %v (error %t)", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add("4242 (temporal) S 1 4242 4242 0 -1 4194560 100 0 0 0 150 25 0 0 20 0 30 0 1000 1 1 1")
	f.Add("7 (a (b) c) R")
	f.Fuzz(func(t *testing.T, stat string) {
		// Whatever it reads, it reads whole ticks.
		if d, err := parseStat(stat); err == nil && d%(time.Second/ticksPerSecond) != 0 {
			t.Errorf("parseStat(%q) = %v, not a whole number of ticks", stat, d)
		}
	})
}
