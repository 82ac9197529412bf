package validate

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/refine-spec/refine/internal/markdown"
)

// The kinds of Normalization: stable names a host can count and compare.
const (
	// KindThinkBlock: a leading <think> or <thinking> block, closed or not,
	// was removed.
	KindThinkBlock = "think-block"
	// KindWrapperFence: the whole answer was one fenced block (``` or ~~~,
	// three or more, tagged markdown, md or nothing) and was unwrapped.
	KindWrapperFence = "wrapper-fence"
	// KindHTMLComment: an HTML comment was removed; what it holds is not read.
	KindHTMLComment = "html-comment"
	// KindClosingRemark: a chat sign-off closing the answer ("Let me know
	// if …", "I hope this helps."), one short paragraph after a blank
	// line, outside code; it is not the last section's text.
	KindClosingRemark = "closing-remark"
	// KindIDHyphen: an ID written with Unicode hyphens or zero-width
	// characters (GAP‑FLOW‑001 with U+2011) was folded to ASCII.
	KindIDHyphen = "unicode-hyphen-in-id"
	// KindHeadingLevel: a required header or severity heading at another
	// level (1-4) was moved to its level; a section it holds moves with it
	// when it would otherwise end there.
	KindHeadingLevel = "heading-level"
	// KindSetext: a header underlined with === or --- became an ATX heading.
	KindSetext = "setext"
	// KindBoldHeader: a bold line standing alone ("**High Priority**")
	// became the heading it stands for.
	KindBoldHeader = "bold-header"
	// KindNumbered: a numbering prefix ("1.", "2)", "A.") before a header
	// keyword was dropped.
	KindNumbered = "numbered-heading"
	// KindEmoji: emoji before a header keyword were dropped.
	KindEmoji = "emoji"
	// KindEmphasis: emphasis marks inside a heading ("## **Review:** …")
	// were dropped.
	KindEmphasis = "heading-emphasis"
	// KindSeparator: "—", "–", "-" or nothing after a header keyword became ":".
	KindSeparator = "separator"
	// KindKeywordCase: a header keyword in another letter case ("gap
	// resolution", "Disagree") was written as the format has it.
	KindKeywordCase = "keyword-case"
	// KindSectionTitle: "New Gaps" became "New Gaps Introduced" (Engineer)
	// or "New Gaps Identified" (Reviewer).
	KindSectionTitle = "section-title"
	// KindSeverityTitle: a severity heading named by its word ("High",
	// "High Severity", "Major Issues") became the format's title ("High
	// Priority").
	KindSeverityTitle = "severity-title"
	// KindConfidence: a confidence statement in another form
	// ("**Confidence: HIGH**", "Confidence Level: High") became
	// "**Confidence:** HIGH".
	KindConfidence = "confidence-form"
	// KindDisagreeLabel: a DISAGREE field label in another form
	// ("**Rationale**:", "### Rationale", "rationale:") became
	// "**Rationale:**".
	KindDisagreeLabel = "disagree-label"
)

// Normalization is one kind of mapping the reading applied to an answer.
type Normalization struct {
	Kind  string // one of the Kind… constants
	Count int    // how many times it applied
	// Line and First are the first occurrence: its 1-based line in the
	// answer and that line as written (trimmed, shortened).
	Line  int
	First string
}

// Warning is the NORMALIZED warning a Result lists for n.
func (n Normalization) Warning() string {
	return fmt.Sprintf("NORMALIZED: %s ×%d (first at line %d: %s)", n.Kind, n.Count, n.Line, quote(n.First))
}

// Normalize maps an answer onto the canonical form of the formats before
// it is read (DESIGN §18): it unwraps an answer that is a single fenced
// block, removes a leading <think> block and HTML comments, folds Unicode
// hyphens inside IDs, and writes required headers, severity headings,
// confidence statements and DISAGREE labels the way the format has them.
// Lines are kept one for one (a removed line becomes an empty one), so a
// line number of the text is the answer's. notes say what was mapped, one
// entry per kind.
//
// Engineer, Reviewer and Integration normalize for their own role and
// return the text as Result.Text. Normalize guesses the role from the
// answer's headers (Gap Resolution: Engineer; Review: Reviewer; Resolution
// Log: an integrated spec) and normalizes as that validator would.
func Normalize(content string) (text string, notes []Normalization) {
	sc, notes, _ := read(content, roleGuess)
	return sc.d.Text, notes
}

// readRole says which header rules apply: each role's own, so that an
// Engineer's "### Known Limitations" subsection is never taken for an
// integrated spec's section.
type readRole int

const (
	roleGuess readRole = iota
	roleEngineer
	roleReviewer
	roleIntegration
	roleNone // no header rules: only the rules every answer gets
)

// notebook collects Normalizations, one per kind.
type notebook struct {
	list []Normalization
}

func (nb *notebook) add(kind string, line int, text string) {
	for i := range nb.list {
		if nb.list[i].Kind == kind {
			nb.list[i].Count++
			if line < nb.list[i].Line {
				nb.list[i].Line, nb.list[i].First = line, shorten(text)
			}
			return
		}
	}
	nb.list = append(nb.list, Normalization{Kind: kind, Count: 1, Line: line, First: shorten(text)})
}

func (nb *notebook) result() []Normalization {
	if len(nb.list) == 0 {
		return nil
	}
	slices.SortStableFunc(nb.list, func(a, b Normalization) int {
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return strings.Compare(a.Kind, b.Kind)
	})
	return nb.list
}

// shorten trims a line for a note.
func shorten(s string) string {
	s = strings.TrimSpace(s)
	const max = 80
	if len(s) > max*4 {
		s = s[:max*4]
	}
	r := []rune(s)
	if len(r) > max {
		return string(r[:max]) + "…"
	}
	return s
}

// repl replaces Text[start:end] with text.
type repl struct {
	start, end int
	text       string
}

// apply returns src with the replacements made; rs must be sorted by start
// and not overlap (an overlapping one is skipped).
func apply(src string, rs []repl) string {
	if len(rs) == 0 {
		return src
	}
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].start < rs[j].start })
	var b strings.Builder
	b.Grow(len(src))
	at := 0
	for _, r := range rs {
		if r.start < at || r.end < r.start || r.end > len(src) {
			continue
		}
		b.WriteString(src[at:r.start])
		b.WriteString(r.text)
		at = r.end
	}
	b.WriteString(src[at:])
	return b.String()
}

// newlinesOf keeps only the line breaks of s, so removing it keeps lines.
func newlinesOf(s string) string { return strings.Repeat("\n", strings.Count(s, "\n")) }

// scanned is a document as read, with the lines a reading looks at
// beyond the headings, found in one pass over the lines' lead bytes: bold
// lines and setext titles (maybe headers), and lines whose first letter
// after markers is a D (maybe DISAGREE-like).
type scanned struct {
	d                      *markdown.Doc
	bold, setext, disagree []int
}

func scan(d *markdown.Doc) scanned { return looseLines(d) }

// read normalizes content for role and scans the result: the document as
// read and what was normalized.
//
// unclosed is the line of a fence left open inside an answer that is
// otherwise one fenced block: such an answer is not unwrapped (its reading
// is in doubt), and the fence is what to fix.
func read(content string, role readRole) (sc scanned, notes []Normalization, unclosed int) {
	var nb notebook
	text := markdown.Normalize(content)
	text = stripThink(text, &nb)
	text, unclosed = unwrap(text, &nb)
	d := markdown.Parse(text)
	if t, ok := stripClosing(d, &nb); ok {
		d = markdown.Parse(t)
	}
	if rs := textLevel(d, &nb); len(rs) > 0 {
		d = markdown.Parse(apply(d.Text, rs))
	}
	sc = scan(d)
	if rs := lineLevel(sc, role, &nb); len(rs) > 0 {
		sc = scan(markdown.Parse(apply(d.Text, rs)))
	}
	return sc, nb.result(), unclosed
}

// lineStart returns the offset of the line holding offset i.
func lineStart(s string, i int) int { return strings.LastIndexByte(s[:i], '\n') + 1 }

// lineEnd returns the offset of the line break ending the line holding i,
// or len(s).
func lineEnd(s string, i int) int {
	if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(s)
}

// lineNo returns the 1-based line of offset i.
func lineNo(s string, i int) int { return strings.Count(s[:i], "\n") + 1 }

// stripThink removes a leading <think> or <thinking> block: up to its
// closing tag, or, when it is never closed, up to the first heading (the
// answer's first header), or all of it when there is none.
func stripThink(text string, nb *notebook) string {
	i := 0
	for i < len(text) && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n') {
		i++
	}
	rest := text[i:]
	var closeTag string
	switch {
	case hasPrefixFold(rest, "<think>"):
		closeTag = "</think>"
	case hasPrefixFold(rest, "<thinking>"):
		closeTag = "</thinking>"
	default:
		return text
	}
	stop := -1
	for off := i; ; {
		j := strings.Index(text[off:], "</")
		if j < 0 {
			break
		}
		if hasPrefixFold(text[off+j:], closeTag) {
			stop = off + j + len(closeTag)
			break
		}
		off += j + 2
	}
	if stop < 0 {
		// Unclosed: the thinking runs to the first heading.
		stop = len(text)
		for off := lineEnd(text, i); off < len(text); off = lineEnd(text, off+1) {
			if _, _, ok := markdown.ATXHeading(text[off+1 : lineEnd(text, off+1)]); ok {
				stop = off + 1
				break
			}
		}
	} else if e := lineEnd(text, stop); strings.TrimSpace(text[stop:e]) == "" {
		stop = e // the rest of the closing tag's line is blank
	}
	nb.add(KindThinkBlock, lineNo(text, i), text[i:lineEnd(text, i)])
	return text[:i] + newlinesOf(text[i:stop]) + text[stop:]
}

// unwrap removes the fence lines of an answer that is a single fenced
// block (DESIGN §18): the first and last non-blank lines are a fence
// (``` or ~~~, three or more, tagged markdown, md or nothing) and its
// closing fence, the lines between hold every fence they open closed, and
// a heading or a bold line outside their own fences. A fence inside an
// answer is an example; only a fence around all of it is a wrapper.
func unwrap(text string, nb *notebook) (string, int) {
	for range 3 { // a wrapper inside a wrapper
		fs, fe, ls, le, ok := firstLast(text)
		if !ok || fs == ls {
			return text, 0
		}
		framed := false
		if f, ok := framedWrapper(text); ok && !isFenceLine(text[fs:fe]) {
			// A preamble or a closing remark around the one fence: they are
			// not the answer, so later checks (a section's likeness to the
			// last round's) do not read them into its first or last section.
			fs, fe, ls, le, framed = f[0], f[1], f[2], f[3], true
		}
		ch, n, info, isFence := markdown.OpeningFence(text[fs:fe])
		if !isFence || !wrapperInfo(info) || !markdown.ClosingFence(text[ls:le], ch, n) {
			return text, 0
		}
		open, structured := wrappedAnswer(text[fe:ls])
		if !structured {
			return text, 0
		}
		if open >= 0 {
			return text, lineNo(text, fe+open)
		}
		nb.add(KindWrapperFence, lineNo(text, fs), text[fs:fe])
		if framed {
			text = newlinesOf(text[:fs]) + text[fe:ls] + newlinesOf(text[le:])
			continue
		}
		text = text[:fs] + text[fe:ls] + text[le:]
	}
	return text, 0
}

// isFenceLine reports whether line opens or closes a fence.
func isFenceLine(line string) bool {
	_, _, _, ok := markdown.OpeningFence(line)
	return ok
}

// framedWrapper finds a wrapper with a short preamble or closing remark
// around it ("Here is my answer:", the fenced answer, "Let me know if you
// need changes."): a fence tagged markdown or md (an untagged one shown
// after a remark is an example) opening after at most three lines of
// remark, its closing fence followed by at most three more, what lies
// between reading as an answer (every fence it opens closed, a heading or
// bold line outside them), and remarks that carry no heading, no bold
// line, no Confidence statement and do not call the fenced text an
// example. It returns the extents of the opening and closing fence lines.
func framedWrapper(text string) (f [4]int, ok bool) {
	remark := func(l string) bool {
		t := strings.TrimSpace(l)
		low := strings.ToLower(t)
		return !strings.HasPrefix(t, "#") && !strings.HasPrefix(t, "**") && !strings.HasPrefix(t, "__") &&
			!strings.Contains(low, "confidence") && !strings.Contains(low, "example")
	}
	var ch byte
	var n int
	lines := 0
	off := 0
	for ; ; off = lineEnd(text, off) + 1 {
		if off >= len(text) {
			return f, false
		}
		e := lineEnd(text, off)
		l := text[off:e]
		if c, k, info, isOpen := markdown.OpeningFence(l); isOpen {
			if !strings.EqualFold(info, "markdown") && !strings.EqualFold(info, "md") {
				return f, false
			}
			ch, n, f[0], f[1] = c, k, off, e
			break
		}
		if strings.TrimSpace(l) == "" {
			continue
		}
		if lines++; lines > 3 || !remark(l) {
			return f, false
		}
	}
	lines = 0
	end := len(text)
	for end > f[1] {
		ls := lineStart(text, max(end-1, 0))
		l := text[ls:lineEnd(text, ls)]
		if ls <= f[1] {
			return f, false
		}
		if markdown.ClosingFence(l, ch, n) {
			f[2], f[3] = ls, lineEnd(text, ls)
			open, structured := wrappedAnswer(text[f[1]:f[2]])
			return f, open < 0 && structured
		}
		if strings.TrimSpace(l) != "" {
			if lines++; lines > 3 || !remark(l) {
				return f, false
			}
		}
		end = ls
	}
	return f, false
}

// firstLast returns the extents of the first and last non-blank lines.
func firstLast(text string) (fs, fe, ls, le int, ok bool) {
	t := strings.TrimLeft(text, " \t\n")
	if t == "" {
		return 0, 0, 0, 0, false
	}
	fs = lineStart(text, len(text)-len(t))
	fe = lineEnd(text, fs)
	u := strings.TrimRight(text, " \t\n")
	ls = lineStart(text, len(u)-1)
	le = lineEnd(text, ls)
	return fs, fe, ls, le, true
}

func wrapperInfo(info string) bool {
	switch strings.ToLower(info) {
	case "", "markdown", "md":
		return true
	}
	return false
}

// wrappedAnswer reads the text inside a candidate wrapper: open is the
// offset of a fence it opens and never closes (-1 when every one is
// closed), structured whether a heading, a bold line or a gap list line
// (a discovery answer has no heading) stands outside its fences. It reads
// as an answer when both hold.
func wrappedAnswer(inner string) (open int, structured bool) {
	open = -1
	var ch byte
	var n int
	for off := 0; off < len(inner); {
		e := lineEnd(inner, off)
		l := inner[off:e]
		switch {
		case open >= 0:
			if markdown.ClosingFence(l, ch, n) {
				open = -1
			}
		default:
			if c, k, _, ok := markdown.OpeningFence(l); ok {
				open, ch, n = off, c, k
			} else if t := strings.TrimLeft(l, " "); strings.HasPrefix(t, "#") || strings.HasPrefix(t, "**") || strings.HasPrefix(t, "__") || gapListLine(t) {
				structured = true
			}
		}
		off = e + 1
	}
	return open, structured
}

// textLevel finds what is mapped on the text as a whole: HTML comments
// outside code, and IDs with Unicode hyphens or zero-width characters.
func textLevel(d *markdown.Doc, nb *notebook) []repl {
	var rs []repl
	var comments [][2]int
	for off := 0; ; {
		i := indexRare(d.Prose[off:], "<!--")
		if i < 0 {
			break
		}
		i += off
		j := strings.Index(d.Prose[i+4:], "-->")
		if j < 0 {
			break // never closed: not a comment, its text is read
		}
		end := i + 4 + j + 3
		comments = append(comments, [2]int{i, end})
		nb.add(KindHTMLComment, d.LineOf(i), d.Text[i:lineEnd(d.Text, i)])
		rs = append(rs, repl{i, end, newlinesOf(d.Text[i:end])})
		off = end
	}
	inComment := func(i int) bool {
		k := sort.Search(len(comments), func(k int) bool { return comments[k][1] > i })
		return k < len(comments) && comments[k][0] <= i
	}
	for _, f := range foldIDs(d) {
		if !inComment(f.start) {
			nb.add(KindIDHyphen, d.LineOf(f.start), d.Text[lineStart(d.Text, f.start):lineEnd(d.Text, f.start)])
			rs = append(rs, f)
		}
	}
	return rs
}

// isIDHyphen reports whether r is a hyphen a writer's tooling puts inside
// IDs instead of '-' (U+2011 from GPT-4o, dashes, the minus sign).
func isIDHyphen(r rune) bool {
	switch r {
	case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212', '\uFE58', '\uFE63', '\uFF0D':
		return true
	}
	return false
}

// isInvisible reports whether r is a zero-width character (or a soft
// hyphen) that can hide inside an ID.
func isInvisible(r rune) bool {
	switch r {
	case '\u200B', '\u200C', '\u200D', '\u2060', '\uFEFF', '\u00AD':
		return true
	}
	return false
}

// foldIDs finds IDs (GAP-…, ISSUE-R…, DECISION-R…) outside code written
// with Unicode hyphens or zero-width characters and returns the ASCII
// form for each; everything around an ID is left as written. It starts
// from those characters (their lead bytes), so an answer without them
// costs three fast byte searches.
func foldIDs(d *markdown.Doc) []repl {
	text := d.Text
	var out []repl
	var seen map[int]bool // IDs folded, by start: an ID may hold several hyphens
	for _, lead := range [...]byte{0xC2, 0xE2, 0xEF} {
		for off := 0; ; {
			i := strings.IndexByte(text[off:], lead)
			if i < 0 {
				break
			}
			i += off
			off = i + 1
			r, _ := utf8.DecodeRuneInString(text[i:])
			if !isIDHyphen(r) && !isInvisible(r) || d.InCode(i) {
				continue
			}
			// Back to the start of the word the character sits in.
			start := i
			for start > 0 && i-start < 48 {
				c := text[start-1]
				if isWordByte(c) || c == '-' {
					start--
					continue
				}
				if c >= 0x80 {
					q, size := utf8.DecodeLastRuneInString(text[:start])
					if isIDHyphen(q) || isInvisible(q) {
						start -= size
						continue
					}
				}
				break
			}
			for _, lit := range [...]string{"GAP", "ISSUE", "DECISION"} {
				if strings.HasPrefix(text[start:], lit) {
					if f, ok := foldAt(text, start, lit); ok && !seen[f.start] {
						if seen == nil {
							seen = map[int]bool{}
						}
						seen[f.start] = true
						out = append(out, f)
					}
					break
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b repl) int { return a.start - b.start })
	return out
}

// foldAt folds the ID starting at offset i of s, whose literal prefix is lit.
func foldAt(s string, i int, lit string) (repl, bool) {
	var folded []byte
	var orig []int // orig[k] is the offset in s just after folded byte k
	changed := false
	j := i
	for j < len(s) && len(folded) < 40 {
		c := s[j]
		if c < 0x80 {
			if !isWordByte(c) && c != '-' {
				break
			}
			folded = append(folded, c)
			j++
			orig = append(orig, j)
			continue
		}
		r, size := utf8.DecodeRuneInString(s[j:])
		switch {
		case isIDHyphen(r):
			folded = append(folded, '-')
			orig = append(orig, j+size)
		case isInvisible(r):
			if len(orig) > 0 {
				orig[len(orig)-1] = j + size
			}
		default:
			j = len(s) // any other character ends the ID
			continue
		}
		changed = true
		j += size
	}
	if !changed {
		return repl{}, false
	}
	f := string(folded)
	n := 0
	switch lit {
	case "GAP":
		if strings.HasPrefix(f, "GAP-") {
			if k := gapIDLen(f[4:]); k > 0 {
				n = 4 + k
			}
		}
	case "ISSUE":
		if strings.HasPrefix(f, "ISSUE-R") {
			if k := issueIDLen(f[7:]); k > 0 {
				n = 7 + k
			}
		}
	case "DECISION":
		if strings.HasPrefix(f, "DECISION-R") {
			if k := issueIDLen(f[10:]); k > 0 {
				n = 10 + k
			}
		}
	}
	if n == 0 {
		return repl{}, false
	}
	end := orig[n-1]
	if s[i:end] == f[:n] {
		return repl{}, false // the non-ASCII bytes lie after the ID
	}
	return repl{i, end, f[:n]}, true
}

// closingOpeners begin the sign-offs chat models end answers with.
var closingOpeners = [...]string{"i hope this helps", "hope this helps", "let me know", "please let me know", "feel free to",
	"if you'd like", "if you would like", "if you want", "happy to help", "i'm happy to", "i am happy to",
	"is there anything else", "would you like me to", "all items above are"}

// stripClosing blanks a closing remark: the answer's last non-blank line,
// a paragraph of its own (a blank line before it) outside code, not a
// heading, list item, table row, quote or HTML, at most 200 bytes, that
// opens with one of closingOpeners. Only such an answer pays a second
// parse.
func stripClosing(d *markdown.Doc, nb *notebook) (string, bool) {
	text := d.Text
	end := len(strings.TrimRight(text, " \t\n"))
	if end == 0 {
		return "", false
	}
	start := lineStart(text, end-1)
	n := lineNo(text, start)
	if n < 2 || n > len(d.Lead) || d.Lead[n-1] == 0 || d.Lead[n-2] != 0 || strings.TrimSpace(text[lineStart(text, max(start-1, 0)):max(start-1, 0)]) != "" {
		return "", false
	}
	// TrimSpace also trims what the line's end above keeps (a CR, a
	// Unicode space): the line may be blank.
	line := strings.TrimSpace(text[start:end])
	if line == "" || len(line) > 200 || strings.ContainsAny(line[:1], "#-*+|><`~=0123456789") {
		return "", false
	}
	low := strings.ToLower(line)
	for _, o := range closingOpeners {
		if strings.HasPrefix(low, o) {
			nb.add(KindClosingRemark, n, line)
			return text[:start] + text[end:], true
		}
	}
	return "", false
}
