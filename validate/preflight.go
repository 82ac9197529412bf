package validate

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// preflight runs the Tier 1 checks that need no scanning: size first (so a
// huge output costs nothing), then the finish reason (a cut or refused
// answer is not read), then emptiness, then whether the bytes are text at
// all. ok is false with the failure when one fails.
func preflight(content string, maxBytes int, reason string) (Result, bool) {
	if len(content) > maxBytes {
		return TooLarge(int64(len(content)), Options{MaxOutputBytes: maxBytes}), false
	}
	if r, ok := finishCheck(reason); !ok {
		return r, false
	}
	if strings.TrimSpace(strings.TrimPrefix(content, "\uFEFF")) == "" {
		msg := "File exists but is empty"
		if content != "" {
			msg += " (only whitespace)"
		}
		return Fail(EmptyOutput, msg), false
	}
	if i := strings.IndexByte(content, 0); i >= 0 {
		return failAt(WrongFormat, rawLine(content, i), "output contains a NUL byte: it is binary data, not markdown text"), false
	}
	if !utf8.ValidString(content) {
		i := 0
		for i < len(content) {
			r, size := utf8.DecodeRuneInString(content[i:])
			if r == utf8.RuneError && size == 1 {
				break
			}
			i += size
		}
		return failAt(WrongFormat, rawLine(content, i), "output is not valid UTF-8 text (invalid byte 0x%02X)", content[i]), false
	}
	return Result{}, true
}

// begin runs preflight, then reads the answer for role (read): the
// document as read, and a Result holding the reading (Text, Normalized
// and their warnings) that every later result starts from. An answer that
// holds nothing once normalized is EMPTY_OUTPUT; a fence left open, which
// turns the rest of the answer into code, is unclosed (WRONG_FORMAT, or
// INTEGRATION_STRUCTURE for an integrated spec). ok is false with the
// failure when one fails.
func begin(content string, maxBytes int, reason string, role readRole) (scanned, Result, bool) {
	if r, ok := preflight(content, maxBytes, reason); !ok {
		return scanned{}, r, false
	}
	sc, norm, unclosed := read(content, role)
	d := sc.d
	base := Result{Tier: Content, Text: d.Text, Normalized: norm}
	w := warningsOf(norm)
	base.Warnings = w.list()
	if strings.TrimSpace(d.Text) == "" {
		var kinds []string
		for _, n := range norm {
			kinds = append(kinds, n.Kind)
		}
		return sc, base.fail(Fail(EmptyOutput, "the answer holds nothing once read: only "+strings.Join(kinds, ", ")+" (removed: a <think> block and HTML comments are not read)")), false
	}
	t := WrongFormat
	if role == roleIntegration {
		t = IntegrationStructure
	}
	if n := unclosed; n > 0 {
		return sc, base.fail(failAt(t, n, "the answer is one fenced block, but the fence %s inside it is never closed, so it cannot be told from the wrapper's end: close it with a matching fence line", quote(d.Line(n)))), false
	}
	if n := d.Unclosed; n > 0 {
		return sc, base.fail(failAt(t, n, "the fence %s opens a code block that is never closed, so everything after it reads as code: close it with a matching fence line, or remove it", quote(d.Line(n)))), false
	}
	return sc, base, true
}

// failAt builds a failure located at a line; the message gets the
// "line N: " prefix every located message carries.
func failAt(t FailureType, line int, format string, args ...any) Result {
	msg := fmt.Sprintf(format, args...)
	if line > 0 {
		msg = fmt.Sprintf("line %d: %s", line, msg)
	}
	r := Fail(t, msg)
	r.Line = line
	return r
}

// warning is an advisory finding with its place.
type warning struct {
	line int // 0 for the whole output
	msg  string
}

type warnings []warning

func (w *warnings) add(line int, format string, args ...any) {
	*w = append(*w, warning{line, fmt.Sprintf(format, args...)})
}

// maxWarnings caps the warnings a Result lists: a pathological output could
// otherwise produce one per line, and they end up in status.md and prompts.
const maxWarnings = 100

// list renders the warnings in document order, whole-output ones first;
// nil when there are none. Past maxWarnings the rest are counted, not listed.
func (w warnings) list() []string {
	if len(w) == 0 {
		return nil
	}
	s := slices.Clone(w)
	slices.SortStableFunc(s, func(a, b warning) int { return cmp.Compare(a.line, b.line) })
	more := 0
	if len(s) > maxWarnings {
		s, more = s[:maxWarnings], len(s)-maxWarnings
	}
	out := make([]string, 0, len(s)+1)
	for _, x := range s {
		if x.line > 0 {
			out = append(out, fmt.Sprintf("line %d: %s", x.line, x.msg))
		} else {
			out = append(out, x.msg)
		}
	}
	if more > 0 {
		out = append(out, fmt.Sprintf("… and %d more warnings", more))
	}
	return out
}
