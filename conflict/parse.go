package conflict

import (
	"strings"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/markdown"
)

// The bold labels of the mandatory DISAGREE format (GAP-FLOW-006 §2).
const (
	labelConcern     = "Reviewer Concern"
	labelPosition    = "Engineer Position"
	labelRationale   = "Rationale"
	labelAlternative = "Alternative" // "Alternative Approach (if any)", "Alternative View"
	labelRequest     = "Request"
)

// parseEngineerDisagreements reads every DISAGREE block of an Engineer output in
// document order, as validate does: a heading (outside code) whose title
// starts with the upper-case word DISAGREE, and the section it governs.
// IssueID is the first issue ID in the heading's title outside inline code,
// "" when there is none. Fields run from their bold label
// ("**Rationale:**", also "**Rationale**:") to the next known label or
// thematic break; the Reviewer Concern loses its "> " markers. Blocks are
// returned as written: unknown or duplicate IDs are for the caller to judge.
func parseEngineerDisagreements(engineerOutput string) []Disagreement {
	return parseDisagreements(markdown.Parse(engineerOutput))
}

func parseDisagreements(d *markdown.Doc) []Disagreement {
	var out []Disagreement
	for _, s := range d.Sections() {
		title := headingProse(d, s.Heading)
		if !isDisagreeTitle(title) {
			continue
		}
		b := readFields(d, s.BodyStart, s.End)
		b.Line = s.Line
		if m := gap.FindIssueMatches(title); len(m) > 0 {
			b.IssueID = m[0].ID
		}
		out = append(out, b)
	}
	return out
}

// isDisagreeTitle: the upper-case word DISAGREE, then a colon, a blank or
// the end. "Disagreement with the reviewer" is not a DISAGREE heading.
func isDisagreeTitle(t string) bool {
	rest, ok := strings.CutPrefix(t, "DISAGREE")
	return ok && (rest == "" || rest[0] == ':' || rest[0] == ' ' || rest[0] == '\t')
}

// readFields collects the labelled fields found in [start, end) of d.
func readFields(d *markdown.Doc, start, end int) Disagreement {
	var fields [5][]string // indexed like labels
	labels := [...]string{labelConcern, labelPosition, labelRationale, labelAlternative, labelRequest}
	cur := -1
	for off := start; off < end; {
		nl := strings.IndexByte(d.Text[off:end], '\n')
		lineEnd := end
		if nl >= 0 {
			lineEnd = off + nl
		}
		text, prose := d.Text[off:lineEnd], d.Prose[off:lineEnd]
		off = lineEnd + 1
		if k, at, ok := boldLabel(prose, labels[:]); ok {
			cur = k
			fields[k] = append(fields[k][:0], text[at:])
			continue
		}
		if isThematicBreak(strings.TrimSpace(prose)) {
			cur = -1
			continue
		}
		if cur >= 0 {
			fields[cur] = append(fields[cur], text)
		}
	}
	join := func(lines []string) string { return strings.TrimSpace(strings.Join(lines, "\n")) }
	concern := make([]string, len(fields[0]))
	for i, l := range fields[0] {
		concern[i] = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), ">"))
	}
	return Disagreement{
		ReviewerConcern:  join(concern),
		EngineerPosition: join(fields[1]),
		Rationale:        join(fields[2]),
		Alternative:      join(fields[3]),
	}
}

// boldLabel recognises a line of prose starting (after blanks or a list
// marker) with one of labels in bold, "**Label:**" or "**Label**:", and
// returns the label's index and the offset of the text after it. The
// Alternative label matches by prefix ("Alternative Approach (if any)").
func boldLabel(p string, labels []string) (int, int, bool) {
	i := 0
	for i < len(p) && (p[i] == ' ' || p[i] == '\t') {
		i++
	}
	if i < len(p) && isListMarker(p[i:]) {
		for i < len(p) && p[i] != ' ' && p[i] != '\t' {
			i++
		}
		for i < len(p) && (p[i] == ' ' || p[i] == '\t') {
			i++
		}
	}
	rest, ok := strings.CutPrefix(p[i:], "**")
	if !ok {
		return 0, 0, false
	}
	close := strings.Index(rest, "**")
	if close < 0 {
		return 0, 0, false
	}
	name, after := rest[:close], close+2
	if n, ok := strings.CutSuffix(name, ":"); ok {
		name = n
	} else if strings.HasPrefix(rest[after:], ":") {
		after++
	} else {
		return 0, 0, false
	}
	name = strings.TrimSpace(name)
	for k, l := range labels {
		if strings.EqualFold(name, l) || (l == labelAlternative && len(name) > len(l) && strings.EqualFold(name[:len(l)], l)) {
			return k, i + 2 + after, true
		}
	}
	return 0, 0, false
}

// informalBlock is a disagreement written without the mandatory format: a
// heading whose title starts with the word "disagree" in another case
// ("## Disagree: retry timing"), or a section whose "**Engineer
// Position:**" starts with DISAGREE (the Round 1 format, "## Response to
// ISSUE-R2-001"). A heading merely mentioning DISAGREE ("DISAGREE Rate
// Limiting") is a topic, not a disagreement. Its
// text is the section's own content, up to its first subheading, so a
// DISAGREE block nested under it is not read twice.
type informalBlock struct {
	Disagreement
	text  string   // Text of the block (heading line included)
	prose string   // Prose of the block
	ids   []string // issue IDs in the block, outside code, in order
}

// informalDisagreements finds the informal blocks of d, in order.
func informalDisagreements(d *markdown.Doc) []informalBlock {
	secs := d.Sections()
	var out []informalBlock
	for i, s := range secs {
		title := headingProse(d, s.Heading)
		if isDisagreeTitle(title) {
			continue
		}
		own := s.End
		if i+1 < len(secs) && secs[i+1].Start < own {
			own = secs[i+1].Start // the first subheading
		}
		if !startsWithWordFold(title, "disagree") && !positionSaysDisagree(d, s.BodyStart, own) {
			continue
		}
		b := informalBlock{
			Disagreement: readFields(d, s.BodyStart, own),
			text:         d.Text[s.Start:own],
			prose:        d.Prose[s.Start:own],
		}
		b.Line = s.Line
		for _, m := range gap.FindIssueMatches(b.prose) {
			b.ids = append(b.ids, m.ID)
		}
		if b.EngineerPosition == "" || strings.EqualFold(b.EngineerPosition, "DISAGREE") {
			// The Round 1 format says only "DISAGREE" there; the
			// argument is the rest of the block.
			b.EngineerPosition = strings.TrimSpace(d.Text[s.BodyStart:own])
		}
		out = append(out, b)
	}
	return out
}

// positionSaysDisagree reports whether [start, end) has an
// "**Engineer Position:**" field whose text starts with the word DISAGREE.
func positionSaysDisagree(d *markdown.Doc, start, end int) bool {
	labels := []string{labelPosition}
	for off := start; off < end; {
		nl := strings.IndexByte(d.Prose[off:end], '\n')
		lineEnd := end
		if nl >= 0 {
			lineEnd = off + nl
		}
		p := d.Prose[off:lineEnd]
		off = lineEnd + 1
		if _, at, ok := boldLabel(p, labels); ok {
			v := strings.TrimSpace(p[at:])
			if startsWithWordFold(v, "disagree") {
				return true
			}
		}
	}
	return false
}

// startsWithWordFold reports whether s starts with word, ignoring ASCII
// case, followed by a non-word character or the end ("Disagree: …" but not
// "Disagreement …").
func startsWithWordFold(s, word string) bool {
	return len(s) >= len(word) && strings.EqualFold(s[:len(word)], word) &&
		(len(s) == len(word) || !isWordByte(s[len(word)]))
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}
