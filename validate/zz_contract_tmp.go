package validate

// TEMPORARY: the API contract of issue 38's normalization, stubbed so the
// engine side compiles while package validate is rewritten on branch h38v.
// Deleted at the merge.

import "strings"

const (
	Truncated          FailureType = "TRUNCATED"
	Refusal            FailureType = "REFUSAL"
	Clarification      FailureType = "CLARIFICATION"
	AmbiguousStructure FailureType = "AMBIGUOUS_STRUCTURE"
)

type Normalization struct {
	Kind  string
	Count int
	Line  int
	First string
}

func CutByTokenLimit(reason string) bool {
	switch strings.ToLower(reason) {
	case "length", "max_tokens", "maxtokens":
		return true
	}
	return false
}

func ProviderRefusal(reason string) bool {
	switch strings.ToLower(reason) {
	case "refusal", "content_filter":
		return true
	}
	return false
}

func ContextExceeded(reason string) bool {
	return strings.Contains(strings.ToLower(reason), "context_window")
}

func NoText(cause string) Result {
	return Fail(MissingFile, "the backend returned no text: "+cause)
}

func Normalize(content string) (string, []Normalization) { return content, nil }
