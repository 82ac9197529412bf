package exemplar

import (
	"strconv"
	"strings"
)

// The rules and centred titles of construct_retry_prompt's retry notice
// (GAP-FLOW-001 §4), character for character: 79-character rules, the
// titles indented by 25 and 30 spaces.
const (
	doubleRule   = "═══════════════════════════════════════════════════════════════════════════════"
	singleRule   = "───────────────────────────────────────────────────────────────────────────────"
	retryIndent  = "                         "      // before "RETRY ATTEMPT"
	titleIndent  = "                              " // before "EXAMPLE OUTPUT"
	exampleTitle = titleIndent + "EXAMPLE OUTPUT"
	formatTitle  = titleIndent + "EXPECTED FORMAT"
)

// RetryPrompt lays out a retry prompt as construct_retry_prompt does
// (GAP-FLOW-001 §4): the retry notice, a blank line, then the original
// prompt unchanged.
//
//	═══…═══ (79)
//	                         RETRY ATTEMPT {attempt} of {maxAttempts}
//	═══…═══
//
//	{modification}
//
//	───…─── (79)
//	                              EXAMPLE OUTPUT
//	Source: {source}
//	───…───
//
//	{example}
//
//	═══…═══
//
//	{original}
//
// The spec's layout is kept exactly, with two changes that only remove
// stray blank lines: the notice starts at its first rule (the Python
// string's leading newline is dropped), and the original prompt follows
// after one blank line. Blank lines around modification and example are
// trimmed so the layout does not depend on them. With no example
// (FILE_MISSING, or an empty Selection) the EXAMPLE OUTPUT block, from its
// first rule to the example, is left out; with no modification its
// paragraph is left out.
func RetryPrompt(original, modification, source, example string, attempt, maxAttempts int) string {
	var b strings.Builder
	b.Grow(len(original) + len(modification) + len(example) + 1024)
	b.WriteString(doubleRule + "\n")
	b.WriteString(retryIndent + "RETRY ATTEMPT " + strconv.Itoa(attempt) + " of " + strconv.Itoa(maxAttempts) + "\n")
	b.WriteString(doubleRule + "\n")
	if m := trimBlankLines(modification); m != "" {
		b.WriteString("\n" + m + "\n")
	}
	if e := trimBlankLines(example); e != "" {
		b.WriteString("\n" + singleRule + "\n" + exampleTitle + "\n" + "Source: " + source + "\n" + singleRule + "\n\n")
		b.WriteString(e + "\n")
	}
	b.WriteString("\n" + doubleRule + "\n\n")
	b.WriteString(original)
	return b.String()
}

// InitialFormatBlock lays out the format example attached to a role's
// initial prompt (from SelectInitial), in the style of the retry notice's
// example block; "" when sel has no text. It ends with a newline, so a
// prompt template can place it on its own.
//
//	───…─── (79)
//	                              EXPECTED FORMAT
//	Source: {sel.Description}
//	───…───
//
//	{sel.Text}
//
//	───…───
func InitialFormatBlock(sel Selection) string {
	text := trimBlankLines(sel.Text)
	if text == "" {
		return ""
	}
	return singleRule + "\n" + formatTitle + "\n" + "Source: " + sel.Description + "\n" + singleRule + "\n\n" +
		text + "\n\n" + singleRule + "\n"
}
