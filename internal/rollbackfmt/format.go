// Package rollbackfmt holds the text primitives of the rollback files: the
// timestamp and size formats, the small wording helpers (plurals, ordinals,
// one-line folding, markdown table cells) and the rollback notices appended
// to a restored status.md and decisions.md.
//
// Package rollback uses them when it executes a plan and writes archive
// metadata, and the engine uses them when it re-renders status.md and
// decisions.md from the session state, so both produce the same bytes. The
// package imports only the standard library.
package rollbackfmt

import (
	"fmt"
	"strings"
	"time"
)

// TimestampLayout is the spec's timestamp format (rollback_metadata.json,
// notices, history): ISO 8601 in UTC with second precision,
// "2026-01-12T14:30:00Z".
const TimestampLayout = "2006-01-02T15:04:05Z"

// FormatTimestamp renders t in UTC with TimestampLayout.
func FormatTimestamp(t time.Time) string { return t.UTC().Format(TimestampLayout) }

// ParseTimestamp reads a TimestampLayout timestamp.
func ParseTimestamp(s string) (time.Time, error) {
	t, err := time.Parse(TimestampLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("rollback: timestamp %q: want YYYY-MM-DDTHH:MM:SSZ: %w", s, err)
	}
	// time.Parse also takes one-digit hours ("T1:30:00Z"); refine writes
	// one form only, and reads only that.
	if t.Format(TimestampLayout) != s {
		return time.Time{}, fmt.Errorf("rollback: timestamp %q: want YYYY-MM-DDTHH:MM:SSZ, two digits a field", s)
	}
	return t, nil
}

// Plural returns "1 decision" / "2 decisions".
func Plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

var ordinals = [...]string{"zeroth", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"}

// Ordinal spells small ordinals as words, the way the spec writes them
// ("second attempt"), and falls back to digits.
func Ordinal(n int) string {
	if n >= 0 && n < len(ordinals) {
		return ordinals[n]
	}
	return fmt.Sprintf("%dth", n)
}

// Capitalize upper-cases the first ASCII letter.
func Capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// TimesWord renders a repetition count as the spec does ("twice").
func TimesWord(n int) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return fmt.Sprintf("%d times", n)
}

// FormatSize renders a byte count the way the spec's archive list does
// ("2.1 KB"), with 1 KB = 1024 bytes.
func FormatSize(n int64) string {
	const k = 1024
	switch {
	case n < k:
		return fmt.Sprintf("%d B", n)
	case n < k*k:
		return fmt.Sprintf("%.1f KB", float64(n)/k)
	case n < k*k*k:
		return fmt.Sprintf("%.1f MB", float64(n)/(k*k))
	}
	return fmt.Sprintf("%.1f GB", float64(n)/(k*k*k))
}

// Cell makes s safe inside a markdown table cell: pipes are escaped and line
// breaks become spaces, so caller-supplied text cannot break the table.
func Cell(s string) string {
	s = strings.ReplaceAll(s, "\r", " ")
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

// OneLine folds caller-supplied text onto one line, so a reason or title
// cannot inject headings into a rendered block.
func OneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// JoinInts renders 6, 7, 8 as "6, 7, 8".
func JoinInts(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = fmt.Sprint(n)
	}
	return strings.Join(parts, ", ")
}

// AppendBlock appends a markdown block to a document, separated by one blank
// line, without touching the document's existing bytes.
func AppendBlock(doc []byte, block string) []byte {
	out := make([]byte, 0, len(doc)+len(block)+2)
	out = append(out, doc...)
	if len(out) > 0 {
		if out[len(out)-1] != '\n' {
			out = append(out, '\n')
		}
		out = append(out, '\n')
	}
	return append(out, block...)
}

// Wrap breaks s into lines of at most width bytes at spaces (a longer word
// stays whole); later lines are prefixed with indent, which width excludes.
func Wrap(s string, width int, indent string) string {
	words := strings.Fields(s)
	var b strings.Builder
	line := 0
	for i, w := range words {
		if i > 0 {
			if line+1+len(w) > width {
				b.WriteString("\n")
				b.WriteString(indent)
				line = 0
			} else {
				b.WriteString(" ")
				line++
			}
		}
		b.WriteString(w)
		line += len(w)
	}
	return b.String()
}
