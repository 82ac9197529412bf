package validate

import (
	"strings"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/markdown"
)

// The integrated spec's "## Known Limitations" (DESIGN §16, turn 4): every
// limitation known before the integration call, open and deferred gaps
// (IntegrationInput.Limitations) and the other open items by ID
// (IntegrationInput.OpenIssues), is listed there.

// limitationsSection finds the Known Limitations section of the output:
// required (INTEGRATION_STRUCTURE) when any limitation is known.
func limitationsSection(d *markdown.Doc, out specDoc, in IntegrationInput) (markdown.Section, bool, *IntegrationResult) {
	if len(in.Limitations)+len(in.OpenIssues) == 0 {
		return markdown.Section{}, false, nil
	}
	sec, ok := out.section(2, knownLimitationsTitle)
	if ok {
		return sec, true, nil
	}
	hint, line := missingHeader(d, "## "+knownLimitationsTitle)
	r := failIntegration(IntegrationStructure, line, "no \"## %s\" section%s: %s belong under it", knownLimitationsTitle, hint, limitationNames(in))
	return markdown.Section{}, false, &r
}

// limitationNames names the known limitations for a failure message.
func limitationNames(in IntegrationInput) string {
	var parts []string
	if len(in.Limitations) > 0 {
		parts = append(parts, "the open gaps "+joinGapIDs(in.Limitations))
	}
	if len(in.OpenIssues) > 0 {
		parts = append(parts, "the open issues "+strings.Join(in.OpenIssues, ", "))
	}
	return strings.Join(parts, " and ")
}

// unlistedLimitation fails (INTEGRATION_MISSING) on the first known
// limitation the Known Limitations section does not name.
func unlistedLimitation(d *markdown.Doc, limits markdown.Section, in IntegrationInput) *IntegrationResult {
	body := d.Body(limits)
	listed := map[gap.ID]bool{}
	for _, id := range gap.FindIDs(body) {
		listed[id] = true
	}
	for _, id := range in.Limitations {
		if !listed[id] {
			r := failIntegration(IntegrationMissing, limits.Line, "the open gap %s is not listed under \"## %s\": list it with its severity and what is not yet specified", id, knownLimitationsTitle)
			return &r
		}
	}
	for _, id := range in.OpenIssues {
		if !containsWord(body, id) {
			r := failIntegration(IntegrationMissing, limits.Line, "the open issue %s is not listed under \"## %s\": list it as - %s (SEVERITY): what it leaves open", id, knownLimitationsTitle, id)
			return &r
		}
	}
	return nil
}

// namesOpenIssue reports whether a sentence names one of the open issues:
// such a sentence may call what it is about open, whatever gap it names.
func namesOpenIssue(sentence string, ids []string) bool {
	for _, id := range ids {
		if containsWord(sentence, id) {
			return true
		}
	}
	return false
}

// containsWord reports whether word occurs in text with no letter, digit,
// '-' or '_' on either side (ISSUE-R4-001 is not ISSUE-R4-0012).
func containsWord(text, word string) bool {
	if word == "" {
		return false
	}
	for i := 0; ; {
		j := strings.Index(text[i:], word)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(word)
		if (start == 0 || !wordByte(text[start-1])) && (end == len(text) || !wordByte(text[end])) {
			return true
		}
		i = start + 1
	}
}

func wordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}
