package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/markdown"
)

// parseGapsFile reads a gap list (DESIGN §11): either markdown lines
// "- GAP-AREA-NNN (SEVERITY): title" (severity optional, MEDIUM when
// absent; blank lines and headings ignored) or a JSON array of
// {"id","severity","title"}. name is used in errors, which read
// "name:line: what". Duplicate IDs, unknown severities, malformed lines or
// elements, unknown JSON fields and an empty list are errors. States are
// left unset: the ledger makes a new gap OPEN.
func parseGapsFile(name string, data []byte) ([]gap.Gap, error) {
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

// parseGapsMarkdown reads one gap per list line. Any other non-blank line
// that is not a heading is malformed: silently skipping it could drop a gap.
func parseGapsMarkdown(name, text string) ([]gap.Gap, []int, error) {
	var gaps []gap.Gap
	var lines []int
	for i, ln := range strings.Split(text, "\n") {
		n := i + 1
		s := strings.TrimSpace(ln)
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		g, err := parseGapLine(s)
		if err != nil {
			return nil, nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		gaps = append(gaps, g)
		lines = append(lines, n)
	}
	return gaps, lines, nil
}

const gapLineFormat = `want "- GAP-AREA-NNN (SEVERITY): title"`

// parseGapLine parses "- GAP-FLOW-001 (HIGH): title" or "- GAP-FLOW-001: title".
func parseGapLine(s string) (gap.Gap, error) {
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
	return g, nil
}

// gapJSON is one element of the JSON form.
type gapJSON struct {
	ID       string `json:"id"`
	Severity string `json:"severity"`
	Title    string `json:"title"`
}

// parseGapsJSON decodes the array element by element so each error can
// name the line of the element it is about.
func parseGapsJSON(name, text string) ([]gap.Gap, []int, error) {
	lineAt := func(off int64) int { return 1 + strings.Count(text[:min(int(off), len(text))], "\n") }
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
		return nil, nil, wrap(err, 0)
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
			return nil, nil, wrap(err, start)
		}
		id, err := gap.ParseID(e.ID)
		if err != nil {
			return nil, nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		g := gap.Gap{ID: id, Severity: gap.Medium, Title: strings.TrimSpace(e.Title)}
		if strings.TrimSpace(e.Severity) != "" {
			if g.Severity, err = gap.ParseSeverity(e.Severity); err != nil {
				return nil, nil, fmt.Errorf("%s:%d: gap %s: %w", name, n, id, err)
			}
		}
		if g.Title == "" {
			return nil, nil, fmt.Errorf("%s:%d: gap %s has no title", name, n, id)
		}
		gaps = append(gaps, g)
		lines = append(lines, n)
	}
	if _, err := dec.Token(); err != nil { // the closing ']'
		return nil, nil, wrap(err, dec.InputOffset())
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, fmt.Errorf("%s:%d: unexpected data after the JSON array", name, lineAt(dec.InputOffset()))
	}
	return gaps, lines, nil
}
