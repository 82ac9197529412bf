package rollback

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/markdown"
	"github.com/refine-spec/refine/internal/rollbackfmt"
)

// Pattern is a failure pattern of a rolled-back output (the spec's
// "Pattern Definitions").
type Pattern string

// The six patterns, in the spec's table order.
const (
	// AbstractOutput: more than vagueThreshold vague words in one gap's section.
	AbstractOutput Pattern = "ABSTRACT_OUTPUT"
	// MissingSections: required section headers absent.
	MissingSections Pattern = "MISSING_SECTIONS"
	// NarrowExamples: fewer than minExamples examples for a gap.
	NarrowExamples Pattern = "NARROW_EXAMPLES"
	// inconsistentRefs: references to gaps that do not exist.
	inconsistentRefs Pattern = "INCONSISTENT_REFS"
	// domainConfusion: terms used but defined nowhere, or flagged by the
	// Reviewer as undefined or misused.
	domainConfusion Pattern = "DOMAIN_CONFUSION"
	// scopeDrift: a different gap addressed than the ones assigned.
	scopeDrift Pattern = "SCOPE_DRIFT"
)

var patternOrder = [...]Pattern{AbstractOutput, MissingSections, NarrowExamples, inconsistentRefs, domainConfusion, scopeDrift}

// Patterns returns the six patterns in the spec's order.
func Patterns() []Pattern { return slices.Clone(patternOrder[:]) }

func patternIndex(p Pattern) int { return slices.Index(patternOrder[:], p) }

// Thresholds of the pattern definitions.
const (
	// vagueThreshold: ABSTRACT_OUTPUT fires at more than 5 vague words per gap.
	vagueThreshold = 5
	// minExamples: NARROW_EXAMPLES fires below 2 examples per gap.
	minExamples = 2
	// minGapChars is the structural "min length per gap" (GAP-FLOW-001's 200).
	minGapChars = 200
)

// vagueWords is the spec's VAGUE_WORDS list, verbatim and in order. It is an
// array so no caller can change it.
var vagueWords = [...]string{
	"appropriate", "as needed", "reasonable", "sufficient",
	"adequate", "properly", "correctly", "when necessary",
	"if applicable", "as required", "typically", "generally",
	"various", "certain", "some", "may", "might", "could",
	"should consider", "it depends", "context-dependent",
}

// vagueWordList returns the spec's vague-word list.
func vagueWordList() []string { return slices.Clone(vagueWords[:]) }

// defaultRequired are the section headers every gap section must have: the
// two the spec's "Structural Completeness" table checks.
func defaultRequired() []string { return []string{"Trade-offs", "Examples"} }

// Input is what pattern detection looks at: one rolled-back round's outputs
// and what the round was asked to do.
type Input struct {
	// Engineer and Reviewer are the round's outputs (either may be empty).
	Engineer, Reviewer string
	// Assigned are the gaps the round was assigned; empty skips SCOPE_DRIFT.
	Assigned []gap.ID
	// Known is the session's gap list; empty skips INCONSISTENT_REFS (as
	// validation does without a gap list).
	Known []gap.ID
	// Context is text in which terms count as defined (source spec,
	// glossary, gap titles, decisions); empty skips the undefined-term half
	// of DOMAIN_CONFUSION.
	Context string
	// required are the section headers each gap section must have; nil
	// means defaultRequired.
	required []string
}

// Coverage says how completely a gap was addressed.
type Coverage string

// Coverage values as the analysis table prints them.
const (
	coverageAddressed   Coverage = "Yes"
	coveragePartial     Coverage = "Partial"
	coverageUnaddressed Coverage = "No"
)

// GapReport is what the output did for one gap (a row of "What Was Produced").
type GapReport struct {
	Gap       gap.ID
	Addressed Coverage
	// Sections are the titles of the gap section's direct subsections.
	Sections []string
	// Examples is the example count (see countExamples).
	Examples int
	// edgeCases reports whether the section mentions an edge/corner/failure case.
	edgeCases bool
	// vague is the number of vague-word occurrences in the section's prose,
	// VagueWords the distinct ones in order of first use.
	vague      int
	vagueWords []string
	// chars is the section body's length in characters.
	chars int
	// missing are the required sections absent.
	missing []string
}

// Finding is one detected pattern.
type Finding struct {
	Pattern Pattern
	// gaps are the gaps it was found in (empty when it concerns the whole output).
	gaps []gap.ID
	// terms are the evidence: vague words, missing sections, unknown gap
	// IDs, undefined terms or reviewer phrases, off-assignment gaps.
	terms []string
	// Detail is the report's line ("Trade-offs section absent"); Short the
	// auto-retry block's parenthesis ("Trade-offs absent").
	Detail, short string
}

// Check is one row of the report's "Structural Completeness" table.
type Check struct {
	Name   string
	Status string // PASS, FAIL or SKIPPED
}

// Detection is the result of pattern detection over one round's outputs.
type Detection struct {
	// Gaps: assigned gaps first (in assignment order), then other gaps
	// the output addressed (in order of appearance).
	Gaps []GapReport
	// Findings in the spec's pattern order, at most one per pattern.
	Findings []Finding
	// Checks are the structural completeness checks.
	Checks []Check
	// assigned and addressed are the assigned gaps and the gaps heading
	// "## Gap Resolution:" sections.
	assigned, addressed []gap.ID
	// chars is the engineer output's length in characters (trimmed).
	chars int
}

// Patterns returns the detected patterns in order.
func (d Detection) Patterns() []Pattern {
	out := make([]Pattern, len(d.Findings))
	for i, f := range d.Findings {
		out[i] = f.Pattern
	}
	return out
}

// finding returns the finding of pattern p.
func (d Detection) finding(p Pattern) (Finding, bool) {
	for _, f := range d.Findings {
		if f.Pattern == p {
			return f, true
		}
	}
	return Finding{}, false
}

// FailurePattern renders the findings for the auto-retry block:
// "MISSING_SECTIONS (Trade-offs absent)", several joined by ", ", or "" when
// nothing was detected.
func (d Detection) FailurePattern() string {
	parts := make([]string, len(d.Findings))
	for i, f := range d.Findings {
		parts[i] = fmt.Sprintf("%s (%s)", f.Pattern, f.short)
	}
	return strings.Join(parts, ", ")
}

// gapSection is one "## Gap Resolution:" section of the engineer output.
type gapSection struct {
	id  gap.ID
	sec markdown.Section
}

// DetectPatterns runs the six pattern rules over a round's outputs:
//
//   - ABSTRACT_OUTPUT: a gap section whose prose (code blanked) holds more
//     than vagueThreshold occurrences of the vague words, matched
//     case-insensitively as whole words (multi-word phrases across any
//     whitespace). Without gap sections the whole output counts as one.
//   - MISSING_SECTIONS: no "## Gap Resolution:" header, or a gap section
//     lacking a required section (a deeper heading whose title starts with
//     the name, ignoring case, punctuation and a plural "s").
//   - NARROW_EXAMPLES: an addressed gap with fewer than minExamples examples.
//   - INCONSISTENT_REFS: gap IDs in either output (outside code and outside
//     "New Gaps …" sections) that are not in Known.
//   - DOMAIN_CONFUSION: UPPER_SNAKE_CASE terms the engineer uses that
//     Context never uses and the output does not define itself (a line
//     that starts with the term, as in a definition list or table), or
//     reviewer phrases such as "undefined term", "not defined", "misused".
//   - SCOPE_DRIFT: the output addressed a gap it was not assigned, or none
//     of the assigned gaps while addressing others.
//
// It runs in time linear in the input and never panics.
func DetectPatterns(in Input) Detection {
	eng := markdown.Parse(in.Engineer)
	rev := markdown.Parse(in.Reviewer)
	required := in.required
	if required == nil {
		required = defaultRequired()
	}
	d := Detection{assigned: slices.Clone(in.Assigned), chars: utf8.RuneCountInString(strings.TrimSpace(eng.Text))}

	var sections []gapSection
	addressed := map[gap.ID]bool{}
	for _, s := range eng.SectionsAt(2) {
		title := strings.ToLower(s.Title)
		if !strings.HasPrefix(title, "gap resolution") {
			continue
		}
		if id := gap.FirstID(s.Title); id != "" {
			sections = append(sections, gapSection{id: id, sec: s})
			if !addressed[id] {
				addressed[id] = true
				d.addressed = append(d.addressed, id)
			}
		}
	}

	reports := map[gap.ID]*GapReport{}
	for _, gs := range sections {
		r := reports[gs.id]
		if r == nil {
			r = &GapReport{Gap: gs.id}
			reports[gs.id] = r
		}
		measureSection(eng, gs.sec, required, r)
	}
	for _, r := range reports {
		r.Addressed = coverageAddressed
		if len(r.missing) > 0 || r.chars < minGapChars {
			r.Addressed = coveragePartial
		}
	}
	for _, id := range in.Assigned {
		if r := reports[id]; r != nil {
			d.Gaps = append(d.Gaps, *r)
		} else if !slices.ContainsFunc(d.Gaps, func(g GapReport) bool { return g.Gap == id }) {
			d.Gaps = append(d.Gaps, GapReport{Gap: id, Addressed: coverageUnaddressed})
		}
	}
	for _, id := range d.addressed {
		if !slices.Contains(in.Assigned, id) {
			d.Gaps = append(d.Gaps, *reports[id])
		}
	}

	// Without gap sections, the whole output is the unit for the per-gap rules.
	var whole *GapReport
	if len(sections) == 0 {
		whole = &GapReport{}
		words, n := countVague(eng.Prose)
		whole.vague, whole.vagueWords = n, words
		whole.Examples, whole.edgeCases = countExamples(eng, markdown.Section{End: len(eng.Text)}, eng.Sections())
	}

	d.Findings = appendNonEmpty(d.Findings,
		abstractFinding(d.Gaps, whole),
		missingFinding(d.Gaps, sections, required),
		narrowFinding(d.Gaps, whole),
		refsFinding(in.Known, eng, rev),
		domainFinding(in.Context, eng, rev),
		driftFinding(in.Assigned, d.addressed),
	)
	d.Checks = structuralChecks(d, sections, required, len(in.Known) > 0)
	return d
}

func appendNonEmpty(dst []Finding, fs ...Finding) []Finding {
	for _, f := range fs {
		if f.Pattern != "" {
			dst = append(dst, f)
		}
	}
	return dst
}

// measureSection fills r from one gap section (adding to what earlier
// sections for the same gap contributed).
func measureSection(doc *markdown.Doc, s markdown.Section, required []string, r *GapReport) {
	within := doc.Within(s)
	have := make(map[string]bool, len(r.Sections))
	for _, t := range r.Sections {
		have[t] = true
	}
	for _, sub := range within {
		if sub.Level == s.Level+1 && !have[sub.Title] {
			have[sub.Title] = true
			r.Sections = append(r.Sections, sub.Title)
		}
	}
	var missing []string
	for _, req := range required {
		want := normTitle(req)
		if !slices.ContainsFunc(within, func(sub markdown.Section) bool { return strings.HasPrefix(normTitle(sub.Title), want) }) {
			missing = append(missing, req)
		}
	}
	if r.chars == 0 {
		r.missing = missing
	} else {
		// A second section for the same gap: missing only if missing in both.
		r.missing = slices.DeleteFunc(r.missing, func(m string) bool { return !slices.Contains(missing, m) })
	}
	words, n := countVague(doc.ProseBody(s))
	r.vague += n
	for _, w := range words {
		if !slices.Contains(r.vagueWords, w) {
			r.vagueWords = append(r.vagueWords, w)
		}
	}
	ex, edge := countExamples(doc, s, within)
	r.Examples += ex
	r.edgeCases = r.edgeCases || edge
	r.chars += utf8.RuneCountInString(strings.TrimSpace(doc.Body(s)))
}

// normTitle lower-cases a title, keeps letters and digits only and drops a
// plural "s", so "Trade-offs", "Tradeoffs" and "Trade Off" compare equal.
func normTitle(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return strings.TrimSuffix(b.String(), "s")
}

// token is a word of prose; ws reports whether only whitespace separates it
// from the previous token (so phrases do not match across punctuation).
type token struct {
	w  string
	ws bool
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-'
}

// tokenize splits prose into lower-cased words. Hyphens are part of words
// (so "context-dependent" is one word and "some-thing" is not "some"), but
// not at a word's ends.
func tokenize(s string) []token {
	var out []token
	ws := true
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isWordRune(r) || r == utf8.RuneError {
			if !unicode.IsSpace(r) {
				ws = false
			}
			i += size
			continue
		}
		j := i + size
		for j < len(s) {
			r2, s2 := utf8.DecodeRuneInString(s[j:])
			if r2 == utf8.RuneError || !isWordRune(r2) {
				break
			}
			j += s2
		}
		w := strings.Trim(s[i:j], "-")
		if w != "" {
			out = append(out, token{w: strings.ToLower(w), ws: ws})
			ws = true
		} else {
			ws = false
		}
		i = j
	}
	return out
}

// vaguePhrases are the vague words split into words, longest first so a
// phrase wins over a shorter one starting at the same word.
var vaguePhrases = func() [len(vagueWords)][]string {
	var out [len(vagueWords)][]string
	for i, w := range vagueWords {
		out[i] = strings.Fields(w)
	}
	slices.SortStableFunc(out[:], func(a, b []string) int { return len(b) - len(a) })
	return out
}()

// countVagueWords counts the vague-word occurrences in text, case-insensitively
// and as whole words. Callers wanting prose only pass text with code
// blanked (markdown.Doc.Prose).
func countVagueWords(text string) int {
	_, n := countVague(text)
	return n
}

func countVague(text string) (distinct []string, n int) {
	toks := tokenize(text)
	for i := 0; i < len(toks); {
		matched := 0
		for _, ph := range vaguePhrases {
			if i+len(ph) > len(toks) {
				continue
			}
			ok := true
			for k, w := range ph {
				if toks[i+k].w != w || (k > 0 && !toks[i+k].ws) {
					ok = false
					break
				}
			}
			if ok {
				matched = len(ph)
				word := strings.Join(ph, " ")
				if !slices.Contains(distinct, word) {
					distinct = append(distinct, word)
				}
				break
			}
		}
		if matched > 0 {
			n++
			i += matched
		} else {
			i++
		}
	}
	return distinct, n
}

var (
	listMarker  = regexp.MustCompile(`^\s*(?:[-*+]|\d{1,9}[.)])\s+`)
	edgeCaseRe  = regexp.MustCompile(`(?i)\b(?:edge|corner|boundary|failure|error)[ -]cases?\b`)
	fenceOpener = regexp.MustCompile("^ {0,3}(?:```|~~~)")
)

// countExamples counts the examples in section s (whose nested sections are
// within): headings whose first word is "Example" (not the "Examples"
// container) plus prose lines starting with an emphasised "Example" or
// "Example N"/"Example:". If there are none and an Examples section exists,
// its bold label lines ("**Rollback in status.md:**") count, else its
// top-level list items, else its code blocks, else 1 when it has any content. It also reports whether an edge case is mentioned.
func countExamples(doc *markdown.Doc, s markdown.Section, within []markdown.Section) (n int, edge bool) {
	body := doc.Prose[s.BodyStart:s.End]
	edge = edgeCaseRe.MatchString(body)
	var container *markdown.Section
	for i, sub := range within {
		switch firstWord(sub.Title) {
		case "example":
			n++
		case "examples":
			if container == nil {
				container = &within[i]
			}
		}
	}
	headingStarts := map[int]bool{}
	for _, h := range within {
		headingStarts[h.Start] = true
	}
	for off := s.BodyStart; off < s.End; {
		end := strings.IndexByte(doc.Prose[off:s.End], '\n')
		if end < 0 {
			end = s.End - off
		}
		if !headingStarts[off] && exampleLine(doc.Prose[off:off+end]) {
			n++
		}
		off += end + 1
	}
	if n > 0 || container == nil {
		return n, edge
	}
	labels, items, fences := 0, 0, 0
	for off := container.BodyStart; off < container.End; {
		end := strings.IndexByte(doc.Text[off:container.End], '\n')
		if end < 0 {
			end = container.End - off
		}
		text, prose := doc.Text[off:off+end], doc.Prose[off:off+end]
		if fenceOpener.MatchString(text) {
			fences++
		}
		if m := listMarker.FindString(prose); m != "" && len(m)-len(strings.TrimLeft(m, " \t")) < 2 {
			items++
		}
		if p := strings.TrimSpace(prose); strings.HasPrefix(p, "**") && (strings.HasSuffix(p, "**") || strings.HasSuffix(p, "**:")) && len(p) > 4 {
			labels++
		}
		off += end + 1
	}
	switch {
	case labels > 0:
		return labels, edge
	case items > 0:
		return items, edge
	case fences > 0:
		return (fences + 1) / 2, edge
	case strings.TrimSpace(doc.ProseBody(*container)) != "":
		return 1, edge
	}
	return 0, edge
}

// firstWord returns the first run of letters of s, lower-cased.
func firstWord(s string) string {
	s = strings.TrimLeftFunc(s, func(r rune) bool { return !unicode.IsLetter(r) })
	end := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsLetter(r) })
	if end < 0 {
		end = len(s)
	}
	return strings.ToLower(s[:end])
}

// exampleLine reports whether a prose line introduces an example:
// "**Example 1: …**", "- *Example:* …", "Example 2: …".
func exampleLine(line string) bool {
	line = strings.TrimLeft(line, " \t>")
	if m := listMarker.FindString(line); m != "" {
		line = line[len(m):]
	}
	emph := strings.TrimLeft(line, "*_")
	emphasised := len(emph) < len(line)
	if len(emph) < 7 || !strings.EqualFold(emph[:7], "example") {
		return false
	}
	rest := emph[7:]
	if rest != "" && (unicode.IsLetter(rune(rest[0]))) {
		return false // "Examples", "Exampled"
	}
	if emphasised {
		return true
	}
	rest = strings.TrimLeft(rest, " ")
	return rest != "" && (rest[0] == ':' || rest[0] >= '0' && rest[0] <= '9')
}

func abstractFinding(gaps []GapReport, whole *GapReport) Finding {
	f := Finding{}
	var words []string
	total := 0
	var details []string
	consider := func(r GapReport) {
		if r.vague <= vagueThreshold {
			return
		}
		f.Pattern = AbstractOutput
		if r.Gap != "" {
			f.gaps = append(f.gaps, r.Gap)
		}
		total += r.vague
		for _, w := range r.vagueWords {
			if !slices.Contains(words, w) {
				words = append(words, w)
			}
		}
		details = append(details, fmt.Sprintf("%s: %d", orWhole(r.Gap), r.vague))
	}
	if whole != nil {
		consider(*whole)
	}
	for _, r := range gaps {
		consider(r)
	}
	if f.Pattern == "" {
		return f
	}
	f.terms = words
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = fmt.Sprintf("%q", w)
	}
	f.Detail = fmt.Sprintf("Solution uses vague language (%s) — %s vague terms, more than %d per gap",
		strings.Join(quoted, ", "), strings.Join(details, ", "), vagueThreshold)
	if len(details) == 1 {
		f.short = rollbackfmt.Plural(total, "vague term", "vague terms")
		if len(f.gaps) == 1 {
			f.short += " in " + string(f.gaps[0])
		}
	} else {
		f.short = strings.Join(details, ", ") + " vague terms"
	}
	return f
}

func orWhole(id gap.ID) string {
	if id == "" {
		return "whole output"
	}
	return string(id)
}

func missingFinding(gaps []GapReport, sections []gapSection, required []string) Finding {
	if len(sections) == 0 {
		return Finding{
			Pattern: MissingSections, terms: []string{"## Gap Resolution"},
			Detail: "## Gap Resolution headers absent", short: "Gap Resolution headers absent",
		}
	}
	f := Finding{}
	var names []string
	addressed := 0
	for _, r := range gaps {
		if r.Addressed == coverageUnaddressed {
			continue
		}
		addressed++
		if len(r.missing) == 0 {
			continue
		}
		f.Pattern = MissingSections
		f.gaps = append(f.gaps, r.Gap)
		for _, m := range r.missing {
			if !slices.Contains(names, m) {
				names = append(names, m)
			}
		}
	}
	if f.Pattern == "" {
		return f
	}
	// Keep the configured order of required sections.
	slices.SortStableFunc(names, func(a, b string) int { return slices.Index(required, a) - slices.Index(required, b) })
	f.terms = names
	list := strings.Join(names, ", ")
	noun := "section"
	if len(names) > 1 {
		noun = "sections"
	}
	f.Detail = fmt.Sprintf("%s %s absent", list, noun)
	f.short = list + " absent"
	if len(f.gaps) < addressed {
		ids := joinIDs(f.gaps)
		f.Detail += " (" + ids + ")"
		f.short += " in " + ids
	}
	return f
}

func joinIDs(ids []gap.ID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = string(id)
	}
	return strings.Join(s, ", ")
}

func narrowFinding(gaps []GapReport, whole *GapReport) Finding {
	var hits []GapReport
	if whole != nil && whole.Examples < minExamples {
		hits = append(hits, *whole)
	}
	for _, r := range gaps {
		if r.Addressed != coverageUnaddressed && r.Examples < minExamples {
			hits = append(hits, r)
		}
	}
	if len(hits) == 0 {
		return Finding{}
	}
	f := Finding{Pattern: NarrowExamples}
	describe := func(r GapReport) string {
		var s string
		switch r.Examples {
		case 0:
			s = "no examples"
		default:
			s = "only " + rollbackfmt.Plural(r.Examples, "example", "examples")
		}
		if !r.edgeCases {
			s += ", no edge cases"
		}
		return s
	}
	var parts, shorts []string
	for _, r := range hits {
		if r.Gap != "" {
			f.gaps = append(f.gaps, r.Gap)
		}
		f.terms = append(f.terms, orWhole(r.Gap))
		if len(hits) == 1 {
			parts = append(parts, describe(r))
			shorts = append(shorts, rollbackfmt.Plural(r.Examples, "example", "examples"))
		} else {
			parts = append(parts, orWhole(r.Gap)+": "+describe(r))
			shorts = append(shorts, orWhole(r.Gap)+": "+rollbackfmt.Plural(r.Examples, "example", "examples"))
		}
	}
	f.Detail = rollbackfmt.Capitalize(strings.Join(parts, "; "))
	f.short = strings.Join(shorts, ", ")
	return f
}

// referenceProse returns the prose of doc with "New Gaps …" sections
// blanked: IDs listed there are new gaps the output proposes, not
// references to existing ones.
func referenceProse(doc *markdown.Doc) string {
	b := []byte(doc.Prose)
	for _, s := range doc.Sections() {
		if strings.HasPrefix(strings.ToLower(s.Title), "new gaps") {
			for i := s.Start; i < s.End; i++ {
				if b[i] != '\n' {
					b[i] = ' '
				}
			}
		}
	}
	return string(b)
}

func refsFinding(known []gap.ID, docs ...*markdown.Doc) Finding {
	if len(known) == 0 {
		return Finding{}
	}
	skip := map[gap.ID]bool{}
	for _, id := range known {
		skip[id] = true
	}
	type keyed struct {
		id  gap.ID
		cat string
		num int
		suf string
	}
	var unknown []keyed
	for _, doc := range docs {
		for _, m := range gap.FindIDMatches(referenceProse(doc)) {
			if id := gap.ID(m.ID); !skip[id] {
				skip[id] = true
				unknown = append(unknown, keyed{id, id.Category(), id.Number(), id.Suffix()})
			}
		}
	}
	if len(unknown) == 0 {
		return Finding{}
	}
	// gap.Compare's order, with each ID's parts computed once.
	slices.SortFunc(unknown, func(a, b keyed) int {
		if c := strings.Compare(a.cat, b.cat); c != 0 {
			return c
		}
		if a.num != b.num {
			return a.num - b.num
		}
		return strings.Compare(a.suf, b.suf)
	})
	ids := make([]gap.ID, len(unknown))
	for i, k := range unknown {
		ids[i] = k.id
	}
	list := joinIDs(ids)
	f := Finding{Pattern: inconsistentRefs, Detail: "References gaps that do not exist: " + list, short: "unknown " + list}
	for _, id := range ids {
		f.terms = append(f.terms, string(id))
	}
	return f
}

var (
	snakeTerm = regexp.MustCompile(`\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b`)
	// definitionLead strips what may precede a defined term at a line start.
	definitionLead = regexp.MustCompile(`^[\s>#|*_+\-]*(?:\d{1,9}[.)]\s*)?[\s*_|]*`)
	// reviewerFlags are reviewer phrases that call a term undefined or misused.
	reviewerFlags = [...]string{
		"undefined term", "undefined concept", "not defined", "never defined",
		"is undefined", "are undefined", "misused", "misuse of",
		"unclear terminology", "unknown term",
	}
)

func domainFinding(context string, eng, rev *markdown.Doc) Finding {
	var undefined []string
	if context != "" {
		// Terms count as defined when the context uses them or the output
		// defines them (a line starting with the term); each term is
		// reported once. Sets keep this linear in the input.
		defined := map[string]bool{}
		for _, t := range snakeTerm.FindAllString(context, -1) {
			defined[t] = true
		}
		for line := range strings.SplitSeq(eng.Prose, "\n") {
			rest := line[len(definitionLead.FindString(line)):]
			if m := snakeTerm.FindStringIndex(rest); m != nil && m[0] == 0 {
				defined[rest[:m[1]]] = true
			}
		}
		for _, t := range snakeTerm.FindAllString(eng.Prose, -1) {
			if !defined[t] {
				defined[t] = true
				undefined = append(undefined, t)
			}
		}
	}
	var flags []string
	lower := strings.ToLower(rev.Prose)
	for _, p := range reviewerFlags {
		if strings.Contains(lower, p) {
			flags = append(flags, p)
		}
	}
	if len(undefined) == 0 && len(flags) == 0 {
		return Finding{}
	}
	f := Finding{Pattern: domainConfusion, terms: append(slices.Clone(undefined), flags...)}
	var parts []string
	if len(undefined) > 0 {
		parts = append(parts, "Terms used but not defined: "+strings.Join(undefined, ", "))
		f.short = "undefined " + strings.Join(undefined, ", ")
	}
	if len(flags) > 0 {
		q := make([]string, len(flags))
		for i, p := range flags {
			q[i] = fmt.Sprintf("%q", p)
		}
		parts = append(parts, "Reviewer flagged terminology ("+strings.Join(q, ", ")+")")
		if f.short == "" {
			f.short = "reviewer flagged terminology"
		}
	}
	f.Detail = strings.Join(parts, "; ")
	return f
}

func driftFinding(assigned, addressed []gap.ID) Finding {
	if len(assigned) == 0 || len(addressed) == 0 {
		return Finding{}
	}
	var extra []gap.ID
	hit := false
	for _, id := range addressed {
		if slices.Contains(assigned, id) {
			hit = true
		} else {
			extra = append(extra, id)
		}
	}
	if len(extra) == 0 && hit {
		return Finding{}
	}
	f := Finding{Pattern: scopeDrift, gaps: extra}
	for _, id := range extra {
		f.terms = append(f.terms, string(id))
	}
	if !hit {
		f.Detail = fmt.Sprintf("Addressed %s instead of assigned %s", joinIDs(extra), joinIDs(assigned))
	} else {
		f.Detail = fmt.Sprintf("Addressed %s, which %s not assigned (assigned: %s)", joinIDs(extra), map[bool]string{true: "was", false: "were"}[len(extra) == 1], joinIDs(assigned))
	}
	f.short = fmt.Sprintf("addressed %s, assigned %s", joinIDs(extra), joinIDs(assigned))
	return f
}

// structuralChecks builds the "Structural Completeness" table: gap headers,
// each required section, minimum length, cross-references.
func structuralChecks(d Detection, sections []gapSection, required []string, haveKnown bool) []Check {
	pass := func(ok bool) string {
		if ok {
			return "PASS"
		}
		return "FAIL"
	}
	var addressed []GapReport
	for _, r := range d.Gaps {
		if r.Addressed != coverageUnaddressed {
			addressed = append(addressed, r)
		}
	}
	checks := []Check{{Name: "Has ## Gap Resolution headers", Status: pass(len(sections) > 0)}}
	for _, req := range required {
		ok := len(addressed) > 0
		for _, r := range addressed {
			if slices.Contains(r.missing, req) {
				ok = false
			}
		}
		checks = append(checks, Check{Name: "Has ### " + req, Status: pass(ok)})
	}
	long := len(addressed) > 0
	for _, r := range addressed {
		if r.chars < minGapChars {
			long = false
		}
	}
	checks = append(checks, Check{Name: fmt.Sprintf("Min length per gap (%d chars)", minGapChars), Status: pass(long)})
	refs := "SKIPPED"
	if haveKnown {
		_, bad := d.finding(inconsistentRefs)
		refs = pass(!bad)
	}
	return append(checks, Check{Name: "Valid cross-references", Status: refs})
}
