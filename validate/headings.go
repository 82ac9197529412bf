package validate

import (
	"fmt"
	"strings"

	"github.com/refine-spec/refine/internal/markdown"
)

// titled is a heading with its title split out of the prose (code blanked)
// and the raw line.
type titled struct {
	markdown.Section
	prose string // title text with code blanked
	raw   string // title text as written (without closing #s removed)
}

// sectionsTitled returns the sections at level whose prose title starts
// with prefix (case-sensitive: the spec's markers are exact).
func sectionsTitled(d *markdown.Doc, level int, prefix string) []titled {
	var out []titled
	for _, s := range d.Sections() {
		if s.Level != level {
			continue
		}
		p, r := headingTitle(d, s.Heading)
		if strings.HasPrefix(p, prefix) {
			out = append(out, titled{s, p, r})
		}
	}
	return out
}

// missingHeader explains a missing required header: where a near miss is (a
// heading at level 5 or 6, or with the keyword misspelt), or where
// the header appears only inside code, so a retry prompt can say exactly
// what to fix. want is the marker as the spec writes it ("## Gap
// Resolution:"); it returns the hint (with a leading space) and its line.
func missingHeader(d *markdown.Doc, want string) (string, int) {
	level := strings.IndexByte(want, ' ')
	name := strings.TrimSuffix(want[level+1:], ":")
	for _, h := range d.Headings {
		p, _ := headingTitle(d, h)
		if hasPrefixFold(p, name) {
			return fmt.Sprintf(" (line %d has %s, which does not read as the header: write it as '%s …', a heading of level 1 to 4)",
				h.Line, quote(d.Line(h.Line)), want), h.Line
		}
	}
	return codeOnly(d, want)
}

// codeOnly explains where needle occurs although it does not count: only
// inside code (a fenced block or inline code, where it is an example), or
// in running text rather than as a heading. It returns "" when needle does
// not occur at all.
func codeOnly(d *markdown.Doc, needle string) (string, int) {
	first := -1
	for off := 0; ; {
		i := strings.Index(d.Text[off:], needle)
		if i < 0 {
			break
		}
		i += off
		if first < 0 {
			first = i
		}
		if d.HasCode(i, i+len(needle)) {
			n := d.LineOf(i)
			return fmt.Sprintf(" (line %d has it only inside code, where it is an example and does not count)", n), n
		}
		off = i + len(needle)
	}
	if first < 0 {
		return "", 0
	}
	n := d.LineOf(first)
	return fmt.Sprintf(" (line %d mentions it in running text, not as a heading of its own)", n), n
}
