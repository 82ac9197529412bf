// Package validate checks Engineer and Reviewer outputs before the Mediator
// accepts them (GAP-FLOW-001 revised, with the DISAGREE rules of
// GAP-FLOW-006 and the refinements described below), and parses what they
// contain: the gaps addressed, new gaps, DISAGREE blocks, responses to
// issues, and the Reviewer's severity-tagged issues.
//
// An answer is first read as meant (DESIGN §18): Normalize maps what chat
// models write differently from the formats (a fence around the whole
// answer, a leading <think> block, HTML comments, Unicode hyphens in IDs,
// headers at other levels, separators, cases, bold and setext headers,
// severity titles by their word, confidence and DISAGREE label forms) onto
// them, keeping lines one for one; Result.Text is the answer as read and
// each kind of mapping is one "NORMALIZED:" warning. Before that, an answer
// the backend cut at its token limit is TRUNCATED and one it refused is
// REFUSAL (Options.FinishReason).
//
// Validation then runs in two tiers, as the spec's validation gate does:
//
//   - Tier 1, Structure: the output is non-empty, within MaxOutputBytes,
//     readable text, and carries the role's required markers: "## Gap
//     Resolution:" and "**Confidence:**" for the Engineer; "## Review:" and
//     severity sections (or NO_ISSUES_FOUND) for the Reviewer, with every
//     issue entry carrying a unique issue ID of the round, and no fence left
//     open. A failure here is WRONG_FORMAT or EMPTY_OUTPUT (REFUSAL or
//     CLARIFICATION for a short answer without the header that declines or
//     asks back) and no content check runs.
//   - Tier 2, Content: nothing is unread (AMBIGUOUS_STRUCTURE: a
//     header-like line or list item about a gap, an issue or a
//     disagreement the reading did not take; Unread checks any Result the
//     same way), each "## Gap Resolution:" header names a valid gap
//     (NO_GAPS_ADDRESSED), every gap referenced exists (INCONSISTENT_REFS),
//     and DISAGREE blocks reference real, undecided issues and carry the
//     mandatory fields (INVALID_DISAGREE_REF, MALFORMED_DISAGREE,
//     RE_ARGUED_CONFLICT). Thin sections and missing trade-offs are
//     warnings, never failures.
//
// The refinements: the gaps an output addresses are the IDs heading its
// "## Gap Resolution:" sections (an ID mentioned in prose is a reference);
// gap IDs listed under "New Gaps Introduced" / "New Gaps Identified" are
// new gaps, not invalid references; references to closed gaps are valid;
// without a known gap list the cross-reference check is skipped; CRLF, a
// UTF-8 byte-order mark and trailing spaces are tolerated.
//
// Integration checks the spec the integration step writes when a session
// ends (DESIGN §16) against its material — the source spec, the accepted
// resolutions, the decisions and the open gaps — in the same two tiers:
// INTEGRATION_STRUCTURE (headings kept or logged, the "## Resolution Log"
// table, "## Known Limitations", an upper size bound), then
// INTEGRATION_MISSING (every gap and decision logged, logged sections
// present, open gaps listed, a lower size bound) and INTEGRATION_STALE (a
// resolved gap still described as open); a resolution whose key terms are
// mostly absent is a warning.
//
// All structure comes from internal/markdown, so headers and identifiers
// inside fenced code blocks or inline code are examples, never structure or
// references. The package is pure: no I/O, no goroutines, no package-level
// mutable state, and every function runs in time linear in its input and
// never panics, whatever the bytes.
//
// GAP-FLOW numbers name the parts of the workflow's design; see
// docs/workflow.md#gap-flow-reference for what each one defines and
// docs/workflow.md#validation for the rules in a user's words.
package validate
