package validate

import (
	"fmt"

	"github.com/refine-spec/refine/gap"
)

// Verdict is the Reviewer's outcome, computed from the issues found rather
// than taken from what the Reviewer wrote.
type Verdict string

// The two verdicts of a review, computed from the issues raised.
const (
	// Approve: no HIGH or CRITICAL issue.
	Approve Verdict = "APPROVE"
	// Revise: at least one HIGH or CRITICAL issue.
	Revise Verdict = "REVISE"
)

// Result is the outcome of validating one output, plus everything parsed
// from it. After a Content failure the parsed fields hold everything found
// (a retry prompt can name what was there); after a Structure failure they
// are empty, since the output's structure could not be trusted.
type Result struct {
	Success     bool
	FailureType FailureType // "" on success
	Retriable   bool
	// Message says what is wrong and where ("line 12: …"); on success it
	// summarises what passed.
	Message string
	// Tier is the tier that failed, or Content (the last tier run) on success.
	Tier Tier
	// Line is the 1-based line of the failure, 0 when it has no single place.
	// Lines count from the start of the output; CRLF and CR count as one
	// line break each and a leading BOM is ignored.
	Line int
	// Warnings are advisory findings (THIN_CONTENT, INCOMPLETE_STRUCTURE and
	// others) that do not fail validation. Each kind of Normalized comes
	// first, as one "NORMALIZED: …" warning.
	Warnings []string

	// Text is the answer as read: Normalize's canonical form of it (a UTF-8
	// BOM dropped, line breaks as "\n", the quirks of DESIGN §18 mapped), the
	// text every parsed field and line number refers to. Lines are kept one
	// for one, so a line of Text is the same line of the answer. A caller
	// stores and forwards Text and runs its later checks on it. It is "" when
	// the answer was not read: above MaxOutputBytes, not text, or cut by
	// the token limit or refused by the provider (Options.FinishReason).
	Text string
	// Normalized lists each kind of mapping the reading applied, in the
	// order of its first line; nil when the answer was read as written.
	Normalized []Normalization

	// GapsAddressed are the distinct gap IDs heading "## Gap Resolution:"
	// sections, sorted with gap.Compare.
	GapsAddressed []gap.ID
	// Sections are the Engineer's "## Gap Resolution:" sections in order.
	Sections []GapSection
	// NewGaps are the gaps listed under "New Gaps Introduced" or "New Gaps
	// Identified", in order, each ID once.
	NewGaps []NewGap
	// Disagreements are the Engineer's "## DISAGREE:" blocks in order.
	Disagreements []Disagreement
	// Responses are the issue IDs of "Response to ISSUE-…" headings, in
	// order of first appearance.
	Responses []string

	// Issues are the Reviewer's issues in document order.
	Issues []Issue
	// ReviewHeaders are the titles of the "## Review:" sections, without
	// the "Review:" prefix.
	ReviewHeaders []string
	// NoIssuesFound is true when the Reviewer states NO_ISSUES_FOUND (or
	// "No Issues Found") and lists no issue.
	NoIssuesFound bool
	// Verdict is computed for the Reviewer: Approve unless an issue is HIGH
	// or CRITICAL. It is empty for the Engineer.
	Verdict Verdict
}

// GapSection is one "## Gap Resolution:" section of an Engineer output.
type GapSection struct {
	ID gap.ID
	// Suffix is the header text after the ID, such as "(Revised)".
	Suffix string
	// Confidence is the section's "**Confidence:**" value: HIGH, MEDIUM or
	// LOW when it starts with one of them, else the text as written
	// (Confidence.Known reports false), "" if absent.
	Confidence gap.Confidence
	// Body is the section text after its header line, up to the next
	// level-1 or level-2 heading.
	Body string
	// Line and EndLine are the 1-based lines of the header and of the last
	// line of the section.
	Line, EndLine int
	// Subsections are the titles of the section's "###" headings.
	Subsections []string
	// Chars is the section's length in characters as the spec's
	// extract_gap_section measures it: header text after the ID plus body,
	// trimmed.
	Chars int
}

// NewGap is a gap an output introduces.
type NewGap struct {
	ID       gap.ID
	Severity gap.Severity // MEDIUM when the entry states none
	Title    string
	Line     int
	// FromGap is the Gap Resolution section the entry appeared under, if any.
	FromGap gap.ID
}

// Disagreement is one "## DISAGREE: ISSUE-…" block (GAP-FLOW-006 §2).
type Disagreement struct {
	IssueID string
	// ReviewerConcern is the quoted concern with the "> " markers removed.
	ReviewerConcern  string
	EngineerPosition string
	Rationale        string
	// Alternative is the "**Alternative Approach:**" text, "" if absent.
	Alternative string
	Line        int
}

// Issue is one Reviewer issue: as parsed here, as the conflict package
// reasons about it, and as a session's state stores it (the JSON names are
// part of that format).
type Issue struct {
	ID string `json:"id"` // ISSUE-R{N}-{NNN}
	// Round is the Reviewer round that raised the issue. Parsing leaves it
	// 0 (an output does not know its round); the engine sets it.
	Round    int          `json:"round"`
	Severity gap.Severity `json:"severity"` // from the severity section the entry sits under
	// Gap is the first gap ID in the entry, else the first gap ID of the
	// enclosing "## Review:" header, else "".
	Gap gap.ID `json:"gap,omitempty"`
	// Summary is the issue's one-line statement; Location, Impact and
	// Suggestion are the Reviewer's fields of the same names.
	Summary    string `json:"summary"`
	Location   string `json:"location,omitempty"`
	Impact     string `json:"impact,omitempty"`
	Suggestion string `json:"suggestion,omitempty"`
	// Line is where the entry starts in the output; it is not stored.
	Line int `json:"-"`
}

// Number returns the issue's three-digit number (3 for ISSUE-R5-003), or 0
// when ID is not a well-formed issue ID.
func (i Issue) Number() int {
	id, err := gap.ParseIssueID(i.ID)
	if err != nil {
		return 0
	}
	return id.Number
}

// FileMissing is the FILE_MISSING result of GAP-FLOW-001 §2 for an output
// expected at path.
func FileMissing(path string) Result {
	return Fail(MissingFile, "Expected file not found: "+path)
}

// Fail builds a failed Result of type t with the given message; Retriable
// follows t and the tier is Structure for FILE_MISSING, EMPTY_OUTPUT,
// WRONG_FORMAT, INTEGRATION_STRUCTURE, TRUNCATED, REFUSAL and
// CLARIFICATION (nothing of the answer could be read), Content otherwise.
// Callers use it for the failures they detect themselves (EXECUTION_ERROR,
// MAX_RETRIES_EXHAUSTED).
func Fail(t FailureType, message string) Result {
	tier := Content
	switch t {
	case MissingFile, EmptyOutput, WrongFormat, IntegrationStructure, Truncated, Refusal, Clarification:
		tier = Structure
	}
	return Result{FailureType: t, Retriable: t.Retriable(), Message: message, Tier: tier}
}

// TooLarge is the WRONG_FORMAT result for an output of size bytes when that
// is above opt's limit. It lets a caller that knows the size (a file's
// length) reject the output without reading it.
func TooLarge(size int64, opt Options) Result {
	return Fail(WrongFormat, fmt.Sprintf("output is %d bytes, above the %d-byte limit (MaxOutputBytes)", size, opt.maxBytes()))
}
