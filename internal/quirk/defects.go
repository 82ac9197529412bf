package quirk

import (
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/markdown"
	"github.com/refine-spec/refine/validate"
)

// Names of the defects a quirk-injecting role draws by themselves, beside
// the benign quirks: a cut answer and refusals.
const (
	// NameCutByTokenLimit cuts the answer at a random point; the backend
	// reports the finish reason "length".
	NameCutByTokenLimit = "cut-by-token-limit"
	// NameProviderRefusal keeps the answer but the backend reports the
	// finish reason "refusal".
	NameProviderRefusal = "provider-refusal"
	// NameRefusal replaces the answer with a refusal in words.
	NameRefusal = "refusal"
	// NameQuestionBack replaces the answer with a question to the user.
	NameQuestionBack = "question-back"
)

// Defects returns the defects the validators must catch, each with the
// failure type it must produce. A fresh slice each call.
func Defects() []Defect {
	eng, rev := gap.Engineer, gap.Reviewer
	d := func(name string, role gap.Role, want validate.FailureType, f func(string, *rand.Rand) (string, bool)) Defect {
		return Defect{Quirk: Quirk{Name: name, Role: role, Apply: f}, Want: want}
	}
	cut := d(NameCutByTokenLimit, "", validate.Truncated, func(t string, r *rand.Rand) (string, bool) { return Truncate(t, r), len(t) > 1 })
	cut.FinishReason = "length"
	refused := d(NameProviderRefusal, "", validate.Refusal, func(t string, _ *rand.Rand) (string, bool) { return t, true })
	refused.FinishReason = "refusal"
	unknownRef := d("unknown-gap-reference", eng, validate.InconsistentRefs, appendText("\nThe retry budget also touches GAP-ZZZ-999.\n"))
	unknownRef.NeedsKnownGaps = true
	wrongRound := d("issue-of-another-round", rev, validate.WrongFormat, otherRound)
	wrongRound.NeedsRound = true
	return []Defect{
		cut, refused,
		d(NameRefusal, "", validate.Refusal, func(_ string, r *rand.Rand) (string, bool) { return pick(r, refusals[:]), true }),
		d(NameQuestionBack, "", validate.Clarification, func(_ string, r *rand.Rand) (string, bool) { return pick(r, questions[:]), true }),
		d("empty", "", validate.EmptyOutput, func(string, *rand.Rand) (string, bool) { return "", true }),
		d("whitespace-only", "", validate.EmptyOutput, func(string, *rand.Rand) (string, bool) { return " \n\t\n", true }),
		d("think-block-only", "", validate.EmptyOutput, func(_ string, r *rand.Rand) (string, bool) {
			return "<think>\n" + pick(r, thoughts[:]) + "\n</think>\n", true
		}),
		d("nul-byte", "", validate.WrongFormat, func(t string, r *rand.Rand) (string, bool) {
			i := r.IntN(len(t) + 1)
			for i > 0 && i < len(t) && t[i]&0xC0 == 0x80 {
				i-- // not inside a rune
			}
			return t[:i] + "\x00" + t[i:], true
		}),
		d("invalid-utf8", "", validate.WrongFormat, appendText("\xff\xfe\n")),
		structural(d("unclosed-fence", "", validate.WrongFormat, unclosedFence)),
		structural(d("cut-inside-a-fence", "", validate.WrongFormat, cutInFence)),

		// Engineer.
		d("no-gap-resolution-header", eng, validate.WrongFormat, func(t string, _ *rand.Rand) (string, bool) {
			return mapLines(t, prefixed("## Gap Resolution:"), nil, func(s string) string { return "## Resolution of" + s[len("## Gap Resolution:"):] })
		}),
		d("no-confidence", eng, validate.WrongFormat, noConfidence),
		d("header-without-a-gap-id", eng, validate.NoGapsAddressed, func(t string, _ *rand.Rand) (string, bool) {
			return mapLines(t, prefixed("## Gap Resolution: GAP-"), func(int) []int { return []int{0} },
				func(string) string { return "## Gap Resolution: to be assigned" })
		}),
		unknownRef,
		d("gap-heading-without-keyword", eng, validate.AmbiguousStructure, appendText("\n## GAP-ZZZ-998: A follow-up\n\nA note on what comes next.\n")),
		d("disagree-as-list-item", eng, validate.AmbiguousStructure, appendText("\n- DISAGREE: ISSUE-R9-001 (the reviewer is wrong)\n")),
		d("disagree-without-rationale", eng, validate.MalformedDisagree, func(t string, _ *rand.Rand) (string, bool) {
			if !strings.Contains(t, "\n## DISAGREE: ISSUE-") && !strings.HasPrefix(t, "## DISAGREE: ISSUE-") {
				return t, false
			}
			return mapLines(t, prefixed("**Rationale:**"), nil, func(string) string { return "" })
		}),
		d("disagree-two-issues", eng, validate.MalformedDisagree, func(t string, _ *rand.Rand) (string, bool) {
			return mapLines(t, prefixed("## DISAGREE: ISSUE-"), func(int) []int { return []int{0} },
				func(s string) string { return strings.TrimRight(s, " ") + ", ISSUE-R99-999" })
		}),

		// Reviewer.
		d("no-review-header", rev, validate.WrongFormat, func(t string, _ *rand.Rand) (string, bool) {
			return mapLines(t, func(s string) bool { return strings.HasPrefix(strings.TrimLeft(s, "#"), " Review") }, nil,
				func(s string) string { return strings.Replace(s, " Review", " Assessment", 1) })
		}),
		d("issue-under-a-non-severity-heading", rev, validate.AmbiguousStructure, issueElsewhere),
		wrongRound,
		d("duplicate-issue-id", rev, validate.WrongFormat, duplicateIssue),
		d("issue-entry-without-an-id", rev, validate.WrongFormat, func(t string, _ *rand.Rand) (string, bool) {
			return mapLines(t, func(s string) bool { _, _, ok := severityLine(s); return ok }, func(int) []int { return []int{0} },
				func(s string) string { return s + "\n- The retry budget is not explained anywhere" })
		}),
		d("no-severity-sections", rev, validate.WrongFormat, func(t string, _ *rand.Rand) (string, bool) {
			if strings.Contains(strings.ToLower(t), "no issues found") || strings.Contains(t, "NO_ISSUES_FOUND") {
				return t, false
			}
			return mapLines(t, func(s string) bool { _, _, ok := severityLine(s); return ok }, nil, func(string) string { return "### Notes" })
		}),

		// The integrated spec.
		d("no-resolution-log", Integration, validate.IntegrationStructure, replacePrefix("## Resolution Log", "## Change Log")),
		d("integration-refusal", Integration, validate.Refusal, func(_ string, r *rand.Rand) (string, bool) { return pick(r, refusals[:]), true }),
	}
}

// WantFor is the failure type d must produce for an answer of role.
func (d Defect) WantFor(role gap.Role) validate.FailureType {
	if role == Integration && d.WantIntegration != "" {
		return d.WantIntegration
	}
	return d.Want
}

// structural makes d's failure INTEGRATION_STRUCTURE for an integrated spec.
func structural(d Defect) Defect {
	d.WantIntegration = validate.IntegrationStructure
	return d
}

var (
	refusals = [...]string{
		"I'm sorry, but I can't help with that request.",
		"I apologize, but I won't be able to help with reviewing this document.",
		"I cannot assist with this.",
	}
	questions = [...]string{
		"Before I start: could you clarify which of the two retry policies the spec should keep?",
		"Would you like me to resolve all the gaps, or only the first one?",
		"Which authentication scheme should the API use? I need that to proceed.",
	}
)

// Truncate cuts text at a random point (a rune boundary), as a token
// limit does: at least one byte is kept and at least one is cut when text
// has two or more.
func Truncate(text string, r *rand.Rand) string {
	if len(text) < 2 {
		return text
	}
	i := 1 + r.IntN(len(text)-1)
	for i > 1 && text[i]&0xC0 == 0x80 {
		i--
	}
	return text[:i]
}

func appendText(s string) func(string, *rand.Rand) (string, bool) {
	return func(t string, _ *rand.Rand) (string, bool) { return strings.TrimRight(t, "\n") + "\n" + s, true }
}

// unclosedFence opens a code block after the last fence line and never
// closes it.
func unclosedFence(t string, r *rand.Rand) (string, bool) {
	ls := split(t)
	last := -1
	for i, l := range ls {
		if l.fence {
			last = i
		}
	}
	var at []int
	for i := last + 1; i < len(ls); i++ {
		if strings.TrimSpace(ls[i].text) == "" {
			at = append(at, i)
		}
	}
	if len(at) == 0 {
		return t, false
	}
	i := at[r.IntN(len(at))]
	ls = append(ls[:i+1], append([]line{{text: "```text"}}, ls[i+1:]...)...)
	return join(ls), true
}

// cutInFence cuts the answer two lines into a fenced block.
func cutInFence(t string, r *rand.Rand) (string, bool) {
	ls := split(t)
	var opens []int
	for i, l := range ls {
		if l.fence && (i == 0 || !ls[i-1].fence) {
			if _, _, _, ok := markdown.OpeningFence(l.text); ok {
				opens = append(opens, i)
			}
		}
	}
	for len(opens) > 0 {
		k := r.IntN(len(opens))
		if i := opens[k]; i+1 < len(ls) && ls[i+1].fence {
			return join(ls[:i+2]) + "\n", true // the opening line and one more
		}
		opens = append(opens[:k], opens[k+1:]...)
	}
	return t, false
}

// noConfidence removes every confidence statement.
func noConfidence(t string, _ *rand.Rand) (string, bool) {
	return mapLines(t, func(s string) bool {
		i := strings.Index(strings.ToLower(s), "confidence")
		return i >= 0 && i <= 6 || strings.Contains(s, "**Confidence:**")
	}, nil, func(string) string { return "" })
}

// issueRound returns the round of the first issue ID outside fences.
func issueRound(t string) int {
	for _, l := range split(t) {
		if l.fence {
			continue
		}
		for _, m := range gap.FindIssueMatches(l.text) {
			if id, err := gap.ParseIssueID(m.ID); err == nil {
				return id.Round
			}
		}
	}
	return 0
}

// issueElsewhere adds an issue of the review's round under a heading that
// is not a severity.
func issueElsewhere(t string, _ *rand.Rand) (string, bool) {
	round := issueRound(t)
	if round == 0 {
		return t, false
	}
	return appendText("\n### Other notes\n\n- **ISSUE-R"+strconv.Itoa(round)+"-097**: One more finding\n")(t, nil)
}

// firstIssueEntry is the index of the first top-level issue entry.
func firstIssueEntry(ls []line) int {
	for i, l := range ls {
		if l.fence {
			continue
		}
		s := strings.TrimLeft(l.text, "-*+#0123456789.) ")
		if s != l.text && strings.HasPrefix(strings.TrimLeft(s, "*_["), "ISSUE-R") && !strings.HasPrefix(l.text, " ") {
			return i
		}
	}
	return -1
}

// otherRound moves the first issue entry to the next round.
func otherRound(t string, _ *rand.Rand) (string, bool) {
	ls := split(t)
	i := firstIssueEntry(ls)
	if i < 0 {
		return t, false
	}
	m := gap.FindIssueMatches(ls[i].text)[0]
	id, _ := gap.ParseIssueID(m.ID)
	ls[i].text = strings.Replace(ls[i].text, m.ID, "ISSUE-R"+strconv.Itoa(id.Round+1)+m.ID[strings.LastIndexByte(m.ID, '-'):], 1)
	return join(ls), true
}

// duplicateIssue repeats the first issue entry's line right after it.
func duplicateIssue(t string, _ *rand.Rand) (string, bool) {
	ls := split(t)
	i := firstIssueEntry(ls)
	if i < 0 {
		return t, false
	}
	dup := ls[i]
	if strings.HasPrefix(dup.text, "#") {
		dup.text = "\n" + dup.text
	}
	ls = append(ls[:i+1], append([]line{dup}, ls[i+1:]...)...)
	return join(ls), true
}
