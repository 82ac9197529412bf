package validate

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/markdown"
)

// The failure types of the integration step (DESIGN §16): the Engineer's
// last call of a session writes the whole refined spec, and these say what
// is wrong with it.
const (
	// IntegrationStructure is INTEGRATION_STRUCTURE: a heading of the source
	// spec is missing and not logged as removed or renamed, the
	// "## Resolution Log" table is missing or malformed, the open gaps have
	// no "## Known Limitations" section, or the spec is far larger than its
	// material.
	IntegrationStructure FailureType = "INTEGRATION_STRUCTURE"
	// IntegrationMissing is INTEGRATION_MISSING: an accepted gap or a
	// decision has no row in the Resolution Log, a logged section does not
	// exist, an open gap or issue is not listed under Known Limitations, or the spec
	// is so much shorter than its material that resolutions were dropped.
	IntegrationMissing FailureType = "INTEGRATION_MISSING"
	// IntegrationStale is INTEGRATION_STALE: the body still describes a
	// resolved gap as open, unspecified or TBD (the source's sentence kept,
	// or the gap's marker in such a sentence).
	IntegrationStale FailureType = "INTEGRATION_STALE"
)

// Size bounds of an integrated spec, as shares of its material (the
// source spec plus the accepted resolutions), in characters.
const (
	IntegrationMinSize = 0.8
	IntegrationMaxSize = 1.6
)

// DefaultKeyTermsThreshold is the share of a resolution's key terms (code
// identifiers, field names, numbers) the integrated spec must contain;
// below it the resolution is reported as probably lost, as a warning. Half:
// an integration legitimately rewords prose and drops a resolution's
// worked examples, but a resolution whose identifiers and numbers are
// mostly gone did not make it into the spec.
const DefaultKeyTermsThreshold = 0.5

// minKeyTerms is the fewest key terms a resolution must have for the
// key-terms check to judge it: with fewer, one rewording is half of them.
const minKeyTerms = 4

// Headings of the integrated spec the step requires, as written.
const (
	resolutionLogTitle    = "Resolution Log"
	knownLimitationsTitle = "Known Limitations"
)

// IntegrationInput is what an integrated spec is checked against.
type IntegrationInput struct {
	// Source is the spec the session refined.
	Source string
	// Resolutions are the accepted gaps with their final resolutions.
	Resolutions []Resolution
	// Decisions are the IDs of the session's decisions (DECISION-R…), each
	// of which needs a row in the Resolution Log.
	Decisions []string
	// Limitations are the gaps that stay open or deferred: each belongs
	// under "## Known Limitations".
	Limitations []gap.ID
	// OpenIssues are the other known limitations, by ID (ISSUE-R…): open
	// issues of the last approved review, unresolved conflicts, waived
	// issues. Each belongs under "## Known Limitations" too.
	OpenIssues []string
	// MaxOutputBytes caps the output size; 0 means DefaultMaxOutputBytes.
	MaxOutputBytes int
	// KeyTermsThreshold overrides DefaultKeyTermsThreshold when positive.
	KeyTermsThreshold float64
	// OtherHeadings are headings of the rest of the spec when it is
	// integrated part by part: a log row may name them too.
	OtherHeadings []string
	// SkipSize leaves out the size bounds: a part of a spec integrated
	// part by part is small beside its Known Limitations and log; the
	// joined spec is measured.
	SkipSize bool
	// FinishReason is the backend's finish reason for the output, as
	// Options.FinishReason: a cut answer is TRUNCATED, a refused one REFUSAL.
	FinishReason string
}

// Resolution is an accepted gap's final resolution.
type Resolution struct {
	ID   gap.ID
	Text string
}

// LogEntry is one row of an integrated spec's Resolution Log.
type LogEntry struct {
	// Item is the row's first cell: a gap ID, a decision ID, or a source
	// heading that was removed or renamed.
	Item string `json:"item"`
	// Sections are the headings of the integrated spec the item now lives
	// in (empty for "—").
	Sections []string `json:"sections"`
	Note     string   `json:"note"`
	// Line is the row's 1-based line in the output.
	Line int `json:"line"`
}

// IntegrationResult is the verdict on an integrated spec with its parsed
// Resolution Log.
type IntegrationResult struct {
	Result
	// Log holds the Resolution Log's rows in order; nil after a Structure
	// failure of the log itself.
	Log []LogEntry
}

// Integration validates an integrated spec (DESIGN §16) in two tiers.
//
// Sizes are in characters; the spec's size leaves its Resolution Log out.
//
// Tier 1 (Structure, INTEGRATION_STRUCTURE): the size, emptiness and
// encoding checks every output gets; a "## Resolution Log" section holding
// a table "| Item | Section(s) | Note |" whose every row has three cells;
// every level-1 and level-2 heading of the source kept (at any level, same
// title, letter case and emphasis aside) unless a log row names it; a
// "## Known Limitations" section when limitations are known; and a size at most
// IntegrationMaxSize times the material.
//
// Tier 2 (Content): INTEGRATION_MISSING when an accepted gap or a decision
// has no log row, a logged section names no heading of the output, an open
// gap or open issue is not listed under Known Limitations, or the size is below
// IntegrationMinSize times the material; INTEGRATION_STALE when a sentence
// of the body (the output without its log) names a resolved gap and calls
// it open, unspecified or TBD, or repeats a source sentence that did. A
// resolution whose key terms are mostly missing is a warning.
func Integration(content string, in IntegrationInput) IntegrationResult {
	maxBytes := in.MaxOutputBytes
	if maxBytes <= 0 {
		maxBytes = DefaultMaxOutputBytes
	}
	sc, base, ok := begin(content, maxBytes, in.FinishReason, roleIntegration)
	if !ok {
		return IntegrationResult{Result: base}
	}
	d := sc.d
	out := parseDoc(d)
	src := parseDoc(markdown.Parse(in.Source))
	for _, h := range in.OtherHeadings {
		for _, k := range headingKeys(h) {
			out.keys[k] = true
		}
	}

	// Tier 1.
	logSec, ok := out.section(2, resolutionLogTitle)
	if !ok && len(d.Headings) == 0 {
		if t, msg := headerless(d); t != "" {
			return IntegrationResult{Result: base.fail(Fail(t, msg))}
		}
	}
	if !ok {
		hint, line := missingHeader(d, "## "+resolutionLogTitle)
		return base.integrationFail(IntegrationStructure, line, "no \"## %s\" section%s: end the spec with it, a table | Item | Section(s) | Note | with one row per accepted gap and per decision", resolutionLogTitle, hint)
	}
	log, fail := parseLog(d, logSec, len(in.Resolutions)+len(in.Decisions) > 0)
	if fail != nil {
		return IntegrationResult{Result: base.fail(*fail)}
	}
	kept, items := 0, logItems(log)
	for _, h := range src.headings {
		if h.Level > 2 {
			continue
		}
		kept++
		if out.titles[normTitle(h.Title)] || logNames(items, h.Title) {
			continue
		}
		return base.integrationFail(IntegrationStructure, 0, "the source heading %q (line %d of the source) is missing: keep it, or add a Resolution Log row | %s | <new heading or —> | renamed/removed: why |",
			strings.Repeat("#", h.Level)+" "+h.Title, h.Line, h.Title)
	}
	limits, hasLimits, lfail := limitationsSection(d, out, in)
	if lfail != nil {
		return IntegrationResult{Result: base.fail(lfail.Result)}
	}
	// The log is bookkeeping, not spec: the size is the rest's.
	size, material := utf8.RuneCountInString(d.Text)-utf8.RuneCountInString(d.Text[logSec.Start:logSec.End]), materialSize(in)
	if material > 0 && !in.SkipSize && float64(size) > IntegrationMaxSize*float64(material) {
		return base.integrationFail(IntegrationStructure, 0, "the spec is %d characters, more than %.1f× its material (%d: the source spec plus the accepted resolutions): write the spec once, without commentary, repeated sections or the resolutions' review notes",
			size, IntegrationMaxSize, material)
	}

	// Tier 2: everything accounted for.
	logged := map[string]bool{}
	for _, e := range log {
		for _, id := range gap.FindIDs(e.Item) {
			logged[string(id)] = true
		}
		for _, id := range gap.FindDecisionIDs(e.Item) {
			logged[id] = true
		}
	}
	for _, r := range in.Resolutions {
		if !logged[string(r.ID)] {
			return base.integrationFail(IntegrationMissing, d.LineOf(logSec.Start), "the accepted gap %s has no Resolution Log row: add | %s | <section(s) now holding it> | <note> |", r.ID, r.ID)
		}
	}
	for _, id := range in.Decisions {
		if !logged[id] {
			return base.integrationFail(IntegrationMissing, d.LineOf(logSec.Start), "the decision %s has no Resolution Log row: add | %s | <section(s) it shaped, or —> | <note> |", id, id)
		}
	}
	for _, e := range log {
		for _, s := range e.Sections {
			if !out.resolves(s) {
				return base.integrationFail(IntegrationMissing, e.Line, "the log row for %s names the section %q, which is not a heading of the spec: name the headings exactly as written", e.Item, s)
			}
		}
	}
	if hasLimits {
		if fail := unlistedLimitation(d, limits, in); fail != nil {
			return IntegrationResult{Result: base.fail(fail.Result)}
		}
	}
	if material > 0 && !in.SkipSize && float64(size) < IntegrationMinSize*float64(material) {
		return base.integrationFail(IntegrationMissing, 0, "the spec is %d characters, less than %.1f× its material (%d: the source spec plus the accepted resolutions): merge each resolution in full (its rules, fields, numbers and examples), do not summarise it",
			size, IntegrationMinSize, material)
	}

	// Tier 2: nothing resolved still described as open.
	body := d.Prose[:logSec.Start] + strings.Repeat(" ", logSec.End-logSec.Start) + d.Prose[logSec.End:]
	if f := staleCheck(d, body, in); f != nil {
		return IntegrationResult{Result: base.fail(*f), Log: log}
	}

	w := warningsOf(base.Normalized)
	bodyTokens := tokenSet(d.Text[:logSec.Start] + d.Text[logSec.End:])
	threshold := in.KeyTermsThreshold
	if threshold <= 0 {
		threshold = DefaultKeyTermsThreshold
	}
	for _, r := range in.Resolutions {
		terms := KeyTerms(r.Text)
		if len(terms) < minKeyTerms {
			continue
		}
		var missing []string
		for _, t := range terms {
			if !hasTerm(bodyTokens, t) {
				missing = append(missing, t)
			}
		}
		if found := len(terms) - len(missing); float64(found) < threshold*float64(len(terms)) {
			w.add(0, "%s: only %d of its resolution's %d key terms appear in the spec (missing: %s); check that the resolution was merged, not lost", r.ID, found, len(terms), strings.Join(firstN(missing, 8), ", "))
		}
	}
	res := base
	res.Success, res.Warnings = true, w.list()
	res.Message = fmt.Sprintf("integrated spec: %d log rows, %d source headings kept or logged", len(log), kept)
	return IntegrationResult{Result: res, Log: log}
}

func failIntegration(t FailureType, line int, format string, args ...any) IntegrationResult {
	return IntegrationResult{Result: failAt(t, line, format, args...)}
}

// integrationFail turns the reading res into the failure of type t.
func (res Result) integrationFail(t FailureType, line int, format string, args ...any) IntegrationResult {
	return IntegrationResult{Result: res.fail(failAt(t, line, format, args...))}
}

// materialSize is the size, in characters, of what the integration merges.
func materialSize(in IntegrationInput) int {
	n := utf8.RuneCountInString(in.Source)
	for _, r := range in.Resolutions {
		n += utf8.RuneCountInString(r.Text)
	}
	return n
}

// specDoc is a scanned spec with its headings keyed for matching.
type specDoc struct {
	d        *markdown.Doc
	headings []markdown.Heading
	// titles are the headings' normalized titles; keys every key they
	// match by (headingKeys).
	titles, keys map[string]bool
}

func parseDoc(d *markdown.Doc) specDoc {
	s := specDoc{d: d, headings: d.Headings, titles: map[string]bool{}, keys: map[string]bool{}}
	for _, h := range d.Headings {
		s.titles[normTitle(h.Title)] = true
		for _, k := range headingKeys(h.Title) {
			s.keys[k] = true
		}
	}
	return s
}

// section returns the first section at level whose title is title (letter
// case, emphasis and a section number aside).
func (s specDoc) section(level int, title string) (markdown.Section, bool) {
	for _, sec := range s.d.Sections() {
		if sec.Level == level && titleIs(sec.Title, title) {
			return sec, true
		}
	}
	return markdown.Section{}, false
}

// titleIs reports whether heading title t is want, letter case, emphasis
// and a section number ("7. Known Limitations") aside.
func titleIs(t, want string) bool {
	w := normTitle(want)
	for _, k := range headingKeys(t) {
		if k == w {
			return true
		}
	}
	return false
}

// resolves reports whether a section reference of a log row names a
// heading: by its title, its title without its number ("Endpoints" for
// "2. Endpoints"), or its number ("§2", "2.1").
func (s specDoc) resolves(ref string) bool {
	match := func(ref string) bool {
		for _, k := range headingKeys(ref) {
			if s.keys[k] {
				return true
			}
		}
		return false
	}
	if match(ref) {
		return true
	}
	// "2. Endpoints (POST /v1/orders)": one note in parentheses.
	i := strings.LastIndexByte(ref, '(')
	return i > 0 && strings.HasSuffix(strings.TrimSpace(ref), ")") && match(ref[:i])
}

var (
	sectionNumber = regexp.MustCompile(`^§?\s*(\d+(?:\.\d+)*)\.?(?:\s+|$)`)
	emphasis      = strings.NewReplacer("**", "", "__", "", "`", "", "*", "", "\u00a0", " ")
)

// normTitle is a heading title as compared: no leading #s or closing #s,
// no emphasis or code marks, lower case, single spaces.
func normTitle(t string) string {
	t = strings.TrimSpace(t)
	t = strings.TrimLeft(t, "#")
	t = strings.TrimRight(t, "# ")
	t = emphasis.Replace(t)
	return strings.ToLower(strings.Join(strings.Fields(t), " "))
}

// headingKeys are the keys a heading (or a reference to one) matches by.
func headingKeys(t string) []string {
	n := normTitle(t)
	if n == "" {
		return nil
	}
	keys := []string{n}
	if m := sectionNumber.FindStringSubmatch(n); m != nil {
		keys = append(keys, "§"+m[1])
		if rest := strings.TrimSpace(n[len(m[0]):]); rest != "" {
			keys = append(keys, rest)
		}
	}
	return keys
}

// logItems are the keys the log rows' items match headings by: their
// titles with and without their numbers.
func logItems(log []LogEntry) map[string]bool {
	items := map[string]bool{}
	for _, e := range log {
		for _, k := range headingKeys(e.Item) {
			if !strings.HasPrefix(k, "§") {
				items[k] = true
			}
		}
	}
	return items
}

// logNames reports whether a log row's item is the heading title (with
// or without its number).
func logNames(items map[string]bool, title string) bool {
	for _, k := range headingKeys(title) {
		if !strings.HasPrefix(k, "§") && items[k] {
			return true
		}
	}
	return false
}

// parseLog reads the Resolution Log's table: a header row naming Item,
// Section(s) and Note, a delimiter row, then rows of three cells, at least
// one when needRows (there are gaps or decisions to log).
func parseLog(d *markdown.Doc, sec markdown.Section, needRows bool) ([]LogEntry, *Result) {
	first, last := d.LineOf(sec.BodyStart), d.LineOf(max(sec.End-1, sec.BodyStart))
	if sec.End <= sec.BodyStart {
		last = first - 1
	}
	header := 0
	for n := first; n <= last; n++ {
		line := strings.TrimSpace(d.ProseLine(n))
		if line == "" {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			continue // prose before the table is allowed
		}
		header = n
		break
	}
	if header == 0 {
		r := failAt(IntegrationStructure, sec.Line, "the Resolution Log has no table: write | Item | Section(s) | Note |, a |---|---|---| line, then one row per accepted gap and per decision")
		return nil, &r
	}
	cells := splitRow(d.Line(header))
	if len(cells) != 3 || !strings.EqualFold(cells[0], "Item") || !strings.HasPrefix(strings.ToLower(cells[1]), "section") || !strings.HasPrefix(strings.ToLower(cells[2]), "note") {
		r := failAt(IntegrationStructure, header, "the Resolution Log's header row is %s: it must read exactly | Item | Section(s) | Note |", quote(strings.TrimSpace(d.Line(header))))
		return nil, &r
	}
	if header+1 > last || !delimiterRow(d.Line(header+1)) {
		// The line that should be the delimiter row; the header's own when
		// the answer ends after it.
		at := header + 1
		if at > last {
			at = header
		}
		r := failAt(IntegrationStructure, at, "the Resolution Log's header row must be followed by the delimiter row |---|---|---|")
		return nil, &r
	}
	var log []LogEntry
	for n := header + 2; n <= last; n++ {
		raw := strings.TrimSpace(d.Line(n))
		if !strings.HasPrefix(raw, "|") {
			break // the table ends at its first line that is not a row
		}
		cells := splitRow(raw)
		if len(cells) != 3 {
			r := failAt(IntegrationStructure, n, "a Resolution Log row has %d cells: every row is | Item | Section(s) | Note |", len(cells))
			r.Tier = Structure
			return nil, &r
		}
		if cells[0] == "" {
			r := failAt(IntegrationStructure, n, "a Resolution Log row has an empty Item cell: name the gap ID, decision ID or source heading")
			r.Tier = Structure
			return nil, &r
		}
		log = append(log, LogEntry{Item: cells[0], Sections: splitSections(cells[1]), Note: cells[2], Line: n})
	}
	if len(log) == 0 && needRows {
		r := failAt(IntegrationStructure, header, "the Resolution Log's table has no rows: one row per accepted gap and per decision")
		return nil, &r
	}
	return log, nil
}

// splitRow splits a table row into its trimmed cells: pipes escaped with a
// backslash or inside a code span do not split.
func splitRow(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	if strings.HasSuffix(line, "|") && !strings.HasSuffix(line, `\|`) {
		line = line[:len(line)-1]
	}
	var cells []string
	var b strings.Builder
	inCode := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\\' && i+1 < len(line) && line[i+1] == '|':
			b.WriteByte('|')
			i++
			continue
		case c == '`':
			inCode = !inCode
		case c == '|' && !inCode:
			cells = append(cells, strings.TrimSpace(b.String()))
			b.Reset()
			continue
		}
		b.WriteByte(c)
	}
	return append(cells, strings.TrimSpace(b.String()))
}

// delimiterRow reports whether line is a table's delimiter row.
func delimiterRow(line string) bool {
	cells := splitRow(line)
	if len(cells) == 0 {
		return false
	}
	for _, c := range cells {
		c = strings.Trim(c, ":")
		if len(c) < 1 || strings.Trim(c, "-") != "" {
			return false
		}
	}
	return true
}

// noSection are the Section(s) cells that name no section.
var noSection = map[string]bool{"": true, "-": true, "—": true, "–": true, "none": true, "n/a": true, "(removed)": true, "removed": true}

// splitSections splits a Section(s) cell into its references: separated
// by ";", "," or "<br>"; "—" and the like name none.
func splitSections(cell string) []string {
	cell = strings.NewReplacer("<br>", ";", "<br/>", ";", "<br />", ";").Replace(cell)
	var out []string
	for _, part := range strings.FieldsFunc(cell, func(r rune) bool { return r == ';' || r == ',' }) {
		part = strings.TrimSpace(part)
		if noSection[strings.ToLower(part)] {
			continue
		}
		out = append(out, part)
	}
	return out
}

// staleWords are the phrases that call something open. Matched in lower case.
var staleWords = regexp.MustCompile(`\b(?:not (?:yet )?(?:specified|defined|decided|determined|documented|designed)|unspecified|undefined|undecided|tbd|tba|todo|to be (?:determined|decided|defined|specified|designed)|(?:is|are|remains?|left|still|stays?) (?:an? )?open|open (?:question|issue|gap)s?|leaves? (?:\w+ ){0,3}open)\b`)

// isStale reports whether a sentence calls something open, however its
// words are wrapped.
func isStale(sentence string) bool {
	return staleWords.MatchString(strings.ToLower(strings.Join(strings.Fields(sentence), " ")))
}

// staleCheck finds a sentence of body that still describes a resolved gap
// as open, or a source sentence that did and is still there.
func staleCheck(d *markdown.Doc, body string, in IntegrationInput) *Result {
	resolved := map[gap.ID]bool{}
	for _, r := range in.Resolutions {
		resolved[r.ID] = true
	}
	limited := map[gap.ID]bool{}
	for _, id := range in.Limitations {
		limited[id] = true
	}
	bodySentences := sentences(body)
	for _, s := range bodySentences {
		if !strings.Contains(s.text, "GAP-") || !isStale(s.text) {
			continue
		}
		var named []gap.ID
		other := namesOpenIssue(s.text, in.OpenIssues)
		for _, id := range gap.FindIDs(s.text) {
			switch {
			case resolved[id]:
				named = append(named, id)
			case limited[id]:
				other = true
			}
		}
		if len(named) > 0 && !other {
			r := failAt(IntegrationStale, d.LineOf(s.start), "%s is resolved, but this sentence still describes it as open: %s; replace it with what the resolution specifies and drop the gap marker",
				joinGapIDs(named), quote(clip(s.text, 160)))
			return &r
		}
	}
	// The source's own sentences about a resolved gap, kept with the
	// marker removed: the same sentence, wrapping, case and punctuation
	// aside (whole sentences, so the check stays linear).
	kept := map[string]int{}
	for _, s := range bodySentences {
		if n := normSentence(s.text); len(n) >= 20 {
			if _, ok := kept[n]; !ok {
				kept[n] = s.start
			}
		}
	}
	srcDoc := markdown.Parse(in.Source)
	for _, s := range sentences(srcDoc.Prose) {
		if !strings.Contains(s.text, "GAP-") {
			continue
		}
		ids := gap.FindIDs(s.text)
		if !slices.ContainsFunc(ids, func(id gap.ID) bool { return resolved[id] }) || !isStale(s.text) {
			continue
		}
		n := normSentence(stripIDs(s.text))
		if len(n) < 20 {
			continue
		}
		if at, ok := kept[n]; ok {
			r := failAt(IntegrationStale, d.LineOf(at), "the source's sentence %s about the resolved %s is still in the spec: replace it with what the resolution specifies",
				quote(clip(strings.Join(strings.Fields(s.text), " "), 160)), joinGapIDs(ids))
			return &r
		}
	}
	return nil
}

// sentence is a sentence of prose and its offset.
type sentence struct {
	text  string
	start int
}

// sentences splits prose into sentences: at a period, question or
// exclamation mark followed by a space, at blank lines, at headings and
// list items, and at table cells.
func sentences(prose string) []sentence {
	var out []sentence
	start := 0
	emit := func(end int) {
		seg := prose[start:end]
		if t := strings.TrimSpace(seg); t != "" {
			out = append(out, sentence{text: t, start: start + len(seg) - len(strings.TrimLeft(seg, " \t\n"))})
		}
		start = end
	}
	for i := 0; i < len(prose); i++ {
		c := prose[i]
		switch {
		case c == '\n':
			// A blank line, or a next line that starts a block, ends the sentence.
			rest := prose[i+1:]
			next := strings.TrimLeft(rest, " \t")
			if next == "" || next[0] == '\n' || next[0] == '#' || next[0] == '|' || next[0] == '>' ||
				strings.HasPrefix(next, "- ") || strings.HasPrefix(next, "* ") || strings.HasPrefix(next, "+ ") || startsNumbered(next) {
				emit(i + 1)
			}
		case c == '|':
			emit(i + 1)
		case (c == '.' || c == '?' || c == '!') && i+1 < len(prose) && (prose[i+1] == ' ' || prose[i+1] == '\n'):
			emit(i + 1)
		}
	}
	emit(len(prose))
	return out
}

func startsNumbered(s string) bool {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i > 0 && i < len(s)-1 && (s[i] == '.' || s[i] == ')') && s[i+1] == ' '
}

var idMarker = regexp.MustCompile(`\(?\bGAP-[A-Z]{2,10}-\d{3}[a-z]?\b\)?`)

// stripIDs removes gap IDs and their parentheses.
func stripIDs(s string) string { return idMarker.ReplaceAllString(s, "") }

// normSentence lower-cases s and keeps only letters and digits, single-spaced,
// so wrapping, emphasis and punctuation do not hide a kept sentence.
func normSentence(s string) string {
	var b strings.Builder
	space := true
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
			space = false
		} else if !space {
			b.WriteByte(' ')
			space = true
		}
	}
	return strings.TrimSpace(b.String())
}

var (
	inlineCode = regexp.MustCompile("`([^`\n]{1,60})`")
	anyID      = regexp.MustCompile(`\b(?:GAP-[A-Z]{2,10}-\d{3}[a-z]?|ISSUE-R\d{1,3}-\d{3}|DECISION-R\d{1,3}-\d{3})\b`)
)

// isNumberTerm: two or more digits, with an optional decimal part (50,
// 3600, 24.5).
func isNumberTerm(t string) bool {
	whole, frac, dot := strings.Cut(t, ".")
	return len(whole) >= 2 && allDigits(whole) && (!dot || frac != "" && allDigits(frac))
}

// isIdentifierTerm: a letter first, then letters and digits with an inner
// '_', '.' or '-' (next_cursor, RateLimit-Limit, v1.2) or a lower-case
// letter followed by a capital (pageSize).
func isIdentifierTerm(t string) bool {
	if t == "" || !isASCIILetter(t[0]) {
		return false
	}
	inner, camel := false, false
	for i := 1; i < len(t); i++ {
		c := t[i]
		switch {
		case c == '_' || c == '.' || c == '-':
			inner = true
		case c >= 'A' && c <= 'Z' && t[i-1] >= 'a' && t[i-1] <= 'z':
			camel = true
		case isASCIILetter(c) || c >= '0' && c <= '9':
		default:
			return false
		}
	}
	return inner || camel
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// maxKeyTerms bounds the terms taken from one resolution.
const maxKeyTerms = 40

// KeyTerms returns a resolution's key terms, distinct, in order of first
// appearance: its inline code spans, identifiers with an inner '_', '.',
// '-' or capital (next_cursor, RateLimit-Limit, pageSize), and numbers of
// two or more digits, outside fenced blocks; IDs of gaps, issues and
// decisions excepted. At most 40.
func KeyTerms(resolution string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(t string) {
		t = strings.TrimSpace(t)
		if t == "" || seen[t] || anyID.MatchString(t) || len(termTokens(t)) == 0 || len(out) >= maxKeyTerms {
			return
		}
		seen[t] = true
		out = append(out, t)
	}
	var fence string // the open fence's marker, "" outside a fenced block
	for _, line := range strings.Split(markdown.Normalize(resolution), "\n") {
		t := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = t[:3]
			for _, c := range t[3:] {
				if string(c) != t[:1] {
					break
				}
				fence += t[:1]
			}
			continue
		}
		prose := line
		if strings.IndexByte(line, '`') >= 0 {
			for _, m := range inlineCode.FindAllStringSubmatch(line, -1) {
				add(m[1])
			}
			prose = inlineCode.ReplaceAllString(line, " ")
		}
		for _, t := range termTokens(prose) {
			if isNumberTerm(t) || isIdentifierTerm(t) {
				add(t)
			}
		}
	}
	return out
}

// termTokens splits text into the runs of letters, digits, '_', '.' and
// '-' that key terms are made of, without leading or trailing '.' and '-'
// (a sentence's full stop, a list's dash).
func termTokens(text string) []string {
	fields := strings.FieldsFunc(text, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '.' || r == '-')
	})
	out := fields[:0]
	for _, f := range fields {
		if f = strings.Trim(f, ".-"); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// tokenSet is the set of a text's term tokens.
func tokenSet(text string) map[string]bool {
	set := map[string]bool{}
	for _, t := range termTokens(text) {
		set[t] = true
	}
	return set
}

// hasTerm reports whether every token of term is among the text's: a
// number as a whole number, an identifier as a whole identifier, a code
// span ("GET /v1/orders") by its words. One lookup per token, so checking
// every resolution costs time linear in the spec and the resolutions.
func hasTerm(set map[string]bool, term string) bool {
	toks := termTokens(term)
	for _, t := range toks {
		if !set[t] {
			return false
		}
	}
	return len(toks) > 0
}

func joinGapIDs(ids []gap.ID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = string(id)
	}
	return strings.Join(s, ", ")
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], fmt.Sprintf("… %d more", len(s)-n))
	}
	return s
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
