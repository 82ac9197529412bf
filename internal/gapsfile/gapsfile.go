// Package gapsfile reads gap lists, the files `refine run --gaps` and
// `refine-temporal start --gaps` take: markdown lines or a JSON array.
package gapsfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/markdown"
	"github.com/refine-spec/refine/internal/termtext"
)

// Parse reads a gap list (the file `refine run --gaps` and
// `refine validate --gaps` take): either markdown lines
// "- GAP-AREA-NNN (SEVERITY): title" (severity optional, MEDIUM when
// absent; blank lines and headings ignored), each optionally followed by
// a "Location:" line (a heading or a quotation of the spec) and a "Why:"
// line (what the spec leaves undecided), indented or not, in any order,
// each at most once; or a JSON array of {"id","severity","title"} with
// optional "location" and "why". name is used in errors, which read
// "name:line: what". Duplicate IDs, unknown severities, malformed lines or
// elements, unknown JSON fields and an empty list are errors. States are
// left unset: the ledger makes a new gap OPEN. A title is at most
// maxTitleBytes, a Location MaxLocationBytes and a Why MaxWhyBytes, each
// plain text on one line (no control characters).
func Parse(name string, data []byte) ([]gap.Gap, error) {
	text := markdown.Normalize(string(data))
	var gaps []gap.Gap
	var lines []int
	var err error
	if strings.HasPrefix(strings.TrimSpace(text), "[") {
		gaps, lines, err = parseGapsJSON(name, text)
	} else {
		gaps, lines, err = parseGapsMarkdown(name, text)
	}
	if err != nil {
		return nil, err
	}
	if len(gaps) == 0 {
		return nil, fmt.Errorf("%s: no gaps listed (want lines \"- GAP-AREA-NNN (SEVERITY): title\" or a JSON array of {\"id\",\"severity\",\"title\"})", name)
	}
	first := map[gap.ID]int{}
	for i, g := range gaps {
		if prev, dup := first[g.ID]; dup {
			return nil, fmt.Errorf("%s:%d: duplicate gap ID %s (first on line %d)", name, lines[i], g.ID, prev)
		}
		first[g.ID] = lines[i]
	}
	return gaps, nil
}

// parseGapsMarkdown reads one gap per list line, with the Location and
// Why lines under it. Any other non-blank line that is not a heading is
// malformed: silently skipping it could drop a gap.
func parseGapsMarkdown(name, text string) ([]gap.Gap, []int, error) {
	var gaps []gap.Gap
	var lines []int
	for i, ln := range strings.Split(text, "\n") {
		n := i + 1
		s := strings.TrimSpace(ln)
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		if field, value, ok := ParseDetail(s); ok {
			if len(gaps) == 0 {
				return nil, nil, fmt.Errorf("%s:%d: a %s line before any gap line: put it under the \"- GAP-…\" line it belongs to", name, n, field)
			}
			g := &gaps[len(gaps)-1]
			if err := SetDetail(g, field, value); err != nil {
				return nil, nil, fmt.Errorf("%s:%d: gap %s: %w", name, n, g.ID, err)
			}
			continue
		}
		g, err := ParseGapLine(s)
		if err != nil {
			return nil, nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		gaps = append(gaps, g)
		lines = append(lines, n)
	}
	return gaps, lines, nil
}

const gapLineFormat = `want "- GAP-AREA-NNN (SEVERITY): title", each optionally followed by "Location:" and "Why:" lines`

// ParseGapLine parses one gap line, "- GAP-FLOW-001 (HIGH): title" or
// "- GAP-FLOW-001: title" ("*" for "-" too), surrounding spaces trimmed.
// Its errors start "malformed gap line" or "gap ID:"; validate.Discovery
// reads gap lines through it after reading other list forms as meant.
func ParseGapLine(s string) (gap.Gap, error) {
	s = strings.TrimSpace(s)
	rest, ok := strings.CutPrefix(s, "- ")
	if !ok {
		if rest, ok = strings.CutPrefix(s, "* "); !ok {
			return gap.Gap{}, fmt.Errorf("malformed gap line %q: %s", s, gapLineFormat)
		}
	}
	rest = strings.TrimSpace(rest)
	end := strings.IndexAny(rest, " (:")
	if end < 0 {
		end = len(rest)
	}
	id, err := gap.ParseID(rest[:end])
	if err != nil {
		return gap.Gap{}, fmt.Errorf("malformed gap line %q: %w", s, err)
	}
	rest = strings.TrimSpace(rest[end:])
	g := gap.Gap{ID: id, Severity: gap.Medium}
	if strings.HasPrefix(rest, "(") {
		closeAt := strings.IndexByte(rest, ')')
		if closeAt < 0 {
			return gap.Gap{}, fmt.Errorf("malformed gap line %q: unclosed \"(\": %s", s, gapLineFormat)
		}
		if g.Severity, err = gap.ParseSeverity(rest[1:closeAt]); err != nil {
			return gap.Gap{}, fmt.Errorf("gap %s: %w", id, err)
		}
		rest = strings.TrimSpace(rest[closeAt+1:])
	}
	title, ok := strings.CutPrefix(rest, ":")
	if !ok || strings.TrimSpace(title) == "" {
		return gap.Gap{}, fmt.Errorf("malformed gap line %q: missing \": title\": %s", s, gapLineFormat)
	}
	g.Title = strings.TrimSpace(title)
	if err := checkText("title", g.Title, maxTitleBytes); err != nil {
		return gap.Gap{}, fmt.Errorf("gap %s: %w", id, err)
	}
	return g, nil
}

// The lines that may follow a gap line, as ParseDetail names them.
const (
	// Location: where the spec leaves the gap open (a heading, or a
	// quotation of the spec's text).
	Location = "Location"
	// Why: what an implementer could not decide from the spec as it stands.
	Why = "Why"
)

// ParseDetail reads a "Location: …" or "Why: …" line: leading spaces or
// tabs, an optional list marker ("- ", "* ", "+ ") and emphasis around
// the label ("**Location:**", "**Why**:") are allowed, and the label's
// letter case is not significant. field is Location or Why; value is
// trimmed and may be empty (SetDetail refuses that). ok is false for any
// other line.
func ParseDetail(s string) (field, value string, ok bool) {
	s = strings.TrimLeft(s, " \t")
	if len(s) >= 2 && strings.IndexByte("-*+", s[0]) >= 0 && (s[1] == ' ' || s[1] == '\t') {
		s = strings.TrimLeft(s[2:], " \t")
	}
	s = strings.TrimLeft(s, "*_")
	for _, f := range [...]string{Location, Why} {
		if len(s) <= len(f) || !strings.EqualFold(s[:len(f)], f) {
			continue
		}
		rest := strings.TrimLeft(s[len(f):], "*_")
		if after, found := strings.CutPrefix(rest, ":"); found {
			return f, strings.TrimSpace(strings.TrimLeft(after, "*_")), true
		}
	}
	return "", "", false
}

// Limits of the texts under a gap line: a Location names a heading or
// quotes a sentence or two; a Why is a sentence or two. Both are shown in
// prompts and status output, one line each.
const (
	MaxLocationBytes = 500
	MaxWhyBytes      = 1000
)

// SetDetail records a Location or Why line's value on g. It refuses an
// empty value, a second line of the same field, and text above the
// field's limit or holding a control character.
func SetDetail(g *gap.Gap, field, value string) error {
	dst, limit := &g.Location, MaxLocationBytes
	what := "a heading or a quotation of the spec"
	if field == Why {
		dst, limit = &g.Why, MaxWhyBytes
		what = "what the spec leaves undecided"
	}
	switch {
	case *dst != "":
		return fmt.Errorf("a second %s line: a gap has at most one", field)
	case value == "":
		return fmt.Errorf("an empty %s line: write %s after \"%s:\"", field, what, field)
	}
	if err := checkText(field, value, limit); err != nil {
		return err
	}
	*dst = value
	return nil
}

// maxTitleBytes bounds a gap title: it is a line in prompts, tables and
// status output, and the details belong in the spec.
const maxTitleBytes = 500

// checkText refuses a title, Location or Why (what) that is longer than
// limit or holds a character a terminal would act on (NUL, ESC, a
// newline, a bidirectional override…): these texts are shown in status
// output and put into every prompt.
func checkText(what, text string, limit int) error {
	if len(text) > limit {
		return fmt.Errorf("the %s is %d bytes, above the limit of %d: keep it to a line and put details in the spec", what, len(text), limit)
	}
	if i, r := termtext.IndexLine(text); i >= 0 {
		if r == utf8.RuneError {
			return fmt.Errorf("the %s holds the byte 0x%02X at byte %d, which is not UTF-8 text", what, text[i], i)
		}
		return fmt.Errorf("the %s holds the control character %U at byte %d: a %s is plain text on one line", what, r, i, what)
	}
	return nil
}

// gapJSON is one element of the JSON form.
type gapJSON struct {
	ID       string `json:"id"`
	Severity string `json:"severity"`
	Title    string `json:"title"`
	Location string `json:"location"`
	Why      string `json:"why"`
}

// parseGapsJSON decodes the array element by element so each error can
// name the line of the element it is about.
func parseGapsJSON(name, text string) ([]gap.Gap, []int, error) {
	g, l, _, err := parseGapsJSONCounted(name, text)
	return g, l, err
}

// parseGapsJSONCounted is parseGapsJSON, also returning how many bytes
// it scanned to number lines (a test holds that to linear).
func parseGapsJSONCounted(name, text string) ([]gap.Gap, []int, int, error) {
	// Offsets only grow while elements are read, so lines are counted
	// from the last offset asked about: recounting from the start for
	// every element made a long list quadratic.
	scanned, lastOff, lastLine := 0, 0, 1
	lineAt := func(off64 int64) int {
		off := max(0, min(int(off64), len(text)))
		if off < lastOff {
			lastOff, lastLine = 0, 1 // an error's offset before the cursor: rare, once
		}
		scanned += off - lastOff
		lastLine += strings.Count(text[lastOff:off], "\n")
		lastOff = off
		return lastLine
	}
	wrap := func(err error, off int64) error {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			off = se.Offset
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			// The decoder's message names our internal type; say what the file needs.
			if te.Field == "" {
				err = fmt.Errorf(`got a JSON %s where a gap object {"id","severity","title"} belongs`, te.Value)
			} else {
				err = fmt.Errorf("field %q: got a JSON %s, want a string", te.Field, te.Value)
			}
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("%s:%d: unexpected end of JSON", name, lineAt(int64(len(text))))
		}
		return fmt.Errorf("%s:%d: %w", name, lineAt(off), err)
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	if _, err := dec.Token(); err != nil { // the opening '['
		return nil, nil, scanned, wrap(err, 0)
	}
	var gaps []gap.Gap
	var lines []int
	for dec.More() {
		// The element starts at the first byte after the separator.
		start := dec.InputOffset()
		for int(start) < len(text) && strings.IndexByte(" \t\n,", text[start]) >= 0 {
			start++
		}
		n := lineAt(start)
		var e gapJSON
		if err := dec.Decode(&e); err != nil {
			return nil, nil, scanned, wrap(err, start)
		}
		id, err := gap.ParseID(e.ID)
		if err != nil {
			return nil, nil, scanned, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		g := gap.Gap{ID: id, Severity: gap.Medium, Title: strings.TrimSpace(e.Title)}
		if strings.TrimSpace(e.Severity) != "" {
			if g.Severity, err = gap.ParseSeverity(e.Severity); err != nil {
				return nil, nil, scanned, fmt.Errorf("%s:%d: gap %s: %w", name, n, id, err)
			}
		}
		if g.Title == "" {
			return nil, nil, scanned, fmt.Errorf("%s:%d: gap %s has no title", name, n, id)
		}
		if err := checkText("title", g.Title, maxTitleBytes); err != nil {
			return nil, nil, scanned, fmt.Errorf("%s:%d: gap %s: %w", name, n, id, err)
		}
		for _, d := range [...]struct{ field, value string }{{Location, e.Location}, {Why, e.Why}} {
			if v := strings.TrimSpace(d.value); v != "" {
				if err := SetDetail(&g, d.field, v); err != nil {
					return nil, nil, scanned, fmt.Errorf("%s:%d: gap %s: %w", name, n, id, err)
				}
			}
		}
		gaps = append(gaps, g)
		lines = append(lines, n)
	}
	if _, err := dec.Token(); err != nil { // the closing ']'
		return nil, nil, scanned, wrap(err, dec.InputOffset())
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, scanned, fmt.Errorf("%s:%d: unexpected data after the JSON array", name, lineAt(dec.InputOffset()))
	}
	return gaps, lines, scanned, nil
}

// Format writes gaps as the markdown gap list Parse reads: one
// "- GAP-AREA-NNN (SEVERITY): title" line each (MEDIUM for an unset
// severity), with its "  Location:" and "  Why:" lines when set. Parse
// reads the result back to the same IDs, severities, titles, Locations
// and Whys.
func Format(gaps []gap.Gap) string {
	var b strings.Builder
	for _, g := range gaps {
		sev := g.Severity
		if !sev.Valid() {
			sev = gap.Medium
		}
		fmt.Fprintf(&b, "- %s (%s): %s\n", g.ID, sev, g.Title)
		if g.Location != "" {
			b.WriteString("  " + Location + ": " + g.Location + "\n")
		}
		if g.Why != "" {
			b.WriteString("  " + Why + ": " + g.Why + "\n")
		}
	}
	return b.String()
}
