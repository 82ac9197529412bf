// Package termtext makes untrusted text safe to print on a terminal.
//
// Text that comes from an LLM, a backend's error message or a file the user
// was handed can carry bytes a terminal obeys instead of showing: an escape
// sequence (ESC) can retitle the window, clear the screen or move the
// cursor, a carriage return can overwrite what the line showed, a bell
// rings, and the Unicode bidirectional overrides reorder what follows them.
// A model could so draw a fake question over the real one. Escape replaces
// each such character with a visible Go-style escape (\x1b, \r, \u202e), so
// the text is shown, never obeyed.
package termtext

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Escape returns s with every character a terminal would act on replaced
// by a visible escape, keeping newlines and tabs. It escapes the C0 control
// characters other than '\n' and '\t' (ESC, BEL, CR, NUL, backspace…), DEL,
// the C1 control characters U+0080-U+009F, the bidirectional formatting
// characters (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069) and
// every byte that is not valid UTF-8 (a lone 0x9B is a C1 CSI to a terminal
// in 8-bit mode). Text with none of them is returned unchanged.
func Escape(s string) string { return escape(s, false) }

// Line is Escape for text shown on one line (a title, a label, a table
// cell): it escapes newlines and tabs too, so the text cannot start a line
// of its own that looks like the program's output.
func Line(s string) string { return escape(s, true) }

func escape(s string, oneLine bool) string {
	i := firstUnsafe(s, oneLine)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unsafe(r, oneLine):
			writeEscape(&b, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// firstUnsafe returns the index of the first byte of s to escape, or -1.
func firstUnsafe(s string, oneLine bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				if oneLine || (c != '\n' && c != '\t') {
					return i
				}
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || unsafe(r, oneLine) {
			return i
		}
		i += size
	}
	return -1
}

// unsafe reports whether the terminal could act on r.
func unsafe(r rune, oneLine bool) bool {
	switch {
	case r == '\n' || r == '\t':
		return oneLine
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f,
		r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

func writeEscape(b *strings.Builder, r rune) {
	switch r {
	case '\n':
		b.WriteString(`\n`)
	case '\t':
		b.WriteString(`\t`)
	case '\r':
		b.WriteString(`\r`)
	default:
		if r < 0x80 {
			fmt.Fprintf(b, `\x%02x`, r)
		} else {
			fmt.Fprintf(b, `\u%04x`, r)
		}
	}
}

// IndexLine returns the byte index in s of the first character [Line]
// would escape, and that character (utf8.RuneError for a byte that is not
// UTF-8), or -1 and 0 when there is none. Use it to refuse such text
// where it is input, not output (a title in a file the user wrote).
func IndexLine(s string) (int, rune) {
	i := firstUnsafe(s, true)
	if i < 0 {
		return -1, 0
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return i, r
}
