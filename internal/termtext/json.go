package termtext

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"
)

// JSON rewrites b, JSON text as encoding/json writes it, so that every
// character [Escape] escapes is written as a \u escape: the document
// decodes to the same value (JSON output is data, kept verbatim), and
// printed on a terminal it shows those characters, never obeys them.
// encoding/json escapes the C0 controls and replaces invalid UTF-8
// already; it writes DEL, the C1 controls (U+009B is a CSI) and the
// bidirectional overrides and isolates (U+202E) raw. Such characters only
// occur inside strings, where a \u escape means the same. The
// bidirectional marks (RLM) stay raw, as everywhere. b is returned
// unchanged when it has none.
func JSON(b []byte) []byte {
	i := firstUnsafeJSON(b)
	if i < 0 {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	out = append(out, b[:i]...)
	for i < len(b) {
		r, size := utf8.DecodeRune(b[i:])
		if !(r == utf8.RuneError && size == 1) && unsafe(r, false) {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}

// firstUnsafeJSON returns the index of the first character of b that
// JSON rewrites, or -1.
func firstUnsafeJSON(b []byte) int {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if c == 0x7f {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r != utf8.RuneError && unsafe(r, false) {
			return i
		}
		i += size
	}
	return -1
}

// WriteJSON writes v to w as indented JSON with a final newline, as a
// json.Encoder with SetIndent("", "  ") does, rewritten by [JSON]: the
// one way the CLI prints JSON.
func WriteJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(JSON(buf.Bytes()))
	return err
}
