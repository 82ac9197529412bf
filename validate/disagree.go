package validate

import (
	"strings"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/markdown"
)

// disagreeBlock is one DISAGREE heading with what validation needs to
// judge it; Disagreement holds what it says.
type disagreeBlock struct {
	Disagreement
	heading string          // the heading line as written
	level   int             // heading level; the format requires 2
	colon   bool            // "DISAGREE:" rather than "DISAGREE ..."
	ids     []string        // issue IDs in the heading, outside code
	labels  map[string]bool // the labels present, found outside code
}

// The bold labels of the mandatory DISAGREE format (GAP-FLOW-006 §2).
const (
	labelConcern     = "Reviewer Concern"
	labelPosition    = "Engineer Position"
	labelRationale   = "Rationale"
	labelAlternative = "Alternative"
	labelRequest     = "Request"
)

// isDisagreeTitle reports whether a heading's prose title is a DISAGREE
// heading: the upper-case word DISAGREE followed by a colon, or by an issue
// ID after spaces or a dash ("DISAGREE - ISSUE-R5-003", which then fails as
// malformed). "DISAGREE Format" and "Disagreement with the reviewer" are
// ordinary headings.
func isDisagreeTitle(p string) bool {
	rest, ok := strings.CutPrefix(p, "DISAGREE")
	if !ok {
		return false
	}
	if strings.HasPrefix(rest, ":") {
		return true
	}
	rest = strings.TrimLeft(rest, " \t-—–")
	return len(rest) < len(p)-len("DISAGREE") && strings.HasPrefix(rest, "ISSUE-")
}

// parseDisagreements reads every DISAGREE heading in document order. The
// block is the heading's section: up to the next heading of its level or higher.
func parseDisagreements(d *markdown.Doc) []disagreeBlock {
	var out []disagreeBlock
	for _, s := range d.Sections() {
		p, _ := headingTitle(d, s.Heading)
		if !isDisagreeTitle(p) {
			continue
		}
		b := disagreeBlock{
			heading: d.Line(s.Line),
			level:   s.Level,
			colon:   strings.HasPrefix(p, "DISAGREE:"),
			labels:  map[string]bool{},
		}
		b.Line = s.Line
		for _, m := range findIssueIDs(p) {
			b.ids = append(b.ids, m.ID)
		}
		if len(b.ids) > 0 {
			b.IssueID = b.ids[0]
		}
		b.readFields(d, s)
		out = append(out, b)
	}
	return out
}

// readFields fills the Disagreement from the block's bold-labelled fields.
// A field runs from its label to the next known label or thematic break;
// bold text that is not a known label ("**Pros:**") is part of the field.
func (b *disagreeBlock) readFields(d *markdown.Doc, s markdown.Section) {
	fields := map[string]*[]string{}
	var cur *[]string
	for l := range linesIn(d, s.BodyStart, s.End) {
		if label, at, ok := boldLabel(l); ok {
			b.labels[label] = true
			v := []string{l.text[at:]}
			fields[label] = &v
			cur = fields[label]
			continue
		}
		if isThematicBreakLine(l.prose) {
			cur = nil
			continue
		}
		if cur != nil {
			*cur = append(*cur, l.text)
		}
	}
	get := func(label string) string {
		if f := fields[label]; f != nil {
			return strings.TrimSpace(strings.Join(*f, "\n"))
		}
		return ""
	}
	if f := fields[labelConcern]; f != nil {
		q := make([]string, len(*f))
		for i, s := range *f {
			q[i] = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(s), ">"))
		}
		b.ReviewerConcern = strings.TrimSpace(strings.Join(q, "\n"))
	}
	b.EngineerPosition = get(labelPosition)
	b.Rationale = get(labelRationale)
	b.Alternative = get(labelAlternative)
}

// boldLabel recognises a line starting (after indentation or a list
// marker) with one of the DISAGREE labels in bold, "**Rationale:**", and
// returns the canonical label and the offset of the text after it.
func boldLabel(l line) (string, int, bool) {
	i := 0
	if _, at, ok := listItem(l.prose); ok {
		i = at
	}
	for i < len(l.prose) && (l.prose[i] == ' ' || l.prose[i] == '\t') {
		i++
	}
	if !strings.HasPrefix(l.prose[i:], "**") {
		return "", 0, false
	}
	end := strings.Index(l.prose[i+2:], ":**")
	if end < 0 {
		return "", 0, false
	}
	name := l.prose[i+2 : i+2+end]
	for _, label := range []string{labelConcern, labelPosition, labelRationale, labelAlternative, labelRequest} {
		// "Alternative Approach (if any)" and the like keep their prefix.
		if name == label || (label == labelAlternative && strings.HasPrefix(name, label)) {
			return label, i + 2 + end + 3, true
		}
	}
	return "", 0, false
}

func isThematicBreakLine(s string) bool {
	s = strings.TrimSpace(s)
	return s != "" && isThematicBreak(s)
}

// checkDisagreements applies GAP-FLOW-006 §2 (and the re-argue check of §5)
// to the blocks in document order; the first failure is returned.
func checkDisagreements(blocks []disagreeBlock, opt Options) (Result, bool) {
	var known, resolved map[string]bool
	if opt.KnownIssues != nil {
		known = setOf(opt.KnownIssues)
	}
	resolved = setOf(opt.ResolvedIssues)
	seen := map[string]int{}
	for _, b := range blocks {
		switch {
		case b.level != 2:
			return failAt(MalformedDisagree, b.Line, "DISAGREE must be a level-2 heading '## DISAGREE: ISSUE-R{N}-{XXX}', not %s", quote(b.heading)), false
		case !b.colon || len(b.ids) == 0:
			return failAt(MalformedDisagree, b.Line, "DISAGREE heading %s names no issue ID; write '## DISAGREE: ISSUE-R{N}-{XXX}' (IDs in `code` do not count)", quote(b.heading)), false
		case len(b.ids) > 1:
			return failAt(MalformedDisagree, b.Line, "DISAGREE heading names %d issues (%s); write one DISAGREE block per issue", len(b.ids), strings.Join(b.ids, ", ")), false
		}
		id := b.IssueID
		if _, err := gap.ParseIssueID(id); err != nil {
			return failAt(MalformedDisagree, b.Line, "DISAGREE heading names %s, which is not a valid issue ID (rounds 1-999, numbers 001-999)", id), false
		}
		if first, dup := seen[id]; dup {
			return failAt(MalformedDisagree, b.Line, "second DISAGREE for %s (first at line %d); write one block per issue", id, first), false
		}
		seen[id] = b.Line
		if resolved[id] {
			return failAt(ReArguedConflict, b.Line, "Engineer re-argued %s which was already resolved by user.", id), false
		}
		if known != nil && !known[id] {
			return failAt(InvalidDisagreeRef, b.Line, "DISAGREE references %s which does not exist", id), false
		}
		if !b.labels[labelConcern] {
			return failAt(MalformedDisagree, b.Line, "DISAGREE for %s missing '**Reviewer Concern:**' quote", id), false
		}
		if b.ReviewerConcern == "" {
			return failAt(MalformedDisagree, b.Line, "DISAGREE for %s has an empty '**Reviewer Concern:**' quote", id), false
		}
		if !b.labels[labelRationale] {
			return failAt(MalformedDisagree, b.Line, "DISAGREE for %s missing '**Rationale:**'", id), false
		}
		if b.Rationale == "" {
			return failAt(MalformedDisagree, b.Line, "DISAGREE for %s has an empty '**Rationale:**'", id), false
		}
	}
	return Result{}, true
}

func setOf(ids []string) map[string]bool {
	m := make(map[string]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}
