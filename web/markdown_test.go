package web

import (
	"strings"
	"testing"
)

func TestSafeURL(t *testing.T) {
	for u, want := range map[string]bool{
		"https://example.com": true, "http://x": true, "mailto:a@b": true, "/rel/path": true, "#frag": true, "page.md": true,
		"?q=1": true, "a/b:c": true,
		"javascript:alert(1)": false, "JavaScript:alert(1)": false, " javascript:x": false, "java\tscript:x": false,
		"java\nscript:x": false, "data:text/html,x": false, "vbscript:x": false, "file:///etc/passwd": false,
	} {
		if got := safeURL(u); got != want {
			t.Errorf("safeURL(%q) = %v, want %v", u, got, want)
		}
	}
}

func TestMarkdownEscapes(t *testing.T) {
	md := newMarkdown()
	for _, tc := range []struct{ in, want, bad string }{
		{"<script>alert(1)</script>", "", "<script"},
		{"[x](javascript:alert(1))", `href="#unsafe-link-removed"`, "javascript:"},
		{"<javascript:alert(1)>", "javascript:alert(1)", `href="javascript`},
		{"<https://example.com>", `href="https://example.com"`, ""},
		{"![i](javascript:alert(1))", `src="#unsafe-link-removed"`, `src="javascript`},
		{"<img src=x onerror=alert(1)>", "", "<img src=x"},
		{"a <b onmouseover=alert(1)>b</b>", "", "<b onmouseover"},
		{"| a | b |\n|---|---|\n| <i>x</i> | 2 |", "<table>", "<i>"},
		{"[ok](https://e.com \"t\")", `rel="nofollow noopener noreferrer"`, ""},
	} {
		got := string(md.HTML(tc.in))
		if tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%q → %q: lacks %q", tc.in, got, tc.want)
		}
		if tc.bad != "" && strings.Contains(got, tc.bad) {
			t.Errorf("%q → %q: carries %q", tc.in, got, tc.bad)
		}
	}
}

// FuzzMarkdown: no input makes the renderer emit a script element, an
// event-handler attribute or a javascript: URL.
func FuzzMarkdown(f *testing.F) {
	for _, s := range []string{"<script>x</script>", "[a](javascript:x)", "<javascript:x>", "![i](data:x)", "# h\n\n`code`", "<a href=\"javascript:x\">y</a>"} {
		f.Add(s)
	}
	md := newMarkdown()
	f.Fuzz(func(t *testing.T, in string) {
		out := strings.ToLower(string(md.HTML(in)))
		for _, bad := range []string{"<script", "href=\"javascript:", "src=\"javascript:", "href=\"data:", "<iframe", "<img src=x"} {
			if strings.Contains(out, bad) {
				t.Fatalf("%q renders %q, carrying %q", in, out, bad)
			}
		}
		for _, tag := range []string{"<a ", "<img ", "<p ", "<div "} {
			if i := strings.Index(out, tag); i >= 0 {
				end := strings.IndexByte(out[i:], '>')
				if end > 0 && strings.Contains(out[i:i+end], " on") {
					t.Fatalf("%q renders an event attribute: %q", in, out[i:i+end])
				}
			}
		}
	})
}

func TestParseAttemptName(t *testing.T) {
	for name, want := range map[string]attemptView{
		"engineer-1":             {Name: "engineer-1", Role: "engineer", N: 1},
		"reviewer-12":            {Name: "reviewer-12", Role: "reviewer", N: 12},
		"engineer-GAP-API-001-2": {Name: "engineer-GAP-API-001-2", Role: "engineer", Part: "GAP-API-001", N: 2},
		"odd":                    {Name: "odd", Role: "odd"},
	} {
		got := parseAttemptName(name)
		if got.Name != want.Name || got.Role != want.Role || got.Part != want.Part || got.N != want.N {
			t.Errorf("parseAttemptName(%q) = %+v, want %+v", name, got, want)
		}
	}
}

func FuzzParseAttemptName(f *testing.F) {
	f.Add("engineer-GAP-API-001-2")
	f.Add("-")
	f.Fuzz(func(t *testing.T, name string) {
		a := parseAttemptName(name)
		if a.Name != name {
			t.Fatalf("name %q became %q", name, a.Name)
		}
	})
}
