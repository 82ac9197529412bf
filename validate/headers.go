package validate

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/markdown"
)

// hkind is what a header-like line stands for.
type hkind uint8

const (
	hNone hkind = iota
	hGapResolution
	hReview
	hDisagree
	hNewGaps
	hTradeOffs
	hLog
	hLimits
	hSeverity
	hConfidence
)

// target is the level a header of kind k is written at; 0 keeps the level
// it has (sections that are read at any level).
func (k hkind) target() int {
	switch k {
	case hGapResolution, hReview, hDisagree, hLog, hLimits:
		return 2
	case hSeverity:
		return 3
	}
	return 0
}

// allowedFor reports whether role reads headers of kind k: each role
// normalizes only its own, so an Engineer's "### Known Limitations"
// subsection or a "**High**" line in its prose stays as written.
func (k hkind) allowedFor(role readRole) bool {
	switch role {
	case roleEngineer:
		return k == hGapResolution || k == hDisagree || k == hNewGaps || k == hTradeOffs || k == hConfidence
	case roleReviewer:
		return k == hReview || k == hSeverity || k == hNewGaps
	case roleIntegration:
		return k == hLog || k == hLimits
	case roleGuess:
		return k != hNone
	}
	return false
}

// header is a recognised header-like title.
type header struct {
	kind hkind
	sev  gap.Severity
	// The canonical title is prefix, then join, then rest (a part of the
	// title as written): built by canon only when the title is rewritten,
	// so reading an answer written to the format allocates nothing here.
	prefix, join, rest string
	// notes are the kinds of mapping the title needs besides its level.
	notes noteSet
	// tail is set when a section title (Trade-offs) has more words after
	// it: a heading may, a bold line or setext title may not.
	tail bool
}

// canon is the canonical title ("Gap Resolution: GAP-X …", "High
// Priority"); for a confidence statement, its value.
func (h header) canon() string {
	switch {
	case h.rest == "":
		return h.prefix
	case h.prefix == "":
		return h.rest
	}
	return h.prefix + h.join + h.rest
}

// decoration before a keyword: emoji, a numbering prefix, emphasis.
func stripDecoration(p string) (i int, number string, notes noteSet) {
	for range 6 {
		j := skipSpace(p, i)
		if k := skipEmoji(p, j); k > j {
			notes, i = notes|noteEmoji, k
			continue
		}
		if k := skipNumbering(p, j); k > j {
			number = strings.TrimSpace(p[j:k])
			notes, i = notes|noteNumbered, k
			continue
		}
		if k := skipMarks(p, j); k > j {
			notes, i = notes|noteEmphasis, k
			continue
		}
		return j, number, notes
	}
	return skipSpace(p, i), number, notes
}

// noteSet is a set of the kinds of mapping a title needs: bits, so that
// reading a title allocates nothing.
type noteSet uint8

const (
	noteEmoji noteSet = 1 << iota
	noteNumbered
	noteEmphasis
	noteSeparator
	noteKeywordCase
	noteSectionTitle
	noteSeverityTitle
)

// kinds returns the Kind… names of the set, in a fixed order.
func (n noteSet) kinds() []string {
	var out []string
	for i, k := range [...]string{KindEmoji, KindNumbered, KindEmphasis, KindSeparator, KindKeywordCase, KindSectionTitle, KindSeverityTitle} {
		if n&(1<<i) != 0 {
			out = append(out, k)
		}
	}
	return out
}

// skipMarks skips emphasis marks.
func skipMarks(p string, i int) int {
	for i < len(p) && (p[i] == '*' || p[i] == '_') {
		i++
	}
	return i
}

// skipEmoji skips emoji and the joiners and selectors that build them.
func skipEmoji(p string, i int) int {
	for i < len(p) && p[i] >= 0x80 {
		r, size := utf8.DecodeRuneInString(p[i:])
		if !isEmoji(r) {
			break
		}
		i += size
		i = skipSpace(p, i)
	}
	return i
}

func isEmoji(r rune) bool {
	switch {
	case r >= 0x1F000 && r <= 0x1FAFF, r >= 0x2600 && r <= 0x27BF, r >= 0x2B00 && r <= 0x2BFF,
		r == 0x200D, r == 0xFE0F, r == 0x20E3, r >= 0xE0020 && r <= 0xE007F:
		return true
	}
	return unicode.Is(unicode.So, r)
}

// skipNumbering skips a numbering prefix: "1.", "2)", "2.1", "A.", "b)",
// "IV.", followed by a space.
func skipNumbering(p string, i int) int {
	j := i
	for j < len(p) && (p[j] >= '0' && p[j] <= '9' || p[j] == '.' && j > i && j+1 < len(p) && p[j+1] >= '0' && p[j+1] <= '9') {
		j++
	}
	if j == i {
		// One letter, or a roman numeral of up to four letters.
		for j < len(p) && j-i < 4 && strings.IndexByte("IVXivx", p[j]) >= 0 {
			j++
		}
		if j == i && j < len(p) && isLetter(p[j]) {
			j++
		}
		if j == i {
			return i
		}
	}
	if j >= len(p) || (p[j] != '.' && p[j] != ')') {
		return i
	}
	j++
	if j >= len(p) || (p[j] != ' ' && p[j] != '\t') {
		return i
	}
	return skipSpace(p, j)
}

// keywordAt matches kw (lower case) at the start of s in any case, ending
// at a word boundary; canon is the format's spelling, and caseNote is set
// when s spells it otherwise.
func keywordAt(s, kw, canon string) (n int, caseNote bool, ok bool) {
	if !hasPrefixFold(s, kw) {
		return 0, false, false
	}
	if len(s) > len(kw) && (isLetter(s[len(kw)]) || s[len(kw)] >= 0x80) {
		return 0, false, false
	}
	return len(kw), s[:len(kw)] != canon, true
}

// afterKeyword reads what follows a keyword at p[k:]: emphasis closers,
// a separator (":", "—", "–", "-"), more closers and spaces. restAt is
// where the text after them starts.
func afterKeyword(p string, k int) (sep string, restAt int) {
	j := skipMarks(p, k)
	j = skipSpace(p, j)
	switch {
	case strings.HasPrefix(p[j:], ":"):
		sep, j = ":", j+1
	case strings.HasPrefix(p[j:], "—"):
		sep, j = "—", j+len("—")
	case strings.HasPrefix(p[j:], "–"):
		sep, j = "–", j+len("–")
	case strings.HasPrefix(p[j:], "-"):
		sep = "-"
		for j < len(p) && p[j] == '-' {
			j++
		}
	}
	j = skipMarks(p, j)
	return sep, skipSpace(p, j)
}

// startsWithID reports whether s starts with lit ("GAP-", "ISSUE-") after
// brackets or emphasis.
func startsWithID(s, lit string) bool {
	return strings.HasPrefix(strings.TrimLeft(s, "*_[(`"), lit)
}

// recognize reads a header-like title: p is its prose (code blanked) and r
// the same bytes as written. It returns what the title stands for and its
// canonical form; ok is false for an ordinary title.
func recognize(p, r string) (header, bool) {
	i, number, notes := stripDecoration(p)
	rest := p[i:]
	if rest == "" || strings.IndexByte("gGrRdDnNtTkKcCbBhHmMlL", rest[0]) < 0 {
		return header{}, false // no keyword starts so: most titles stop here
	}
	h := header{notes: notes, join: " "}
	// Headers about one ID: the keyword, a separator (or the ID right
	// after it), then the ID and any title.
	for _, k := range [...]struct {
		kw, canon, lit string
		kind           hkind
	}{{"gap resolution", "Gap Resolution", "GAP-", hGapResolution}, {"disagree", "DISAGREE", "ISSUE-", hDisagree}} {
		if n, c, ok := keywordAt(rest, k.kw, k.canon); ok {
			sep, at := afterKeyword(p, i+n)
			if sep == "" && !startsWithID(p[at:], k.lit) {
				return header{}, false
			}
			if k.kind == hDisagree && !startsWithID(p[at:], k.lit) {
				// "## Disagree: glossary wording" names no issue: an informal
				// disagreement the conflict package logs, left as written.
				return header{}, false
			}
			h.kind, h.prefix, h.join, h.rest = k.kind, k.canon+":", " ", valueAt(r, at)
			h.notes = sepCase(h.notes, sep, c)
			return h, true
		}
	}
	if n, c, ok := keywordAt(rest, "review", "Review"); ok {
		sep, at := afterKeyword(p, i+n)
		if sep == "" && strings.TrimSpace(p[at:]) != "" && !startsWithID(p[at:], "GAP-") {
			return header{}, false
		}
		h.kind, h.prefix, h.rest = hReview, "Review:", valueAt(r, at)
		if sep == "" && strings.TrimSpace(p[at:]) == "" {
			sep = ":" // a bare "Review" heading needs no separator
		}
		h.notes = sepCase(h.notes, sep, c)
		return h, true
	}
	if n, c, ok := keywordAt(rest, "new gaps", "New Gaps"); ok {
		word := ""
		j := skipSpace(p, i+n)
		for _, w := range [...]struct{ kw, canon string }{{"introduced", "Introduced"}, {"identified", "Identified"}} {
			if k, wc, ok := keywordAt(p[j:], w.kw, w.canon); ok {
				word, j, c = w.canon, j+k, c || wc
				break
			}
		}
		tail := strings.TrimSpace(strings.TrimLeft(p[j:], "*_: \t"))
		if tail != "" && tail[0] != '(' {
			return header{}, false
		}
		h.tail = tail != ""
		if word == "" {
			h.notes |= noteSectionTitle
			word = "Introduced" // the role decides; see lineLevel
		}
		if c {
			h.notes |= noteKeywordCase
		}
		h.kind, h.prefix = hNewGaps, "New Gaps "+word
		if tail != "" {
			h.rest = strings.TrimSpace(r[len(p)-len(tail):])
		}
		return h, true
	}
	if n, ok := tradeOffsAt(rest); ok {
		h.kind, h.rest = hTradeOffs, strings.TrimRight(strings.TrimSpace(r[i:]), "*_: \t")
		h.tail = strings.TrimSpace(strings.TrimLeft(rest[n:], "*_: \t")) != ""
		return h, true
	}
	for _, s := range [...]struct {
		kw, canon string
		kind      hkind
	}{{"resolution log", "Resolution Log", hLog}, {"known limitations", "Known Limitations", hLimits}} {
		if n, c, ok := keywordAt(rest, s.kw, s.canon); ok {
			if tail := strings.TrimSpace(strings.TrimLeft(p[i+n:], "*_: \t")); tail != "" {
				return header{}, false
			}
			h.kind, h.rest = s.kind, s.canon
			if number != "" {
				// An integrated spec may number it like its other sections;
				// the number stays (the section is found without it).
				h.prefix = number
				h.notes &^= noteNumbered
			}
			h.notes = sepCase(h.notes, ":", c)
			return h, true
		}
	}
	for _, kw := range [...]string{"confidence level", "confidence"} {
		if n, _, ok := keywordAt(rest, kw, ""); ok {
			sep, at := afterKeyword(p, i+n)
			if sep == "" {
				return header{}, false
			}
			h.kind, h.rest = hConfidence, valueAt(r, at)
			return h, true
		}
	}
	if sev, exact, ok := severityTitle(rest); ok {
		h.kind, h.sev = hSeverity, sev
		if exact {
			h.rest = strings.TrimRight(strings.TrimSpace(r[i:]), "*_: \t")
		} else {
			h.prefix = severityCanon(sev)
			h.notes |= noteSeverityTitle
		}
		return h, true
	}
	return header{}, false
}

// valueAt is the text of a title after its keyword and separator.
func valueAt(r string, at int) string { return trimEmphasis(strings.TrimSpace(r[at:])) }

func sepCase(notes noteSet, sep string, caseNote bool) noteSet {
	if sep != ":" {
		notes |= noteSeparator
	}
	if caseNote {
		notes |= noteKeywordCase
	}
	return notes
}

// severityWord returns the severity a title's first word names, lower
// case: the format's four and their usual synonyms (Blocker, Major, Minor,
// Nits…).
func severityWordOf(w string) (gap.Severity, bool) {
	switch w {
	case "critical", "blocker", "blockers", "blocking":
		return gap.Critical, true
	case "high", "major":
		return gap.High, true
	case "medium", "moderate", "minor":
		return gap.Medium, true
	case "low", "nit", "nits", "nitpick", "nitpicks", "trivial":
		return gap.Low, true
	}
	return 0, false
}

// severityModifier reports whether a word may follow a severity word in a
// severity title ("High Priority Issues", "Low Severity / Nits").
func severityModifier(w string) bool {
	switch w {
	case "priority", "issues", "issue", "severity", "concerns", "concern", "findings", "finding", "problems", "problem",
		"risk", "risks", "items", "and", "or", "level", "suggestions", "recommendations", "improvements", "notes",
		"observations", "comments", "none":
		return true
	}
	return false
}

// severityTitle reads a severity heading's title: exact when the format's
// reading already takes it (severityOf: "High Priority…"), else by its
// first word and only modifiers, severity words or counts after it.
func severityTitle(s string) (sev gap.Severity, exact, ok bool) {
	if sev, ok := severityOf(s); ok {
		return sev, true, true
	}
	// Most titles are no severity: judge the first word before splitting.
	var buf [12]byte
	n := 0
	for n < len(s) && isLetter(s[n]) {
		if n == len(buf) {
			return 0, false, false
		}
		buf[n] = s[n] | 0x20
		n++
	}
	if _, ok := severityWordOf(string(buf[:n])); !ok {
		return 0, false, false
	}
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r >= 0x80 && unicode.IsLetter(r))
	})
	if len(words) == 0 {
		return 0, false, false
	}
	sev, ok = severityWordOf(words[0])
	if !ok {
		return 0, false, false
	}
	for _, w := range words[1:] {
		if _, isSev := severityWordOf(w); isSev || severityModifier(w) || allDigits(w) {
			continue
		}
		return 0, false, false
	}
	return sev, false, true
}

// severityCanon is the format's title for a severity section.
func severityCanon(sev gap.Severity) string {
	for _, s := range severitySections {
		if s.sev == sev {
			return s.title
		}
	}
	return ""
}

// disagreeLabels are the DISAGREE fields as the format writes them; a
// label is matched in any case, and "Alternative" stands for "Alternative
// Approach".
var disagreeLabels = [...]struct{ kw, canon string }{
	{"reviewer concern", labelConcern}, {"engineer position", labelPosition}, {"rationale", labelRationale},
	{"alternative approach", "Alternative Approach"}, {"alternative", "Alternative Approach"}, {"request", labelRequest},
}

// labelLine rewrites a DISAGREE field line in another form ("**Rationale**:
// x", "rationale: x", "### Rationale") as the format writes it
// ("**Rationale:** x"), keeping a list marker; ok is false for a line that
// is not a label or that boldLabel reads as written.
func labelLine(p, r string, heading bool) (string, bool) {
	prefix, i := "", 0
	if heading {
		i = len(p) - len(strings.TrimLeft(strings.TrimLeft(p, " "), "#"))
	} else if _, at, ok := listItem(p); ok {
		prefix, i = r[:at], at
	}
	i = skipSpace(p, i)
	if !heading {
		if _, _, ok := boldLabel(line{prose: p, text: r}); ok {
			return "", false
		}
	}
	bold := strings.HasPrefix(p[i:], "**") || strings.HasPrefix(p[i:], "__")
	j := skipMarks(p, i)
	for _, l := range disagreeLabels {
		n, _, ok := keywordAt(p[j:], l.kw, "")
		if !ok {
			continue
		}
		k, name := j+n, l.canon
		// "Alternative Approach (if any)": keep what the label adds.
		if t := strings.TrimLeft(p[k:], " "); strings.HasPrefix(t, "(") {
			if c := strings.IndexByte(p[k:], ')'); c >= 0 && c < 40 {
				name += " " + strings.TrimSpace(r[k:k+c+1])
				k += c + 1
			}
		}
		sep, at := afterKeyword(p, k)
		if sep != ":" && !heading && !(bold && strings.TrimSpace(p[at:]) == "") {
			return "", false
		}
		out := prefix + "**" + name + ":**"
		if v := strings.TrimSpace(r[at:]); v != "" {
			out += " " + v
		}
		return out, true
	}
	return "", false
}

// confidenceLine rewrites a confidence statement in another form
// ("**Confidence: HIGH**", "Confidence Level: High", "### Confidence:
// HIGH") as "**Confidence:** HIGH", keeping a list marker; ok is false
// for a line that states no confidence.
func confidenceLine(p, r string) (string, bool) {
	prefix, i := "", 0
	if _, _, ok := markdown.ATXHeading(p); ok {
		i = len(p) - len(strings.TrimLeft(strings.TrimLeft(p, " "), "#"))
	} else if _, at, ok := listItem(p); ok {
		prefix, i = r[:at], at
	}
	h, ok := recognize(p[i:], r[i:])
	if !ok || h.kind != hConfidence {
		return "", false
	}
	out := prefix + "**Confidence:**"
	if v := h.canon(); v != "" {
		out += " " + v
	}
	return out, true
}

// boldAlone reads a line that is a bold span standing alone: "**X**",
// "**X**:", "**X:**" or, for a header that needs an ID, "**Gap
// Resolution:** GAP-…". It returns the prose and raw text inside and
// after the span, joined, and whether anything follows the span.
func boldAlone(p, r string) (tp, tr string, tail bool, ok bool) {
	i := 0
	for i < len(p) && i < 4 && p[i] == ' ' {
		i++
	}
	if i >= 4 || !(strings.HasPrefix(p[i:], "**") || strings.HasPrefix(p[i:], "__")) {
		return "", "", false, false
	}
	m := p[i : i+2]
	end := strings.Index(p[i+2:], m)
	if end <= 0 {
		return "", "", false, false
	}
	after := strings.TrimSpace(p[i+2+end+2:])
	return p[i:], r[i:], after != "" && after != ":", true
}

// tradeOffsAt is isTradeOffs that also returns how many bytes of title
// the words took.
func tradeOffsAt(title string) (int, bool) {
	const want = "tradeoffs"
	n, i := 0, 0
	for ; i < len(title) && n < len(want); i++ {
		c := title[i] | 0x20
		switch {
		case title[i] == '-' || title[i] == ' ' || title[i] == '_':
		case c == want[n]:
			n++
		default:
			return 0, false
		}
	}
	if n < len(want) || i < len(title) && isLetter(title[i]) {
		return 0, false
	}
	return i, true
}
