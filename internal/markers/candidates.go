package markers

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/gapsfile"
	"github.com/refine-spec/refine/internal/markdown"
)

// Candidates turns the markers of spec into a gap list for a person to
// edit (`refine gaps --offline`), one gap per marker in document order:
//
//   - ID: the annotation's own ID when the marker has one; otherwise
//     GAP-AREA-NNN with AREA from Area and NNN the lowest number from 001
//     that no gap ID of the spec (outside code) and no other candidate
//     uses. Past GAP-AREA-999 the rest are left out.
//   - Severity: the marker's (SeverityOf: MEDIUM unless a word says
//     otherwise).
//   - Title: the sentence without its annotation and closing
//     punctuation, after its section's heading when it has fewer than
//     three words ("4. Limits: TBD"), shortened to a line.
//   - Location: the sentence, quoted, so discovery's check finds it.
//   - Why: the draft's marks and the nearest heading.
func Candidates(spec string, ms []Marker) []gap.Gap {
	if len(ms) == 0 {
		return nil
	}
	d := markdown.Parse(spec)
	area := area(d, ms)
	used := map[int]bool{}
	for _, m := range gap.FindIDMatches(d.Prose) {
		if id := gap.ID(m.ID); id.Category() == area {
			used[id.Number()] = true
		}
	}
	for _, m := range ms {
		if m.ID.Category() == area {
			used[m.ID.Number()] = true
		}
	}
	next := 1
	var out []gap.Gap
	for _, m := range ms {
		id := m.ID
		if id == "" {
			for next <= 999 && used[next] {
				next++
			}
			if next > 999 {
				continue
			}
			id = gap.ID(fmt.Sprintf("GAP-%s-%03d", area, next))
			used[next] = true
		}
		out = append(out, gap.Gap{ID: id, Severity: m.Severity, Title: candidateTitle(m), Location: quoted(m.Sentence), Why: why(m)})
	}
	return out
}

// Lengths of the texts a candidate carries, below the gap list's limits.
const (
	maxTitle    = 200
	maxLocation = gapsfile.MaxLocationBytes - 2 // the quotes
	maxWhy      = gapsfile.MaxWhyBytes
)

func candidateTitle(m Marker) string {
	var b strings.Builder
	last := 0
	for _, an := range annotations(m.Sentence) {
		b.WriteString(m.Sentence[last:an.start])
		last = an.end
	}
	b.WriteString(m.Sentence[last:])
	t := strings.TrimRight(collapse(b.String()), " .:;,!")
	t = strings.TrimLeft(t, " *_")
	if len(strings.Fields(t)) < 3 && len(m.Headings) > 0 {
		h := m.Headings[len(m.Headings)-1]
		if t == "" || t == h {
			t = h
		} else {
			t = h + ": " + t
		}
	}
	if t == "" {
		t = fmt.Sprintf("Open point at line %d", m.Line)
	}
	return shorten(t, maxTitle)
}

// quoted is a sentence as a Location: in double quotes, shortened with "…"
// (which discovery's check reads as "anything between").
func quoted(s string) string { return `"` + shorten(s, maxLocation) + `"` }

func why(m Marker) string {
	var parts []string
	seen := map[string]bool{}
	for _, mk := range m.Marks {
		var p string
		switch mk.Kind {
		case Annotation:
			p = "marks it " + mk.Text
		case Question:
			p = "asks it and gives no answer"
		default:
			p = `says "` + mk.Text + `"`
		}
		if !seen[p] {
			seen[p] = true
			parts = append(parts, p)
		}
	}
	w := "the draft " + strings.Join(parts, ", ")
	if n := len(m.Headings); n > 0 {
		w += " (under " + m.Headings[n-1] + ")" // the nearest heading: the Location says the rest
	}
	return shorten(w, maxWhy)
}

// shorten cuts s to at most limit bytes at a space, ending it with "…".
func shorten(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit - len("…")
	for cut > 0 && (s[cut]&0xC0) == 0x80 {
		cut-- // not inside a UTF-8 sequence
	}
	if i := strings.LastIndexByte(s[:cut], ' '); i > limit/2 {
		cut = i
	}
	return strings.TrimRight(s[:cut], " ") + "…"
}

// Area returns the AREA of the IDs Candidates numbers: the area every
// annotation of the draft shares, when they share one (the draft's own
// convention); else one from the spec's title (its first level-1 heading,
// else its first heading, up to a ":", dash or parenthesis): the last
// word of 2 to 6 capital letters ("Orders API" → API), else the first
// three letters of its first word of three letters or more that is not
// "the", "draft", "spec"…, in capitals ("Payments service" → PAY); the
// whole title is read the same way when the part before the separator
// gives nothing ("Draft: Payments" → PAY); else SPEC.
func Area(spec string, ms []Marker) string { return area(markdown.Parse(spec), ms) }

func area(d *markdown.Doc, ms []Marker) string {
	areas := map[string]bool{}
	for _, m := range ms {
		if m.ID != "" {
			areas[m.ID.Category()] = true
		}
	}
	if len(areas) == 1 {
		for a := range areas {
			return a
		}
	}
	return AreaOf(title(d))
}

// title is the spec's first level-1 heading, else its first heading.
func title(d *markdown.Doc) string {
	for _, h := range d.Headings {
		if h.Level == 1 {
			return h.Title
		}
	}
	if len(d.Headings) > 0 {
		return d.Headings[0].Title
	}
	return ""
}

// stopWords are title words no area is made of.
var stopWords = map[string]bool{"the": true, "and": true, "for": true, "draft": true, "spec": true, "specification": true,
	"specifications": true, "rfc": true, "proposal": true, "design": true, "document": true}

// AreaOf derives an area from a spec's title as Area describes.
func AreaOf(title string) string {
	head := title
	if i := strings.IndexAny(head, ":—–|("); i >= 0 {
		head = head[:i]
	}
	if i := strings.Index(head, " - "); i >= 0 {
		head = head[:i]
	}
	if a := areaOfWords(strings.Fields(head)); a != "" {
		return a
	}
	if a := areaOfWords(strings.Fields(title)); a != "" {
		return a // "Draft: Payments"
	}
	return "SPEC"
}

func areaOfWords(words []string) string {
	for i := len(words) - 1; i >= 0; i-- {
		w := strings.Trim(words[i], `.,;!?"'*_`+"`")
		if len(w) >= 2 && len(w) <= 6 && strings.Trim(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == "" {
			return w
		}
	}
	for _, w := range words {
		var letters []byte
		for i := 0; i < len(w); i++ {
			if c := w[i] | 0x20; c >= 'a' && c <= 'z' {
				letters = append(letters, c)
			}
		}
		if len(letters) >= 3 && !stopWords[string(letters)] {
			return strings.ToUpper(string(letters[:3]))
		}
	}
	return ""
}

// The words SeverityOf reads.
var (
	severityLabel = regexp.MustCompile(`\b(?:CRITICAL|HIGH|MEDIUM|LOW)\b`)
	severityWord  = regexp.MustCompile(`(?i)\b(?:(critical|blockers?|show-?stoppers?)|(high[- ]priority)|(low[- ]priority|minor|nice[- ]to[- ]have|cosmetic))\b`)
)

// SeverityOf is the severity a sentence states, for a candidate gap:
// a severity written in capitals (CRITICAL, HIGH, MEDIUM, LOW; the highest
// when several), else a word: "critical", "blocker", "showstopper" →
// CRITICAL; "high priority" → HIGH; "low priority", "minor", "nice to
// have", "cosmetic" → LOW (the highest when several); else MEDIUM, the
// severity of a gap nobody ranked (DESIGN §4).
func SeverityOf(sentence string) gap.Severity {
	best := gap.Severity(0)
	for _, m := range severityLabel.FindAllString(sentence, -1) {
		if s, err := gap.ParseSeverity(m); err == nil && s > best {
			best = s
		}
	}
	if best != 0 {
		return best
	}
	for _, m := range severityWord.FindAllStringSubmatch(sentence, -1) {
		s := gap.Low
		switch {
		case m[1] != "":
			s = gap.Critical
		case m[2] != "":
			s = gap.High
		}
		if s > best {
			best = s
		}
	}
	if best == 0 {
		return gap.Medium
	}
	return best
}
