package anthropic

import (
	"net/http"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		header http.Header
		want   time.Duration
	}{
		{http.Header{}, 0},
		{http.Header{"Retry-After": {"7"}}, 7 * time.Second},
		{http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond},
		{http.Header{"Retry-After": {"-3"}}, 0},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{"Retry-After-Ms": {"1500"}, "Retry-After": {"9"}}, 1500 * time.Millisecond},
		{http.Header{"Retry-After": {"Thu, 01 Jan 2026 12:00:30 GMT"}}, 30 * time.Second},
		{http.Header{"Retry-After": {"Thu, 01 Jan 2026 12:00:30 GMT"}, "Date": {"Thu, 01 Jan 2026 12:00:20 GMT"}}, 10 * time.Second},
	}
	for _, tt := range tests {
		if got := retryAfter(tt.header, now); got != tt.want {
			t.Errorf("retryAfter(%v) = %v, want %v", tt.header, got, tt.want)
		}
	}
}

func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"7", "0.5", "-1", "1e309", "NaN", "Thu, 01 Jan 2026 12:00:30 GMT", ""} {
		f.Add(s, "12")
	}
	f.Fuzz(func(t *testing.T, v, ms string) {
		d := retryAfter(http.Header{"Retry-After": {v}, "Retry-After-Ms": {ms}}, time.Unix(0, 0))
		if d < 0 {
			t.Fatalf("negative hint %v for %q / %q", d, v, ms)
		}
	})
}
