package refineotel_test

import (
	"testing"

	"go.opentelemetry.io/otel/trace"

	refineotel "github.com/refine-spec/refine/otel"
)

func TestParseRunLink(t *testing.T) {
	tests := []struct {
		in   string
		ok   bool
		want string // the link formatted back
	}{
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", true, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", true, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"},
		{"", false, ""},
		{"00-00000000000000000000000000000000-00f067aa0ba902b7-01", false, ""},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", false, ""},
		{"zz-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false, ""},
		{"run-1", false, ""},
	}
	for _, tt := range tests {
		sc, err := refineotel.ParseRunLink(tt.in)
		if (err == nil) != tt.ok {
			t.Errorf("ParseRunLink(%q) error %v, want ok=%v", tt.in, err, tt.ok)
			continue
		}
		if got := refineotel.FormatRunLink(sc); got != tt.want {
			t.Errorf("FormatRunLink(ParseRunLink(%q)) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := refineotel.FormatRunLink(trace.SpanContext{}); got != "" {
		t.Errorf("FormatRunLink(invalid) = %q, want empty", got)
	}
}

func FuzzParseRunLink(f *testing.F) {
	f.Add("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	f.Add("")
	f.Add("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra")
	f.Fuzz(func(t *testing.T, s string) {
		sc, err := refineotel.ParseRunLink(s)
		if err != nil {
			return
		}
		if !sc.IsValid() {
			t.Fatalf("ParseRunLink(%q) accepted an invalid span context", s)
		}
		again, err := refineotel.ParseRunLink(refineotel.FormatRunLink(sc))
		if err != nil || again.TraceID() != sc.TraceID() || again.SpanID() != sc.SpanID() || again.TraceFlags() != sc.TraceFlags() {
			t.Fatalf("round trip of %q: %v, %v", s, again, err)
		}
	})
}
