package langchain

import (
	"net/http"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	date := now.Add(-10 * time.Second).Format(http.TimeFormat) // server clock 10s behind
	tests := []struct {
		name, value, date string
		want              time.Duration
	}{
		{name: "empty", want: 0},
		{name: "seconds", value: "2", want: 2 * time.Second},
		{name: "spaces", value: " 30 ", want: 30 * time.Second},
		{name: "zero", value: "0", want: 0},
		{name: "negative", value: "-5", want: 0},
		{name: "huge", value: "999999999999", want: maxAsked},
		{name: "above the cap", value: "172800", want: 48 * time.Hour},
		{name: "garbage", value: "soon", want: 0},
		{name: "date vs local clock", value: now.Add(90 * time.Second).Format(http.TimeFormat), want: 90 * time.Second},
		{name: "date vs server Date", value: now.Add(90 * time.Second).Format(http.TimeFormat), date: date, want: 100 * time.Second},
		{name: "date in the past", value: now.Add(-time.Minute).Format(http.TimeFormat), want: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseRetryAfter(tc.value, tc.date, now); got != tc.want {
				t.Errorf("parseRetryAfter(%q, %q) = %v, want %v", tc.value, tc.date, got, tc.want)
			}
		})
	}
}

func TestRetryAfterMs(t *testing.T) {
	tests := []struct {
		h    http.Header
		want time.Duration
	}{
		{h: http.Header{"Retry-After-Ms": {"250"}}, want: 250 * time.Millisecond},
		{h: http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"1"}}, want: 250 * time.Millisecond},
		{h: http.Header{"Retry-After-Ms": {"x"}, "Retry-After": {"1"}}, want: time.Second},
		{h: http.Header{}, want: 0},
	}
	for _, tc := range tests {
		if got := retryAfter(tc.h); got != tc.want {
			t.Errorf("retryAfter(%v) = %v, want %v", tc.h, got, tc.want)
		}
	}
}

func TestRedactURL(t *testing.T) {
	if got, want := redactURLString("https://user:pw@h:8/v1/chat?key=k#f"), "https://h:8/v1/chat"; got != want {
		t.Errorf("redactURLString = %q, want %q", got, want)
	}
}
