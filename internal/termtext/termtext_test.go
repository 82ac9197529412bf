package termtext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	tests := []struct {
		name, in, want, line string
	}{
		{"plain", "GAP-FLOW-001: retries", "GAP-FLOW-001: retries", "GAP-FLOW-001: retries"},
		{"newline and tab kept", "a\n\tb", "a\n\tb", `a\n\tb`},
		{"OSC title and clear", "\x1b]0;pwned\a\x1b[2J", `\x1b]0;pwned\x07\x1b[2J`, `\x1b]0;pwned\x07\x1b[2J`},
		{"carriage return", "ok\rfake", `ok\rfake`, `ok\rfake`},
		{"NUL and DEL", "a\x00b\x7f", `a\x00b\x7f`, `a\x00b\x7f`},
		{"C1 CSI as rune", "a\u009b2J", `a\u009b2J`, `a\u009b2J`},
		{"C1 as raw byte", "a\x9b2J", `a\x9b2J`, `a\x9b2J`},
		{"bidi override", "abc\u202edcba", `abc\u202edcba`, `abc\u202edcba`},
		{"bidi isolate", "\u2066x\u2069", `\u2066x\u2069`, `\u2066x\u2069`},
		{"non-ASCII text kept", "résumé — 日本", "résumé — 日本", "résumé — 日本"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Escape(tt.in); got != tt.want {
				t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if got := Line(tt.in); got != tt.line {
				t.Errorf("Line(%q) = %q, want %q", tt.in, got, tt.line)
			}
		})
	}
}

// safe reports whether s holds nothing a terminal acts on, newlines and
// tabs allowed unless oneLine.
func safe(s string, oneLine bool) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unsafe(r, oneLine) {
			return false
		}
	}
	return true
}

func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b]0;t\a\x1b[2J", "a\rb\n\tc", "\u202e\u2066", "\x9b\xff\xc3", "\\x1b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, l := Escape(s), Line(s)
		if !safe(e, false) {
			t.Fatalf("Escape(%q) = %q still holds a control character", s, e)
		}
		if !safe(l, true) || strings.ContainsAny(l, "\n\t") {
			t.Fatalf("Line(%q) = %q still holds a control character", s, l)
		}
		if safe(s, false) != (e == s) {
			t.Fatalf("Escape(%q) = %q: changed safe text, or kept unsafe text", s, e)
		}
		if Escape(e) != e || Line(l) != l {
			t.Fatalf("escaping is not idempotent on %q", s)
		}
	})
}

func TestIndexLine(t *testing.T) {
	tests := []struct {
		in string
		i  int
		r  rune
	}{
		{"plain title", -1, 0},
		{"a\x00b", 1, 0},
		{"ab\tc", 2, '\t'},
		{"é\u202e", 2, 0x202e},
		{"a\xff", 1, utf8.RuneError},
	}
	for _, tt := range tests {
		if i, r := IndexLine(tt.in); i != tt.i || r != tt.r {
			t.Errorf("IndexLine(%q) = %d, %U; want %d, %U", tt.in, i, r, tt.i, tt.r)
		}
	}
}
