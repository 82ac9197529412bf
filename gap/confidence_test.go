package gap

import "testing"

func TestConfidenceKnown(t *testing.T) {
	tests := []struct {
		c    Confidence
		want bool
	}{
		{ConfidenceHigh, true},
		{ConfidenceMedium, true},
		{ConfidenceLow, true},
		{"", false},
		{"high", false}, // levels are written in capitals
		{"pretty sure", false},
	}
	for _, tt := range tests {
		if got := tt.c.Known(); got != tt.want {
			t.Errorf("Confidence(%q).Known() = %v, want %v", tt.c, got, tt.want)
		}
	}
}
