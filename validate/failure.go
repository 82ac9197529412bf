package validate

// FailureType names why an output failed validation, as the spec writes it
// ("WRONG_FORMAT"). The zero value means no failure.
type FailureType string

// The failure types named by GAP-FLOW-001 (revised) and GAP-FLOW-006 (revised).
const (
	// MissingFile is FILE_MISSING: the role produced no output at the
	// expected place. (It is not called FileMissing because that name builds
	// the Result.)
	MissingFile FailureType = "FILE_MISSING"
	// EmptyOutput is EMPTY_OUTPUT: the output is empty or only whitespace.
	EmptyOutput FailureType = "EMPTY_OUTPUT"
	// WrongFormat is WRONG_FORMAT: a required header or marker is missing,
	// an issue entry is malformed, the output is not text, or it is too large.
	WrongFormat FailureType = "WRONG_FORMAT"
	// NoGapsAddressed is NO_GAPS_ADDRESSED: a Gap Resolution header names no valid gap.
	NoGapsAddressed FailureType = "NO_GAPS_ADDRESSED"
	// InconsistentRefs is INCONSISTENT_REFS: a referenced gap does not exist.
	InconsistentRefs FailureType = "INCONSISTENT_REFS"
	// ThinContent is THIN_CONTENT; it only ever appears as a warning.
	ThinContent FailureType = "THIN_CONTENT"
	// IncompleteStructure is INCOMPLETE_STRUCTURE (no Trade-offs); it only
	// ever appears as a warning.
	IncompleteStructure FailureType = "INCOMPLETE_STRUCTURE"
	// ExecutionError is EXECUTION_ERROR: the role could not be run at all.
	ExecutionError FailureType = "EXECUTION_ERROR"
	// MaxRetriesExhausted is MAX_RETRIES_EXHAUSTED: every retry failed.
	MaxRetriesExhausted FailureType = "MAX_RETRIES_EXHAUSTED"
	// InvalidDisagreeRef is INVALID_DISAGREE_REF: a DISAGREE block names an
	// issue that does not exist.
	InvalidDisagreeRef FailureType = "INVALID_DISAGREE_REF"
	// MalformedDisagree is MALFORMED_DISAGREE: a DISAGREE block lacks a
	// mandatory field, has no issue ID, is not a level-2 heading, or repeats
	// an issue.
	MalformedDisagree FailureType = "MALFORMED_DISAGREE"
	// ReArguedConflict is RE_ARGUED_CONFLICT: a DISAGREE block re-opens an
	// issue the user already decided.
	ReArguedConflict FailureType = "RE_ARGUED_CONFLICT"
)

// The failure types of reading what real models write (DESIGN §18).
const (
	// Truncated is TRUNCATED: the backend's finish reason says the token
	// limit cut the answer (CutByTokenLimit). Checked before anything else
	// but the MaxOutputBytes bound; the retry asks for a larger limit.
	Truncated FailureType = "TRUNCATED"
	// Refusal is REFUSAL: the answer has no required header and declines
	// the task ("I can't help with that"), or the backend reports a refusal
	// or content filter (ProviderRefusal).
	Refusal FailureType = "REFUSAL"
	// Clarification is CLARIFICATION: the answer has no required header and
	// asks the user a question instead of answering.
	Clarification FailureType = "CLARIFICATION"
	// AmbiguousStructure is AMBIGUOUS_STRUCTURE: a header-like line or list
	// item names a gap, an issue or a disagreement that the reading did not
	// take, or issue entries sit under a heading that is not a severity
	// section. Nothing an answer holds is dropped without this failure.
	AmbiguousStructure FailureType = "AMBIGUOUS_STRUCTURE"
)

// FailureTypes returns every failure type this package defines, in the
// order they are declared. A switch over FailureType covers these (retry's
// texts, exemplar's selection); anything else is an unknown type, which
// those switches name as such instead of treating it as a known one.
func FailureTypes() []FailureType {
	return []FailureType{
		MissingFile, EmptyOutput, WrongFormat, NoGapsAddressed, InconsistentRefs,
		ThinContent, IncompleteStructure, ExecutionError, MaxRetriesExhausted,
		InvalidDisagreeRef, MalformedDisagree, ReArguedConflict,
		IntegrationStructure, IntegrationMissing, IntegrationStale,
		Truncated, Refusal, Clarification, AmbiguousStructure,
		MalformedGap, DuplicateGap, UnlocatedGap,
	}
}

// Known reports whether t is one of FailureTypes. The zero value (no
// failure) is not a failure type and reports false.
func (t FailureType) Known() bool {
	switch t {
	case MissingFile, EmptyOutput, WrongFormat, NoGapsAddressed, InconsistentRefs,
		ThinContent, IncompleteStructure, ExecutionError, MaxRetriesExhausted,
		InvalidDisagreeRef, MalformedDisagree, ReArguedConflict,
		IntegrationStructure, IntegrationMissing, IntegrationStale,
		Truncated, Refusal, Clarification, AmbiguousStructure,
		MalformedGap, DuplicateGap, UnlocatedGap:
		return true
	}
	return false
}

// Retriable reports whether asking the role again can fix this failure:
// true for everything a role can correct in its next output, false for
// EXECUTION_ERROR and MAX_RETRIES_EXHAUSTED (nothing left to retry), for the
// warning-only types, and for unknown types.
func (t FailureType) Retriable() bool {
	switch t {
	case MissingFile, EmptyOutput, WrongFormat, NoGapsAddressed, InconsistentRefs,
		InvalidDisagreeRef, MalformedDisagree, ReArguedConflict,
		IntegrationStructure, IntegrationMissing, IntegrationStale,
		Truncated, Refusal, Clarification, AmbiguousStructure,
		MalformedGap, DuplicateGap, UnlocatedGap:
		return true
	}
	return false
}

// Tier is the validation tier a result comes from, as status.md's
// validation log names it.
type Tier string

// The two tiers of GAP-FLOW-001 §1.
const (
	// Structure is Tier 1: presence, size, encoding, required headers and
	// issue entry format.
	Structure Tier = "Structure"
	// Content is Tier 2: gaps addressed, cross-references, DISAGREE blocks,
	// and the advisory checks that produce warnings.
	Content Tier = "Content"
)
