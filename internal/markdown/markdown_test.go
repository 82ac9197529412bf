package markdown

import (
	"fmt"
	"github.com/refine-spec/refine/internal/scaling"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func titles(d *Doc) []string {
	var out []string
	for _, h := range d.Headings {
		out = append(out, strings.Repeat("#", h.Level)+" "+h.Title)
	}
	return out
}

func TestHeadings(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"plain", "# A\ntext\n## B\n### C\n", []string{"# A", "## B", "### C"}},
		{"not headings", "#hashtag\n####### seven\n    # indented four\n", nil},
		{"three spaces ok", "   ## B\n", []string{"## B"}},
		{"closing hashes", "## Title ##\n## C# is a language\n", []string{"## Title", "## C# is a language"}},
		{"backtick fence hides", "```\n## Gap Resolution: GAP-XXX\n```\n## Real\n", []string{"## Real"}},
		{"tilde fence hides", "~~~markdown\n## Hidden\n~~~\n## Real\n", []string{"## Real"}},
		{"longer fence needs longer close", "````\n```\n## Hidden\n```\n````\n## Real\n", []string{"## Real"}},
		{"mixed fence chars do not close", "```\n~~~\n## Hidden\n```\n## Real\n", []string{"## Real"}},
		{"unterminated fence runs to end", "## A\n```python\n## Hidden\n", []string{"## A"}},
		{"info string with backtick is not a fence", "``` a`b\n## Real\n", []string{"## Real"}},
		{"closing fence with trailing spaces", "```\n## Hidden\n```   \n## Real\n", []string{"## Real"}},
		{"crlf", "## A\r\ntext\r\n## B\r\n", []string{"## A", "## B"}},
		{"lone cr", "## A\rtext\r## B", []string{"## A", "## B"}},
		{"bom", "\uFEFF## A\n", []string{"## A"}},
		{"trailing spaces", "## A   \n", []string{"## A"}},
		{"empty heading", "##\n", []string{"## "}},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, titles(Parse(tt.src))); diff != "" {
				t.Errorf("headings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSections(t *testing.T) {
	src := "# Top\nintro\n## A\na body\n### A1\nsub\n## B\nb body\n# Next\n"
	d := Parse(src)
	var got []string
	for _, s := range d.Sections() {
		got = append(got, s.Title+"="+strings.ReplaceAll(d.Body(s), "\n", "|"))
	}
	want := []string{
		"Top=intro|## A|a body|### A1|sub|## B|b body|",
		"A=a body|### A1|sub|",
		"A1=sub|",
		"B=b body|",
		"Next=",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sections (-want +got):\n%s", diff)
	}
	a := d.SectionsAt(2)[0]
	if w := d.Within(a); len(w) != 1 || w[0].Title != "A1" {
		t.Errorf("Within(A) = %+v, want [A1]", w)
	}
	if got := d.Headings[2].Line; got != 5 {
		t.Errorf("A1 line = %d, want 5", got)
	}
}

func TestProseMasksCode(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"inline", "see `GAP-A-001` and GAP-B-002", "see " + strings.Repeat(" ", 11) + " and GAP-B-002"},
		{"double backticks", "x ``a ` b`` y", "x           y"},
		{"unmatched run is literal", "a ` b", "a ` b"},
		{"run lengths must match", "``a` b", "``a` b"},
		{"fence", "p\n```\ncode\n```\nq", "p\n   \n    \n   \nq"},
		{"crlf normalised", "a\r\n`b`", "a\n   "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Parse(tt.src)
			if d.Prose != tt.want {
				t.Errorf("Prose = %q, want %q", d.Prose, tt.want)
			}
			if len(d.Prose) != len(d.Text) {
				t.Errorf("len(Prose)=%d != len(Text)=%d", len(d.Prose), len(d.Text))
			}
		})
	}
}

func TestLines(t *testing.T) {
	d := Parse("a\nbb\n\nccc")
	if d.LineCount() != 4 {
		t.Fatalf("LineCount = %d, want 4", d.LineCount())
	}
	for off, want := range map[int]int{0: 1, 1: 1, 2: 2, 5: 3, 6: 4, 8: 4} {
		if got := d.LineOf(off); got != want {
			t.Errorf("LineOf(%d) = %d, want %d", off, got, want)
		}
	}
	if d.Line(2) != "bb" || d.Line(4) != "ccc" || d.Line(0) != "" || d.Line(9) != "" {
		t.Errorf("Line() wrong: %q %q", d.Line(2), d.Line(4))
	}
	if !Parse("`x`").InCode(1) || Parse("`x`").InCode(5) {
		t.Error("InCode wrong")
	}
}

// The spec documents are real LLM-written markdown; their fenced examples
// contain headers that must not count.
func TestSpecCorpus(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/spec/*.md")
	if len(files) == 0 {
		t.Fatal("spec corpus testdata/spec is missing")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		d := Parse(string(b))
		for _, h := range d.Headings {
			if strings.Contains(h.Title, "GAP-XXX") || strings.Contains(h.Title, "[GAP-ID]") {
				t.Errorf("%s:%d: template heading %q inside a fence was read as structure", filepath.Base(f), h.Line, h.Title)
			}
		}
		if len(d.SectionsAt(2)) == 0 {
			t.Errorf("%s: no level-2 sections", filepath.Base(f))
		}
	}
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("../../testdata/spec/*.md")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b[:min(len(b), 4096)]))
		}
	}
	for _, s := range []string{"", "```", "## a\r\n`x`", "\uFEFF# t", "````\n```\n", "`` ` ``` `` `"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		d := Parse(src)
		if len(d.Prose) != len(d.Text) {
			t.Fatalf("Prose length %d != Text length %d", len(d.Prose), len(d.Text))
		}
		for i := range d.Text {
			if d.Text[i] == '\n' && d.Prose[i] != '\n' {
				t.Fatalf("newline at %d was masked", i)
			}
		}
		prev := -1
		for _, s := range d.Sections() {
			if s.Start <= prev || s.End < s.BodyStart || s.End > len(d.Text) {
				t.Fatalf("bad section %+v", s)
			}
			prev = s.Start
			_ = d.Body(s)
		}
		if len(d.Lead) != d.LineCount() || len(d.Content) != d.LineCount() {
			t.Fatalf("%d leads, %d contents for %d lines", len(d.Lead), len(d.Content), d.LineCount())
		}
		for i, c := range d.Lead {
			line := d.Line(i + 1)
			if c != 0 && strings.IndexByte(line, c) < 0 || c == 0 && d.Content[i] != 0 {
				t.Fatalf("line %d %q: lead %q content %q", i+1, line, c, d.Content[i])
			}
			if d.Content[i] != 0 && strings.IndexByte(line, d.Content[i]) < 0 {
				t.Fatalf("line %d %q: content %q", i+1, line, d.Content[i])
			}
		}
		if n := d.Unclosed; n < 0 || n > d.LineCount() {
			t.Fatalf("unclosed fence at line %d of %d", n, d.LineCount())
		}
	})
}

// Lead, Content and Unclosed say how each line starts and which fence is
// left open, so readers can pick lines without reading the text again.
func TestLeadContentUnclosed(t *testing.T) {
	d := Parse("## DISAGREE: x\n- **Bold**\n  1. Item\n> > Quote\n---\n\n    code\n```go\nfmt\n```\n* \n#tag\n```\nopen")
	wantLead := "#-1>-\x00\x00\x00\x00\x00*#\x00\x00"
	wantContent := "D*IQ-\x00\x00\x00\x00\x00\x00#\x00\x00"
	if string(d.Lead) != wantLead || string(d.Content) != wantContent {
		t.Errorf("Lead %q Content %q, want %q %q", d.Lead, d.Content, wantLead, wantContent)
	}
	if d.Unclosed != 13 {
		t.Errorf("Unclosed %d, want 13", d.Unclosed)
	}
	if ch, n, info, ok := OpeningFence("````markdown "); !ok || ch != '`' || n != 4 || info != "markdown" {
		t.Errorf("OpeningFence: %q %d %q %v", ch, n, info, ok)
	}
	if !ClosingFence("~~~~", '~', 3) || ClosingFence("```", '`', 4) || ClosingFence("```x", '`', 3) {
		t.Error("ClosingFence")
	}
	if d.LineStart(2) != len("## DISAGREE: x\n") || d.LineStart(99) != len(d.Text) {
		t.Errorf("LineStart: %d %d", d.LineStart(2), d.LineStart(99))
	}
}

func BenchmarkParse(b *testing.B) {
	unit := "## Gap Resolution: GAP-FLOW-001\n\n**Confidence:** HIGH\n\ntext with `code` and GAP-FLOW-002.\n```go\n## not a header\n```\n"
	for _, size := range []int{50 << 10, 1 << 20} {
		doc := strings.Repeat(unit, size/len(unit))
		b.Run(fmt.Sprintf("%dKB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				Parse(doc)
			}
		})
	}
}

func TestPathologicalBackticksLinear(t *testing.T) {
	// Runs of every length 1..k with no closers: a naive matcher is quadratic.
	input := func(size int) string {
		var sb strings.Builder
		for i := 1; sb.Len() < size; i++ {
			sb.WriteString(strings.Repeat("`", i%400+1))
			sb.WriteByte('x')
		}
		return sb.String()
	}
	d := Parse(input(1 << 16))
	if len(d.Prose) != len(d.Text) {
		t.Fatal("length mismatch")
	}
	scaling.Linear(t, "backtick runs", 1<<16, 16, input, func(s string) { Parse(s) })
}
