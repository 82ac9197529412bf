// Package termtext is refine's one escape policy for text it did not write
// (a model's answer, a backend's error message, a file the user was
// handed) wherever a person or an agent is shown it: the terminal, the
// web console's pages and chart, an MCP client, and JSON output.
//
// Such text can carry characters a display obeys instead of showing: an
// escape sequence (ESC, or the C1 CSI U+009B) can retitle the window,
// clear the screen, move the cursor or make a hyperlink (OSC 8); a
// carriage return overwrites what the line showed; a bell rings; and the
// bidirectional overrides and isolates reorder what follows them, so that
// "Offset <U+202E>DETAVITCA<U+202C>" reads "Offset ACTIVATED". A model
// could so draw a fake question over the real one. The policy:
//
//   - The C0 controls other than newline and tab (a carriage return right
//     before a newline is a line end and is kept), DEL, the C1 controls
//     U+0080–U+009F (CSI and NEL among them) and bytes that are not UTF-8
//     (a lone 0x9B is a CSI to a terminal in 8-bit mode) are escaped
//     Go-style: \x1b, \r, \u009b, \xff.
//   - The bidirectional embeddings, overrides and isolates (U+202A–U+202E:
//     LRE, RLE, PDF, LRO, RLO; U+2066–U+2069: LRI, RLI, FSI, PDI) are made
//     visible as <U+202E>: they reorder whole runs of text.
//   - The bidirectional marks (LRM U+200E, RLM U+200F, ALM U+061C) are
//     kept: they reorder nothing beyond the punctuation next to them, and
//     right-to-left text needs them, so an Arabic or Hebrew sentence shows
//     as it was written.
//   - What is stored stays verbatim: a session's files, final_spec.md, and
//     the values of JSON output (JSON writes what it escapes as \u escapes,
//     which decode to the same text).
//
// [Escape] applies the policy to text, [Line] to text on one line, [JSON]
// to JSON output, and [Markup] to a rendered HTML page or SVG image.
package termtext

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Escape returns s with every character the policy escapes replaced by its
// visible form, keeping newlines and tabs (see the package
// documentation). Text with none of them is returned unchanged.
func Escape(s string) string { return escape(s, false, false) }

// Line is Escape for text shown on one line (a title, a label, a table
// cell): it escapes newlines, tabs and every carriage return too, so the
// text cannot start a line of its own that looks like the program's
// output.
func Line(s string) string { return escape(s, true, false) }

// escape applies the policy to s; markup writes <U+XXXX> as markup text.
func escape(s string, oneLine, markup bool) string {
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
		case unsafeAt(s, i, r, oneLine):
			writeEscape(&b, r, markup)
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
			if (c < 0x20 || c == 0x7f) && unsafeAt(s, i, rune(c), oneLine) {
				return i
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

// unsafeAt is unsafe for the rune r at s[i]: a carriage return right
// before a newline ends a line, unless oneLine.
func unsafeAt(s string, i int, r rune, oneLine bool) bool {
	if r == '\r' && !oneLine && i+1 < len(s) && s[i+1] == '\n' {
		return false
	}
	return unsafe(r, oneLine)
}

// unsafe reports whether the policy escapes r (a carriage return always;
// unsafeAt keeps one that ends a line).
func unsafe(r rune, oneLine bool) bool {
	switch {
	case r == '\n' || r == '\t':
		return oneLine
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	}
	return isBidiControl(r)
}

// isBidiControl reports whether r is a bidirectional embedding, override
// or isolate, which the policy makes visible as <U+XXXX>.
func isBidiControl(r rune) bool {
	return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

func writeEscape(b *strings.Builder, r rune, markup bool) {
	switch {
	case isBidiControl(r) && markup:
		fmt.Fprintf(b, "&lt;U+%04X&gt;", r)
	case r == '\n':
		b.WriteString(`\n`)
	case r == '\t':
		b.WriteString(`\t`)
	case r == '\r':
		b.WriteString(`\r`)
	case isBidiControl(r):
		fmt.Fprintf(b, "<U+%04X>", r)
	case r < 0x80:
		fmt.Fprintf(b, `\x%02x`, r)
	default:
		fmt.Fprintf(b, `\u%04x`, r)
	}
}

// Markup applies the policy to a rendered HTML page or SVG image, whose
// markup refine wrote and whose text may hold a model's: each character
// the policy escapes becomes its visible form, written as markup text
// (<U+202E> as &lt;U+202E&gt;), inside text and attribute values alike.
// Newlines, tabs and carriage returns that end a line are kept. b is
// returned unchanged when it has none.
func Markup(b []byte) []byte {
	s := string(b)
	if firstUnsafe(s, false) < 0 {
		return b
	}
	return []byte(escape(s, false, true))
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
