package validate

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/gapsfile"
	"github.com/refine-spec/refine/internal/markdown"
	"github.com/refine-spec/refine/internal/markers"
)

// The failure types of a discovery answer (DESIGN §19).
const (
	// MalformedGap is MALFORMED_GAP: a line of the gap list is not a gap
	// line, a gap's ID or severity is not valid, a gap lacks its Location
	// or Why line (or has two), or the answer lists more gaps than
	// DiscoveryOptions.MaxGaps.
	MalformedGap FailureType = "MALFORMED_GAP"
	// DuplicateGap is DUPLICATE_GAP: a gap ID is listed twice, or is
	// already in the given list (DiscoveryOptions.Known).
	DuplicateGap FailureType = "DUPLICATE_GAP"
	// UnlocatedGap is UNLOCATED_GAP: a gap's Location is neither a heading
	// of the spec nor text of it.
	UnlocatedGap FailureType = "UNLOCATED_GAP"
)

// noGapsMark is the discovery answer that finds nothing to refine.
const noGapsMark = "NO_GAPS_FOUND"

// DiscoveryOptions carries what reading a discovery answer needs beyond
// the answer.
type DiscoveryOptions struct {
	// Spec is the draft the answer is about: every gap's Location must be
	// found in it. "" skips that check.
	Spec string
	// Known are the gaps already listed (`refine run --gaps G --discover`
	// proposes additions to G): an answer listing one of them again is
	// DUPLICATE_GAP.
	Known []gap.ID
	// MaxGaps caps how many gaps an answer may list (the session's
	// Config.MaxGaps, less the Known ones); 0 means no cap beyond
	// MaxOutputBytes.
	MaxGaps int
	// MaxOutputBytes caps the answer's size; 0 means DefaultMaxOutputBytes.
	MaxOutputBytes int
	// FinishReason is the backend's reason for ending the answer, as in
	// Options: one that says the token limit cut it is TRUNCATED, a
	// provider's refusal REFUSAL, before anything is read.
	FinishReason string
}

// DiscoveryResult is the outcome of reading a discovery answer. The
// embedded Result says whether it is valid (Success, FailureType,
// Retriable, Message, Tier, Line, Warnings, Text, Normalized); its
// Engineer and Reviewer fields stay empty. After a Content failure
// (DUPLICATE_GAP, UNLOCATED_GAP) Gaps holds every gap read; after a
// Structure failure it is empty.
type DiscoveryResult struct {
	Result
	// Gaps are the gaps the answer lists, in its order, with their
	// Location and Why; IDs are the answer's (an ID a "(GAP-…)"
	// annotation of the draft gives is kept as written).
	Gaps []gap.Gap
	// NoGapsFound is true when the answer says NO_GAPS_FOUND and lists no
	// gap.
	NoGapsFound bool
	// Checklist holds the answer's task-list items ("- [x] …"), what it
	// says it checked, text after the box.
	Checklist []string
}

// Discovery reads a discovery answer (DESIGN §19) through the one
// normalization step of DESIGN §18: a gap list, each gap a line
// "- GAP-AREA-NNN (SEVERITY): title" followed by a "Location:" line (a
// heading of the spec, or its text in double quotes) and a "Why:" line;
// or NO_GAPS_FOUND with a short checklist ("- [x] …").
//
// A gap line is read as meant when written as a numbered or "*" list item,
// a heading, or a line without a list marker, with emphasis or backticks
// around the ID, a severity in brackets and a dash instead of the colon
// (each kind is a Normalized entry); severity is MEDIUM when none is
// stated (DESIGN §4). Prose before the first gap and after the list
// (a preamble, closing remarks) is not read. Still failures, each
// located at its line:
//
//   - MALFORMED_GAP: a line whose text starts with "GAP" but is not a
//     valid gap line (a bad ID or severity, no title); a list item with
//     a severity but no ID; a top-level list item after the first gap
//     that is no gap line (a checklist item aside); text under a gap that
//     is not its Location or Why line; a Location or Why line that
//     follows no gap, is empty, or is a gap's second; a gap without its
//     Location or Why; more gaps than opt.MaxGaps (the message names the
//     cap).
//   - DUPLICATE_GAP: an ID listed twice or in opt.Known.
//   - UNLOCATED_GAP: a Location not found in opt.Spec. Text in double
//     quotes (straight or curly) must be in the spec, compared with white
//     space collapsed, quotes and dashes folded, emphasis marks and
//     backticks dropped and case ignored, "…" read as "anything between"
//     and closing punctuation left out; a Location without quotes must
//     name a heading by its words ("§2 Endpoints", "Endpoints", "Section
//     2", "2. Endpoints > Create"; a pointer after a comma or parenthesis
//     may follow), or be text of the spec.
//   - WRONG_FORMAT: neither a gap nor NO_GAPS_FOUND.
//
// NO_GAPS_FOUND without a checklist, and with gaps (which then count),
// are warnings; so is a "(GAP-…)" annotation of the spec whose ID the
// answer neither lists nor finds in opt.Known. Like every validator, it
// never panics and runs in time linear in the answer and the spec (a
// Location is found through a suffix array of the spec when there are
// many).
func Discovery(content string, opt DiscoveryOptions) DiscoveryResult {
	d, base, ok := readDiscovery(content, opt)
	if !ok {
		return DiscoveryResult{Result: base}
	}
	rd := discoveryReader{d: d, opt: opt, known: idSet(opt.Known), first: map[gap.ID]int{}, headings: map[int]bool{}}
	for _, h := range d.Headings {
		rd.headings[h.Line] = true
	}
	fail := rd.read()
	base.Normalized = append(base.Normalized, rd.notes...)
	w := warningsOf(base.Normalized)
	base.Warnings = w.list()
	if fail != nil {
		return DiscoveryResult{Result: base.fail(*fail)}
	}

	res := DiscoveryResult{Result: base, Gaps: rd.gaps, Checklist: rd.checklist}
	switch {
	case len(rd.gaps) == 0 && !rd.statesNone:
		t, why := classifyUnread(d)
		if t == "" {
			t, why = WrongFormat, "the answer lists no gap (\"- GAP-AREA-NNN (SEVERITY): title\" lines, each with \"Location:\" and \"Why:\" lines) and does not say "+noGapsMark
		}
		return DiscoveryResult{Result: base.fail(failTier(t, 0, "%s", why))}
	case len(rd.gaps) == 0:
		res.NoGapsFound = true
		if len(rd.checklist) == 0 {
			w.add(0, "%s without a checklist (\"- [x] …\" items saying what was checked)", noGapsMark)
		}
	case rd.statesNone:
		w.add(0, "the answer says %s but lists %s; the gaps count", noGapsMark, plural(len(rd.gaps), "gap"))
	}
	res.Warnings = w.list()
	if len(rd.duplicates) > 0 {
		res.Result = res.fail(rd.dupFailure(rd.duplicates[0]))
		return res
	}
	if opt.Spec != "" {
		loc := newLocator(opt.Spec, len(rd.gaps))
		for i, g := range rd.gaps {
			if !loc.found(g.Location) {
				res.Result = res.fail(failTier(UnlocatedGap, rd.lines[i], "gap %s: its Location %s is not in the spec: quote the spec's own words in double quotes, or name one of its headings", g.ID, showLocation(g.Location)))
				return res
			}
		}
		if strings.Contains(opt.Spec, "GAP-") { // else no annotation to look for
			for _, m := range markers.Scan(opt.Spec) {
				if m.ID != "" && rd.first[m.ID] == 0 && !rd.known[m.ID] {
					w.add(0, "the spec marks %s (line %d) but the answer lists no gap with that ID", m.ID, m.Line)
				}
			}
		}
	}
	res.Warnings = w.list()
	res.Success = true
	found := noGapsMark + " with a checklist of " + plural(len(rd.checklist), "item")
	if len(rd.gaps) > 0 {
		found = plural(len(rd.gaps), "gap") + " (" + severityCounts(rd.gaps) + ")"
	}
	res.Message = successMessage(res.Warnings, found)
	return res
}

// The one place discovery meets the reading of DESIGN §18 (#38): the
// checks before reading, the normalization, and the classification of an
// answer that holds nothing to read.

// readDiscovery runs what every answer gets before it is read (size, the
// finish reason, emptiness, text) and reads it through the normalization
// every reader shares, with only the rules every answer gets (a discovery
// answer has no required header): the document as read and a Result
// holding the reading (Text, Normalized, their warnings). ok is false with
// the failure when a check fails.
func readDiscovery(content string, opt DiscoveryOptions) (*markdown.Doc, Result, bool) {
	sc, base, ok := begin(content, Options{MaxOutputBytes: opt.MaxOutputBytes}.maxBytes(), opt.FinishReason, roleNone)
	return sc.d, base, ok
}

// classifyUnread says whether an answer with neither gaps nor
// NO_GAPS_FOUND declines the task (REFUSAL) or asks a question back
// (CLARIFICATION), as DESIGN §18 classifies an answer without its
// required header; "" when it is neither, which makes it WRONG_FORMAT.
func classifyUnread(d *markdown.Doc) (FailureType, string) { return headerless(d) }

// gapListLine reports whether a line, its indent removed, is a gap line
// or NO_GAPS_FOUND: what makes a discovery answer, which has no heading,
// an answer when it is wrapped whole in a fence (Normalize unwraps it).
func gapListLine(t string) bool {
	t = strings.TrimLeft(strings.TrimPrefix(strings.TrimPrefix(t, "- "), "* "), " `")
	return strings.HasPrefix(t, "GAP-") || strings.HasPrefix(t, noGapsMark)
}

// failTier is failAt with the tier a discovery failure belongs to:
// Structure for what makes the list unreadable, Content for what is wrong
// with what it says.
func failTier(t FailureType, line int, format string, args ...any) Result {
	r := failAt(t, line, format, args...)
	switch t {
	case MalformedGap, WrongFormat, Truncated, Refusal, Clarification:
		r.Tier = Structure
	default:
		r.Tier = Content
	}
	return r
}

// showLocation quotes a Location for a message, unless it is a quotation
// already.
func showLocation(loc string) string {
	if q := quotations(loc); len(q) == 1 && strings.TrimSpace(loc) == "\""+q[0]+"\"" {
		return quote(q[0])
	}
	return quote(loc)
}

func severityCounts(gaps []gap.Gap) string {
	counts := map[gap.Severity]int{}
	for _, g := range gaps {
		counts[g.Severity]++
	}
	var parts []string
	for _, s := range gap.All() {
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
		}
	}
	return strings.Join(parts, ", ")
}

// discoveryReader reads the lines of an answer.
type discoveryReader struct {
	d        *markdown.Doc
	opt      DiscoveryOptions
	known    map[gap.ID]bool
	headings map[int]bool // lines that are headings

	gaps       []gap.Gap
	lines      []int          // the line of each gap
	first      map[gap.ID]int // the line each ID is first listed on
	duplicates []gap.ID       // IDs listed twice or known, in order
	dupLines   []int
	checklist  []string
	statesNone bool
	notes      []Normalization

	open   bool // the last gap may still take Location and Why lines
	blank  bool // a blank line came since the last line read
	listed bool // a gap line has been read
}

// read reads every line; a MALFORMED_GAP stops it.
func (rd *discoveryReader) read() *Result {
	for n := 1; n <= rd.d.LineCount(); n++ {
		if f := rd.line(n); f != nil {
			return f
		}
	}
	return rd.closeGap()
}

func (rd *discoveryReader) malformed(n int, format string, args ...any) *Result {
	r := failTier(MalformedGap, n, format, args...)
	return &r
}

// line reads line n.
func (rd *discoveryReader) line(n int) *Result {
	raw, prose := rd.d.Line(n), rd.d.ProseLine(n)
	if strings.TrimSpace(prose) == "" {
		rd.blank = rd.blank || strings.TrimSpace(raw) == "" // a code line is read as nothing, not as a break
		return nil
	}
	blank := rd.blank
	rd.blank = false
	if strings.Contains(prose, noGapsMark) || strings.Contains(strings.ToLower(prose), "no gaps found") {
		rd.statesNone = true
	}
	indent, textAt, isItem := listItem(prose)
	if isItem {
		if box := strings.TrimLeft(prose[textAt:], " \t"); strings.HasPrefix(box, "[ ]") || strings.HasPrefix(box, "[x]") || strings.HasPrefix(box, "[X]") {
			rd.checklist = append(rd.checklist, strings.TrimSpace(raw[len(raw)-len(box)+3:]))
			if f := rd.closeGap(); f != nil {
				return f
			}
			return nil
		}
	}
	if field, value, ok := gapsfile.ParseDetail(raw); ok {
		return rd.detail(n, field, value)
	}
	if canon, kind, ok := gapLineText(rd.d, n); ok {
		if kind != "" {
			rd.note(kind, n, raw)
		}
		return rd.gapLine(n, canon)
	}
	if isItem && looksLikeGap(raw[textAt:]) {
		return rd.malformed(n, "a gap without an ID: %s: write \"- GAP-AREA-NNN (SEVERITY): title\"", quote(raw))
	}
	lineIndent := len(raw) - len(strings.TrimLeft(raw, " \t"))
	switch {
	case rd.headings[n]:
		// A heading ("## Gaps") is not read; it ends the gap before it.
	case rd.listed && isItem && indent <= 1:
		return rd.malformed(n, "a list item in the gap list that is not a gap line: %s: write \"- GAP-AREA-NNN (SEVERITY): title\"", quote(raw))
	case rd.open && (!blank || lineIndent >= 2):
		return rd.malformed(n, "text under gap %s that is not its Location or Why line: %s: a gap takes only \"Location:\" and \"Why:\" lines under it", rd.gaps[len(rd.gaps)-1].ID, quote(raw))
	}
	// A heading, a preamble or a closing remark: not read.
	return rd.closeGap()
}

// detail records a Location or Why line on the gap before it.
func (rd *discoveryReader) detail(n int, field, value string) *Result {
	if !rd.open {
		return rd.malformed(n, "a %s line that follows no gap line: put it under the \"- GAP-…\" line it belongs to", field)
	}
	g := &rd.gaps[len(rd.gaps)-1]
	if err := gapsfile.SetDetail(g, field, value); err != nil {
		return rd.malformed(n, "gap %s: %v", g.ID, err)
	}
	return nil
}

// gapLine reads a gap line in its canonical form.
func (rd *discoveryReader) gapLine(n int, canon string) *Result {
	if f := rd.closeGap(); f != nil {
		return f
	}
	g, err := gapsfile.ParseGapLine(canon)
	if err != nil {
		return rd.malformed(n, "%v", err)
	}
	if max := rd.opt.MaxGaps; max > 0 && len(rd.gaps) >= max {
		return rd.malformed(n, "more than %d gaps: list at most %d (the session's MaxGaps), the most important first", max, max)
	}
	if _, dup := rd.first[g.ID]; dup || rd.known[g.ID] {
		rd.duplicates, rd.dupLines = append(rd.duplicates, g.ID), append(rd.dupLines, n)
	} else {
		rd.first[g.ID] = n
	}
	rd.gaps, rd.lines = append(rd.gaps, g), append(rd.lines, n)
	rd.open, rd.listed = true, true
	return nil
}

// closeGap ends the last gap's lines: it must have had both.
func (rd *discoveryReader) closeGap() *Result {
	if !rd.open {
		return nil
	}
	rd.open = false
	i := len(rd.gaps) - 1
	g := rd.gaps[i]
	for _, miss := range [...]struct{ field, value, what string }{
		{gapsfile.Location, g.Location, "a heading of the spec, or its words in double quotes"},
		{gapsfile.Why, g.Why, "what an implementer cannot decide from the spec"},
	} {
		if miss.value == "" {
			return rd.malformed(rd.lines[i], "gap %s has no %s line: add \"  %s: <%s>\" under it", g.ID, miss.field, miss.field, miss.what)
		}
	}
	return nil
}

// dupFailure is the DUPLICATE_GAP of id, the first duplicate.
func (rd *discoveryReader) dupFailure(id gap.ID) Result {
	n := rd.dupLines[0]
	if rd.known[id] {
		return failTier(DuplicateGap, n, "gap %s is already in the gap list: propose only gaps the list does not hold, with IDs it does not use", id)
	}
	return failTier(DuplicateGap, n, "gap %s is listed twice (first at line %d): list each gap once, with an ID of its own", id, rd.first[id])
}

// KindGapLine is the Normalization of a gap line written in another form
// than "- GAP-AREA-NNN (SEVERITY): title" and read as meant.
const KindGapLine = "gap-line-form"

func (rd *discoveryReader) note(kind string, n int, raw string) {
	for i := range rd.notes {
		if rd.notes[i].Kind == kind {
			rd.notes[i].Count++
			return
		}
	}
	rd.notes = append(rd.notes, Normalization{Kind: kind, Count: 1, Line: n, First: strings.TrimSpace(raw)})
}

// gapLineText reads line n as a gap line when its text starts with "GAP"
// (and not "GAPs") after a list marker, heading marks and emphasis, and
// returns it in the canonical form gapsfile.ParseGapLine reads
// ("- ID (SEVERITY): title"); kind is KindGapLine when the line was
// written in another form. A line that starts so but is not a valid gap
// line still returns ok, so that ParseGapLine names what is wrong with it.
func gapLineText(d *markdown.Doc, n int) (canon, kind string, ok bool) {
	raw := d.Line(n)
	s := strings.TrimSpace(raw)
	other := false // written in another form than the canonical one
	switch _, at, isItem := listItem(d.ProseLine(n)); {
	case isItem:
		other = !strings.HasPrefix(s, "- ") && !strings.HasPrefix(s, "* ")
		s = strings.TrimSpace(raw[at:])
	case strings.HasPrefix(s, "#"):
		s, other = strings.TrimLeft(s, "# "), true
	default:
		other = true // no list marker
	}
	body := strings.TrimLeft(s, "*_`[ ")
	if !strings.HasPrefix(body, "GAP") || (len(body) > 3 && body[3] >= 'a' && body[3] <= 'z') {
		return "", "", false
	}
	other = other || len(body) != len(s)
	end := strings.IndexAny(body, " (:*_`]—–[")
	if end < 0 {
		end = len(body)
	}
	id, after := body[:end], body[end:]
	rest := strings.TrimLeft(after, "*_`] ")
	other = other || (rest != strings.TrimLeft(after, " "))
	sev := ""
	if strings.HasPrefix(rest, "(") || strings.HasPrefix(rest, "[") {
		closer := byte(')')
		if rest[0] == '[' {
			closer, other = ']', true
		}
		j := strings.IndexByte(rest, closer)
		if j < 0 {
			return "- " + id + " " + rest, "", true // unclosed: ParseGapLine says so
		}
		word := strings.Trim(rest[1:j], " *_")
		if w, found := strings.CutPrefix(strings.ToLower(word), "severity:"); found {
			word = strings.TrimSpace(w)
		}
		other = other || word != rest[1:j]
		sev, rest = " ("+word+")", rest[j+1:]
	}
	sep := strings.TrimLeft(rest, "*_ ")
	other = other || (len(sep) != len(rest) && strings.TrimLeft(rest, " ") != sep)
	switch {
	case strings.HasPrefix(sep, ":"):
		rest = sep[1:]
	case strings.HasPrefix(sep, "—"), strings.HasPrefix(sep, "–"):
		rest, other = sep[len("—"):], true
	case strings.HasPrefix(sep, "- "):
		rest, other = sep[1:], true
	default:
		return "- " + id + sev + sep, "", true // no ": title": ParseGapLine says so
	}
	title := trimEmphasis(strings.TrimLeft(rest, "*_ "))
	other = other || strings.TrimSpace(rest) != title
	if other {
		kind = KindGapLine
	}
	return "- " + id + sev + ": " + title, kind, true
}

// looksLikeGap reports whether a list item's text reads like a gap line
// without its ID: a severity in parentheses or brackets, then a colon or
// dash ("(HIGH): Pagination", "**[HIGH]** — Pagination").
func looksLikeGap(text string) bool {
	s := strings.TrimLeft(text, "*_ ")
	if s == "" || (s[0] != '(' && s[0] != '[') {
		return false
	}
	_, rest, ok := leadingSeverity(s)
	rest = strings.TrimLeft(rest, "*_ ")
	return ok && (strings.HasPrefix(rest, ":") || strings.HasPrefix(rest, "—") || strings.HasPrefix(rest, "–") || strings.HasPrefix(rest, "- "))
}

// DiscoveryReport is the JSON form of a DiscoveryResult: snake_case keys,
// every field present, lists empty rather than null.
type DiscoveryReport struct {
	Success     bool        `json:"success"`
	FailureType FailureType `json:"failure_type"`
	Retriable   bool        `json:"retriable"`
	Message     string      `json:"message"`
	Line        int         `json:"line"`
	Warnings    []string    `json:"warnings"`
	Gaps        []ReportGap `json:"gaps"`
	NoGapsFound bool        `json:"no_gaps_found"`
	Checklist   []string    `json:"checklist"`
	// Normalized says what the reading mapped, as in Report.
	Normalized []ReportNormalization `json:"normalized"`
}

// ReportGap is a discovered gap in a DiscoveryReport.
type ReportGap struct {
	ID       gap.ID       `json:"id"`
	Severity gap.Severity `json:"severity"`
	Title    string       `json:"title"`
	Location string       `json:"location"`
	Why      string       `json:"why"`
}

// Report returns the JSON form of r.
func (r DiscoveryResult) Report() DiscoveryReport {
	rep := DiscoveryReport{Success: r.Success, FailureType: r.FailureType, Retriable: r.Retriable, Message: r.Message,
		Line: r.Line, Warnings: append([]string{}, r.Warnings...), Gaps: make([]ReportGap, 0, len(r.Gaps)),
		NoGapsFound: r.NoGapsFound, Checklist: append([]string{}, r.Checklist...),
		Normalized: make([]ReportNormalization, 0, len(r.Normalized))}
	for _, g := range r.Gaps {
		rep.Gaps = append(rep.Gaps, ReportGap{g.ID, g.Severity, g.Title, g.Location, g.Why})
	}
	for _, n := range r.Normalized {
		rep.Normalized = append(rep.Normalized, ReportNormalization(n))
	}
	return rep
}

// MarshalJSON encodes r as its Report (the embedded Result's own
// MarshalJSON would leave the gaps out).
func (r DiscoveryResult) MarshalJSON() ([]byte, error) { return json.Marshal(r.Report()) }
