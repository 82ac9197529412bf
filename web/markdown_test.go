package web

import (
	"slices"
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
		// A section's body (headings shifted down) is as safe as the text.
		out := strings.ToLower(string(md.HTML(in)) + string(md.Section(in)))
		for _, bad := range []string{"<script", "href=\"javascript:", "src=\"javascript:", "href=\"data:", "<iframe", "<img src=x"} {
			if strings.Contains(out, bad) {
				t.Fatalf("%q renders %q, carrying %q", in, out, bad)
			}
		}
		// Event handlers are attribute names; "on" inside a quoted value
		// (a link title or image alt such as "x on") is harmless text, so
		// the check reads names, not substrings of the whole tag.
		for _, tag := range htmlTags(out) {
			for _, name := range tag.attrs {
				if strings.HasPrefix(name, "on") {
					t.Fatalf("%q renders an event attribute %q in <%s>: %q", in, name, tag.name, out)
				}
			}
		}
	})
}

func TestMarkdownAttributeValuesMayHoldOn(t *testing.T) {
	md := newMarkdown()
	for _, in := range []string{"[a](u \"x on\")", "![x on](u)", "[a](u \"x onclick=alert(1)\")"} {
		out := strings.ToLower(string(md.HTML(in)))
		for _, tag := range htmlTags(out) {
			for _, name := range tag.attrs {
				if strings.HasPrefix(name, "on") {
					t.Errorf("%q → %q: attribute %q in <%s>", in, out, name, tag.name)
				}
			}
		}
	}
	if tags := htmlTags(`<p><a href="u" onclick="x">a</a></p>`); len(tags) < 2 || !slices.Contains(tags[1].attrs, "onclick") {
		t.Errorf("htmlTags missed a real onclick: %+v", tags)
	}
}

// htmlTag is one start tag of rendered HTML: its name and attribute names.
type htmlTag struct {
	name  string
	attrs []string
}

// htmlTags lists the start tags of goldmark's output with their attribute
// names, skipping quoted values and comments. It relies on goldmark
// escaping '<' in text and every attribute value.
func htmlTags(s string) []htmlTag {
	var tags []htmlTag
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }
	for i := 0; i < len(s); {
		if s[i] != '<' {
			i++
			continue
		}
		if strings.HasPrefix(s[i:], "<!--") {
			end := strings.Index(s[i+4:], "-->")
			if end < 0 {
				break
			}
			i += 4 + end + 3
			continue
		}
		i++
		start := i
		for i < len(s) && !isSpace(s[i]) && s[i] != '>' && s[i] != '/' {
			i++
		}
		tag := htmlTag{name: s[start:i]}
		for i < len(s) && s[i] != '>' {
			if isSpace(s[i]) || s[i] == '/' {
				i++
				continue
			}
			start = i
			for i < len(s) && !isSpace(s[i]) && s[i] != '>' && s[i] != '/' && s[i] != '=' {
				i++
			}
			tag.attrs = append(tag.attrs, s[start:i])
			if i < len(s) && s[i] == '=' {
				i++
				if i < len(s) && (s[i] == '"' || s[i] == '\'') {
					q := s[i]
					end := strings.IndexByte(s[i+1:], q)
					if end < 0 {
						i = len(s)
						break
					}
					i += 1 + end + 1
				} else {
					for i < len(s) && !isSpace(s[i]) && s[i] != '>' {
						i++
					}
				}
			}
		}
		if tag.name != "" && tag.name[0] != '/' {
			tags = append(tags, tag)
		}
	}
	return tags
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

// Field lines keep their line breaks, prose does not; a section's body
// has no heading as large as the section's; a table scrolls in its own
// box (#40).
func TestMarkdownFirstHour(t *testing.T) {
	m := newMarkdown()
	for _, tc := range []struct {
		name, src, want, not string
	}{
		{"field lines", "**Status:** v1.0\n**Owner:** Platform team\n", "v1.0<br", ""},
		{"colon after the label", "**Status**: v1.0\n**Owner**: Platform team\n", "v1.0<br", ""},
		{"prose joins", "The API lets merchants\n**create** orders.\n", "merchants\n<strong>", "<br"},
		{"table", "| a | b |\n|---|---|\n| 1 | 2 |\n", `<div class="table-scroll"><table>`, ""},
	} {
		if got := string(m.HTML(tc.src)); !strings.Contains(got, tc.want) || tc.not != "" && strings.Contains(got, tc.not) {
			t.Errorf("%s: %q", tc.name, got)
		}
	}
	got := string(m.Section("# Round 2 Summary\n\nText.\n\n## Gap Changes\n\n```\n# not a heading\n```\n   ### Indented\n"))
	for _, want := range []string{"<h3>Gap Changes</h3>", "<h4>Indented</h4>", "# not a heading"} {
		if !strings.Contains(got, want) {
			t.Errorf("Section lacks %q: %s", want, got)
		}
	}
	if strings.Contains(got, "Round 2 Summary") || strings.Contains(got, "<h1") || strings.Contains(got, "<h2") {
		t.Errorf("Section keeps a heading as large as the section's: %s", got)
	}
}
