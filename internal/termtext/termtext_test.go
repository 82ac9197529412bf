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
		{"bidi override", "Offset \u202eDETAVITCA\u202c", "Offset <U+202E>DETAVITCA<U+202C>", "Offset <U+202E>DETAVITCA<U+202C>"},
		{"bidi isolate", "\u2066x\u2069", "<U+2066>x<U+2069>", "<U+2066>x<U+2069>"},
		{"bidi embedding", "\u202ax\u202b", "<U+202A>x<U+202B>", "<U+202A>x<U+202B>"},
		{"RTL with marks kept", "שלום\u200f, עולם\u200e (\u061c)", "שלום\u200f, עולם\u200e (\u061c)", "שלום\u200f, עולם\u200e (\u061c)"},
		{"NEL", "a\u0085b", `a\u0085b`, `a\u0085b`},
		{"CRLF ends a line", "a\r\nb\r", "a\r\nb\\r", `a\r\nb\r`},
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
// tabs (and carriage returns before newlines) allowed unless oneLine.
func safe(s string, oneLine bool) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for i, r := range s {
		if unsafeAt(s, i, r, oneLine) {
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
		{"RLM\u200f kept", -1, 0},
		{"a\xff", 1, utf8.RuneError},
	}
	for _, tt := range tests {
		if i, r := IndexLine(tt.in); i != tt.i || r != tt.r {
			t.Errorf("IndexLine(%q) = %d, %U; want %d, %U", tt.in, i, r, tt.i, tt.r)
		}
	}
}

func TestMarkup(t *testing.T) {
	tests := []struct{ in, want string }{
		{"<p>plain</p>", "<p>plain</p>"},
		{"<p>Offset \u202eDETAVITCA\u202c</p>", "<p>Offset &lt;U+202E&gt;DETAVITCA&lt;U+202C&gt;</p>"},
		{`<a title="x` + "\u2066" + `">` + "\x1b[2J\u009b\u0085\a\rFAKE" + `</a>`, `<a title="x&lt;U+2066&gt;">\x1b[2J\u009b\u0085\x07\rFAKE</a>`},
		{"<pre>a\r\n\tb \u200f</pre>\n", "<pre>a\r\n\tb \u200f</pre>\n"},
		{"bad \xff byte", `bad \xff byte`},
	}
	for _, tt := range tests {
		if got := string(Markup([]byte(tt.in))); got != tt.want {
			t.Errorf("Markup(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzMarkup(f *testing.F) {
	for _, s := range []string{"<p>x</p>", "\u202e<b>\x1b</b>", "a\r\nb\rc", "\x9b\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := string(Markup([]byte(s)))
		if !safe(out, false) {
			t.Fatalf("Markup(%q) = %q still holds a control character", s, out)
		}
		if strings.Count(out, "<") != strings.Count(s, "<") || strings.Count(out, ">") != strings.Count(s, ">") {
			t.Fatalf("Markup(%q) = %q adds markup", s, out)
		}
		if safe(s, false) != (out == s) || string(Markup([]byte(out))) != out {
			t.Fatalf("Markup(%q) = %q: changed safe markup, kept unsafe markup, or is not idempotent", s, out)
		}
	})
}
