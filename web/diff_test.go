package web

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLineDiff(t *testing.T) {
	for _, tc := range []struct {
		name, a, b string
		want       string // one line per diff line: op then text
	}{
		{"both empty", "", "", ""},
		{"added", "", "x\ny", "+x\n+y"},
		{"removed", "x\ny\n", "", "-x\n-y"},
		{"same", "a\nb", "a\nb\n", " a\n b"},
		{"middle change", "a\nb\nc", "a\nB\nc", " a\n-b\n+B\n c"},
		{"insert", "a\nc", "a\nb\nc", " a\n+b\n c"},
		{"crlf", "a\r\nb", "a\nb", " a\n b"},
		{"reorder", "a\nb\nc\nd", "b\na\nd\nc", "-a\n b\n-c\n+a\n d\n+c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, l := range lineDiff(tc.a, tc.b) {
				got = append(got, string(l.Op)+l.Text)
			}
			if diff := cmp.Diff(tc.want, strings.Join(got, "\n")); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzLineDiff: the diff's kept and removed lines rebuild the old text, its
// kept and added lines the new one.
func FuzzLineDiff(f *testing.F) {
	f.Add("a\nb\nc", "a\nx\nc")
	f.Add("", "x")
	f.Add("same\n", "same\n")
	f.Fuzz(func(t *testing.T, a, b string) {
		var old, neu []string
		for _, l := range lineDiff(a, b) {
			switch l.Op {
			case ' ':
				old, neu = append(old, l.Text), append(neu, l.Text)
			case '-':
				old = append(old, l.Text)
			case '+':
				neu = append(neu, l.Text)
			default:
				t.Fatalf("op %q", l.Op)
			}
		}
		if diff := cmp.Diff(splitLines(a), old, cmp.Comparer(func(x, y []string) bool { return strings.Join(x, "\n") == strings.Join(y, "\n") })); diff != "" {
			t.Errorf("old text (-want +got):\n%s", diff)
		}
		if strings.Join(splitLines(b), "\n") != strings.Join(neu, "\n") {
			t.Errorf("new text not rebuilt")
		}
	})
}

func TestLineDiffLargeFallsBack(t *testing.T) {
	var a, b strings.Builder
	for i := range 3000 {
		a.WriteString("a" + strings.Repeat("x", i%7) + "\n")
		b.WriteString("b" + strings.Repeat("y", i%5) + "\n")
	}
	d := lineDiff(a.String(), b.String())
	if len(d) != 6000 {
		t.Errorf("%d lines, want 6000 (all removed, all added)", len(d))
	}
}

// The source → final diff of the demo keeps the headings both texts have
// as context, in place (#40: "## 3. Errors" was shown replaced by
// "### 2.1 Pagination" and re-added further down).
func TestLineDiffKeepsHeadings(t *testing.T) {
	src, err := os.ReadFile("testdata/demo/spec.md")
	if err != nil {
		t.Fatal(err)
	}
	final, err := os.ReadFile("testdata/demo/final_spec.md")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, l := range lineDiff(string(src), string(final)) {
		if strings.HasPrefix(l.Text, "#") {
			got[l.Text] += string(l.Op)
		}
	}
	for _, h := range []string{"## 1. Purpose", "## 2. Endpoints", "## 3. Errors", "## 4. Limits", "## 5. Versioning"} {
		if got[h] != " " {
			t.Errorf("%q is %q in the diff, want one context line", h, got[h])
		}
	}
	for h, ops := range map[string]string{"### 2.1 Pagination": "+", "## Known Limitations": "+", "## 7. Examples": "-"} {
		if got[h] != ops {
			t.Errorf("%q is %q in the diff, want %q", h, got[h], ops)
		}
	}
}
