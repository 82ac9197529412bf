package conflict

import (
	"strings"

	"github.com/refine-spec/refine/gap"
)

// softMatchThreshold is §2's keyword overlap at or above which content is
// taken to address an issue.
const softMatchThreshold = 0.5

// softMatch is the result of attempt_soft_issue_match (GAP-FLOW-006 §2).
type softMatch struct {
	Matched    bool           `json:"matched"`
	Confidence gap.Confidence `json:"confidence,omitempty"` // MEDIUM when matched
	Reason     string         `json:"reason,omitempty"`
	// KeywordOverlap is the share of the summary's keywords found in the
	// content (Strategy 1).
	KeywordOverlap float64 `json:"keyword_overlap"`
	// QuoteFound: the issue's summary or suggestion appears in the content
	// (Strategy 2); LocationReferenced: its location does (Strategy 3).
	QuoteFound         bool `json:"quote_found"`
	LocationReferenced bool `json:"location_referenced"`
}

// softMatchReason is §2's reason text.
const softMatchReason = "Soft match - Engineer may be addressing this issue"

// matchIssueText is §2's attempt_soft_issue_match: content matches issue when
// at least half of the summary's keywords occur in it, or it quotes the
// issue's summary or suggestion (the spec's key_phrase; compared word by
// word ignoring case and punctuation, and only when the phrase is specific
// enough to be a quote), or it names the issue's location. A match has
// MEDIUM confidence: it is a fallback, never primary detection. Callers pass
// the part of a document that may refer to the issue (a block or section),
// not a whole document, in which any summary's words are likely to occur.
func matchIssueText(content string, issue Issue) softMatch {
	return matchIssue(newMatchText(content), issue)
}

// matchText is content prepared once for matching against many issues.
type matchText struct {
	norm     string
	keywords map[string]struct{}
}

func newMatchText(content string) matchText {
	return matchText{norm: normWords(content), keywords: keywordSet(content)}
}

// issueMatcher is an issue prepared once for matching against many texts.
type issueMatcher struct {
	keywords                    map[string]struct{}
	summary, suggestion, locate string // normalised; "" when too vague to count
}

func newIssueMatcher(is Issue) issueMatcher {
	m := issueMatcher{keywords: keywordSet(is.Summary)}
	if n := normWords(is.Summary); quotable(n) {
		m.summary = n
	}
	if n := normWords(is.Suggestion); quotable(n) {
		m.suggestion = n
	}
	if n := normWords(is.Location); locatable(n) {
		m.locate = n
	}
	return m
}

func matchIssue(t matchText, issue Issue) softMatch { return newIssueMatcher(issue).match(t) }

func (im issueMatcher) match(t matchText) softMatch {
	var m softMatch
	_, m.KeywordOverlap = overlap(im.keywords, t.keywords)
	m.QuoteFound = im.summary != "" && strings.Contains(t.norm, im.summary) ||
		im.suggestion != "" && strings.Contains(t.norm, im.suggestion)
	m.LocationReferenced = im.locate != "" && strings.Contains(t.norm, im.locate)
	if m.KeywordOverlap >= softMatchThreshold || m.QuoteFound || m.LocationReferenced {
		m.Matched, m.Confidence, m.Reason = true, gap.ConfidenceMedium, softMatchReason
	}
	return m
}

func (t matchText) quotes(phrase string) bool {
	n := normWords(phrase)
	return quotable(n) && strings.Contains(t.norm, n)
}

func (t matchText) locates(loc string) bool {
	n := normWords(loc)
	return locatable(n) && strings.Contains(t.norm, n)
}

// better reports whether a is a stronger soft match than b: a quote beats a
// location, which beats keyword overlap alone; then the higher overlap.
func (a softMatch) better(b softMatch) bool {
	if a.Matched != b.Matched {
		return a.Matched
	}
	if a.QuoteFound != b.QuoteFound {
		return a.QuoteFound
	}
	if a.LocationReferenced != b.LocationReferenced {
		return a.LocationReferenced
	}
	return a.KeywordOverlap > b.KeywordOverlap
}
