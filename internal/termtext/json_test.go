package termtext

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// JSON output carries no raw character a terminal obeys, and decodes to
// the same value (issue #24: U+009B, U+202E and DEL passed through raw).
func TestJSONEscapesWhatTerminalsObey(t *testing.T) {
	v := map[string]any{
		"csi":   "a\u009b31mred",
		"bidi":  "abc\u202edcba",
		"del":   "x\x7fy",
		"esc":   "\x1b]0;title\x07",
		"plain": "héllo\tworld ✓ \u2028",
		"list":  []any{"\u2066iso\u2069", 1.0, true},
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, v); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, raw := range []string{"\u009b", "\u202e", "\x7f", "\x1b", "\x07", "\u2066", "\u2069"} {
		if strings.Contains(out, raw) {
			t.Errorf("output has %q raw:\n%s", raw, out)
		}
	}
	if Escape(out) != out {
		t.Errorf("Escape changes the output: a terminal would act on some of it:\n%q", out)
	}
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if diff := cmp.Diff(v, got); diff != "" {
		t.Errorf("decodes differently (-want +got):\n%s", diff)
	}
	if !strings.HasSuffix(out, "}\n") || !strings.Contains(out, "\n  \"") {
		t.Errorf("not indented with a final newline:\n%s", out)
	}
}

func FuzzJSON(f *testing.F) {
	f.Add("a\u009bb\u202e\x7f")
	f.Add("plain")
	f.Fuzz(func(t *testing.T, s string) {
		b, err := json.Marshal(map[string]string{s: s})
		if err != nil {
			return
		}
		out := JSON(b)
		if Escape(string(out)) != string(out) {
			t.Fatalf("JSON(%q) = %q still has characters a terminal obeys", b, out)
		}
		var a, c any
		if json.Unmarshal(b, &a) != nil || json.Unmarshal(out, &c) != nil || !cmp.Equal(a, c) {
			t.Fatalf("JSON(%q) = %q decodes differently", b, out)
		}
	})
}
