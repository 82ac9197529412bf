package conflict

import "strings"

// oneLine joins the lines of s with spaces and collapses blank runs, for
// table cells and one-line summaries.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// firstLine returns the first non-blank line of s, trimmed.
func firstLine(s string) string {
	for l := range strings.Lines(s) {
		if t := strings.TrimSpace(l); t != "" {
			return t
		}
	}
	return ""
}

// firstSentence returns the first sentence of s on one line, without its
// final period: the one-line positions of a decisions.md entry.
func firstSentence(s string) string {
	s = oneLine(s)
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSuffix(s, ".")
}

// orNotStated substitutes a visible placeholder for an empty field.
func orNotStated(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(not stated)"
	}
	return s
}

// quoted wraps s in double quotes unless it already is.
func quoted(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && strings.HasPrefix(s, `"`) && strings.HasSuffix(s, `"`) {
		return s
	}
	return `"` + s + `"`
}

// cell makes s safe in a markdown table cell.
func cell(s string) string { return strings.ReplaceAll(oneLine(s), "|", `\|`) }

// indentContinuation indents every line of a multi-line value but the first
// by two spaces, so it stays inside its "- **Field:**" list item.
func indentContinuation(s string) string {
	return strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n  ")
}
