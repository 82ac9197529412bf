package retry

import (
	"fmt"
	"strings"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/validate"
)

// Context carries the values the modification texts interpolate.
type Context struct {
	Role string // "engineer", "reviewer" or "discovery" (gap.Discovery)
	// ExpectedPath is where the output belongs ("round_003/engineer.md").
	ExpectedPath string
	// Gaps is the assigned gap list in priority order, e.g. "GAP-FLOW-001".
	Gaps []string
	// ValidGaps is every gap of the session (for INCONSISTENT_REFS; for
	// DUPLICATE_GAP, the gaps already listed).
	ValidGaps []string
	// InvalidRefs is the validator's message naming the bad references.
	InvalidRefs string
	// Message is the validator's message, quoted for failure types the spec
	// gives no text for (DISAGREE problems, re-argued conflicts, a question
	// back, an ambiguous structure).
	Message string
}

// FormatGapList renders gap IDs one per line as "- GAP-…", as the spec's
// format_gap_list does.
func FormatGapList(ids []string) string {
	if len(ids) == 0 {
		return "- (none)"
	}
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("- ")
		b.WriteString(id)
	}
	return b.String()
}

// GenericModification is the spec's fallback retry text (GAP-FLOW-001 §4),
// which Modification returns for a failure type no retry follows
// (validate's non-retriable types) and for an unknown one.
const GenericModification = "Please review your output and try again."

// GenericLabel is Label's name for GenericModification.
const GenericLabel = "generic retry notice"

// Modification returns the text prepended to a retry prompt for a failure
// type. The texts of GAP-FLOW-001 §4 are reproduced exactly; failure types
// the spec gives no text for get one in the same voice. Every retriable
// type has its own text; the types no retry follows (EXECUTION_ERROR,
// MAX_RETRIES_EXHAUSTED and the warning-only ones) and an unknown type (not
// validate.FailureType.Known: a record of a newer refine, say) get
// GenericModification.
func Modification(failureType validate.FailureType, c Context) string {
	firstGap := "GAP-XXX"
	if len(c.Gaps) > 0 {
		firstGap = c.Gaps[0]
	}
	switch failureType {
	case validate.MissingFile:
		return fmt.Sprintf(`
CRITICAL: Your previous attempt did not create the required output file.

You MUST write your output to: %s

Use the Write tool to create this file. Do not skip this step.
The file must exist at exactly this path when you complete your task.
`, c.ExpectedPath)
	case validate.EmptyOutput:
		return `
ATTENTION: Your previous output was empty or too brief.

You MUST produce substantive content, even if you are uncertain.
Minimum expectations:
- At least 200 characters per gap addressed
- Include concrete examples, not just abstract descriptions
- If uncertain, state your confidence as LOW and explain what information is missing

Do NOT submit an empty file. Write something useful.
`
	case validate.WrongFormat:
		if gap.Role(strings.ToLower(c.Role)) == gap.Discovery {
			return `
FORMAT CORRECTION REQUIRED:

Your previous answer held no gap list and did not say NO_GAPS_FOUND.
` + discoveryFormat
		}
		return `
FORMAT CORRECTION REQUIRED:

Your previous output did not follow the required structure.
You MUST include these elements:

For Engineer:
- Start each gap with: ## Gap Resolution: GAP-XXX
- Include: **Confidence:** HIGH | MEDIUM | LOW
- Include: ### Proposed Solution, ### Examples, ### Trade-offs, ### New Gaps Introduced

For Reviewer:
- Start with: ## Review: [section/gap being reviewed]
- Include severity sections: ### Critical Issues, ### High Priority, etc.
- OR include: NO_ISSUES_FOUND with verification checklist

The example below shows the correct format. Match it exactly.
`
	case validate.NoGapsAddressed:
		return fmt.Sprintf(`
GAP REFERENCE REQUIRED:

Your previous output did not reference any specific gaps.
You are assigned to address these gaps (in priority order):

%s

Your output MUST:
1. Begin with: ## Gap Resolution: %s
2. Explicitly reference gap IDs (e.g., GAP-FLOW-001) in your text
3. Address at least one gap from the assigned list

Do not discuss gaps in general terms. Reference them by ID.
`, FormatGapList(c.Gaps), firstGap)
	case validate.InconsistentRefs:
		return fmt.Sprintf(`
INVALID REFERENCES DETECTED:

Your previous output referenced gaps that do not exist:
%s

Valid gaps for this session are:
%s

Only reference gaps from this list. If you meant a different gap,
use the correct ID. If the gap doesn't exist, create it as a "New Gap"
in the ### New Gaps Introduced section.
`, c.InvalidRefs, FormatGapList(c.ValidGaps))
	case validate.InvalidDisagreeRef, validate.MalformedDisagree:
		return fmt.Sprintf(`
DISAGREE FORMAT CORRECTION REQUIRED:

%s

Every disagreement MUST use this exact form and reference an existing issue:

## DISAGREE: ISSUE-R{N}-{XXX}

**Reviewer Concern:**
> [Exact quote from reviewer.md, preserving original wording]

**Engineer Position:**
[Why this issue should not be addressed as requested]

**Rationale:**
[Evidence-based argument]

**Request:** Escalate to user for resolution
`, c.Message)
	case validate.ReArguedConflict:
		return fmt.Sprintf(`
DECIDED CONFLICT RE-ARGUED:

%s

The user has already decided this conflict. Implement the decision as
recorded. Do not re-argue it and do not write a DISAGREE block for it.
`, c.Message)
	case validate.IntegrationStructure:
		return fmt.Sprintf(`
INTEGRATED SPEC STRUCTURE CORRECTION REQUIRED:

%s

Write the whole specification as one markdown document:
- Keep every "#" and "##" heading of the source spec. To remove or rename
  one, add a Resolution Log row: | ## Old Heading | ## New Heading or — | renamed/removed: why |
- List the open gaps under "## Known Limitations".
- End with "## Resolution Log": the header row | Item | Section(s) | Note |,
  the delimiter row |---|---|---|, then one row of three cells per
  accepted gap ID and per decision ID.
- Write the spec once: no commentary before or after it.

The example below shows the required shape.
`, c.Message)
	case validate.IntegrationMissing:
		return fmt.Sprintf(`
INTEGRATED SPEC INCOMPLETE:

%s

Every accepted gap and every decision needs its own Resolution Log row,
naming the section(s) of your spec that now hold it, exactly as their
headings read (or — for a decision that changed no section). Every open
gap and open issue is listed under "## Known Limitations". Merge each
accepted resolution in full: its rules, field names, numbers and examples.
`, c.Message)
	case validate.IntegrationStale:
		return fmt.Sprintf(`
RESOLVED GAP STILL DESCRIBED AS OPEN:

%s

A resolved gap is no longer open, unspecified or TBD. Replace every
sentence of the source that said so with what the accepted resolution
specifies, and drop the gap's marker (GAP-…) from the body; the
Resolution Log records where each gap went.
`, c.Message)
	case validate.Truncated:
		return `
ANSWER CUT BY THE TOKEN LIMIT:

Your previous answer was cut off by the output token limit before it was
complete, so none of it could be used.

Write the complete answer again, and keep it concise:
- Every required section, from the first header to the last line
- No preamble, no restating of the task, no long examples
- Where a section would run long, give its essentials and record the rest
  as a New Gap
`
	case validate.Refusal:
		return `
TASK RESTATED:

Your previous answer declined the task.

This is a benign technical task: reviewing and refining a software
specification document. It involves no harmful, private or unsafe content,
and nothing beyond the document and the gaps listed here.

Complete it in the required format. Where you cannot judge part of it, say
so inside the answer and state your confidence as LOW.
`
	case validate.Clarification:
		return fmt.Sprintf(`
NO QUESTIONS BACK:

Your previous answer asked a question instead of answering:
%s

No one can answer questions during this step. Do not ask questions back.
Make the assumption you find most reasonable, state it explicitly in your
answer with LOW confidence, and record anything that truly needs a decision
as a New Gap. Then write the complete answer in the required format.
`, c.Message)
	case validate.AmbiguousStructure:
		return fmt.Sprintf(`
AMBIGUOUS STRUCTURE:

%s

Every gap, issue and disagreement must be written in the form the Mediator
reads, or it cannot be recorded:
- A gap you resolve: ## Gap Resolution: GAP-XXX
- A gap you introduce: "- GAP-XXX: title" under ### New Gaps Introduced
- An issue (Reviewer): "- **ISSUE-R{N}-NNN**: summary" under ### Critical
  Issues, ### High Priority, ### Medium Priority or ### Low Priority
- A disagreement (Engineer): ## DISAGREE: ISSUE-R{N}-NNN, then
  **Reviewer Concern:**, **Engineer Position:** and **Rationale:**

Mention any other ID in running text, not in a heading or at the start of a
list item.
`, c.Message)
	case validate.MalformedGap:
		return fmt.Sprintf(`
GAP LIST FORMAT CORRECTION REQUIRED:

%s
`, c.Message) + discoveryFormat
	case validate.DuplicateGap:
		taken := ""
		if len(c.ValidGaps) > 0 {
			taken = "\nThese IDs are taken by the gaps already listed:\n" + FormatGapList(c.ValidGaps) + "\n"
		}
		return fmt.Sprintf(`
DUPLICATE GAP ID:

%s

List each gap once, with an ID of its own, and only gaps that are not
already listed. Two entries about the same point are one gap: merge them.
%s`, c.Message, taken)
	case validate.UnlocatedGap:
		return fmt.Sprintf(`
LOCATION NOT FOUND IN THE SPEC:

%s

A Location points at the place in the spec that leaves the gap open:
either the spec's own words in double quotes, copied exactly (a sentence
or a part of one), or one of its headings as it reads, e.g. 3. Errors.
Do not paraphrase the spec or quote text it does not contain. A gap about
something the spec never mentions takes the heading of the section it
belongs in.
`, c.Message)
	case validate.ExecutionError, validate.MaxRetriesExhausted, validate.ThinContent, validate.IncompleteStructure:
		return GenericModification // not retriable: no retry prompt is built after these
	}
	return GenericModification // unknown: !failureType.Known()
}

// discoveryFormat is the discovery answer's format (DESIGN §19), as the
// retry texts of a discovery call restate it.
const discoveryFormat = `
Write every gap as one line, then its Location and Why lines, indented:

- GAP-AREA-NNN (SEVERITY): one-line title
  Location: "the spec's own words, quoted exactly" (or a heading of the spec)
  Why: what an implementer cannot decide from the spec as it stands

AREA is 2 to 6 capital letters for the spec's subject and NNN runs from
001; keep the ID of a "(GAP-…)" marker the spec already carries. SEVERITY
is CRITICAL, HIGH, MEDIUM or LOW. Nothing else goes under a gap. If the
spec leaves nothing open, write NO_GAPS_FOUND and a short checklist
("- [x] …") of what you checked.

The example below shows the correct format. Match it exactly.
`

// Label is the short name of a failure type's modification, for the
// "Prompt Modification" line of the status.md retry details: GenericLabel
// where Modification returns GenericModification.
func Label(failureType validate.FailureType) string {
	switch failureType {
	case validate.MissingFile:
		return "CRITICAL (explicit output path)"
	case validate.EmptyOutput:
		return "ATTENTION (minimum output expectations)"
	case validate.WrongFormat:
		return "FORMAT CORRECTION REQUIRED (structural headers)"
	case validate.NoGapsAddressed:
		return "GAP REFERENCE REQUIRED (explicit gap assignment)"
	case validate.InconsistentRefs:
		return "INVALID REFERENCES DETECTED (valid gap list)"
	case validate.InvalidDisagreeRef, validate.MalformedDisagree:
		return "DISAGREE FORMAT CORRECTION REQUIRED"
	case validate.ReArguedConflict:
		return "DECIDED CONFLICT RE-ARGUED (decision quoted)"
	case validate.IntegrationStructure:
		return "INTEGRATED SPEC STRUCTURE CORRECTION REQUIRED (headings and log format)"
	case validate.IntegrationMissing:
		return "INTEGRATED SPEC INCOMPLETE (log rows and resolutions)"
	case validate.IntegrationStale:
		return "RESOLVED GAP STILL DESCRIBED AS OPEN (sentence quoted)"
	case validate.Truncated:
		return "ANSWER CUT BY THE TOKEN LIMIT (complete and concise)"
	case validate.Refusal:
		return "TASK RESTATED (a benign spec review)"
	case validate.Clarification:
		return "NO QUESTIONS BACK (assumptions with LOW confidence)"
	case validate.AmbiguousStructure:
		return "AMBIGUOUS STRUCTURE (line quoted, canonical forms)"
	case validate.MalformedGap:
		return "GAP LIST FORMAT CORRECTION REQUIRED (gap line, Location, Why)"
	case validate.DuplicateGap:
		return "DUPLICATE GAP ID (IDs taken)"
	case validate.UnlocatedGap:
		return "LOCATION NOT FOUND IN THE SPEC (quotation or heading)"
	case validate.ExecutionError, validate.MaxRetriesExhausted, validate.ThinContent, validate.IncompleteStructure:
		return GenericLabel // not retriable
	}
	return GenericLabel // unknown: !failureType.Known()
}
