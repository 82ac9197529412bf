package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// Two pairs of instant sessions in a folder run creates: each pair
// printed, then the three summaries.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(t.Context(), []string{"-pairs", "2", "-latency", "0s", "-dir", filepath.Join(t.TempDir(), "new")}, &out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"\n   1  fs ", "\n   2  eino ", "fs÷eino       min–median–max"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	if err := run(t.Context(), []string{"-pairs", "0"}, &out); err == nil {
		t.Error("-pairs 0 accepted")
	}
}
