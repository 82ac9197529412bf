// Package exemplar chooses, sizes and lays out the example output (the
// exemplar) the Mediator attaches to Engineer and Reviewer prompts
// (GAP-FLOW-008, used by the retries of GAP-FLOW-001).
//
// Examples come from three tiers, tried in an order that depends on why the
// last output failed validation (Select, GAP-FLOW-008 §5):
//
//   - Tier 1, canonical: the examples of the workflow spec's Section 7,
//     read by ExtractCanonical (or supplied by the host as a Canonical).
//     They are the authoritative format.
//   - Tier 2, session history: an output of the same role that passed
//     validation in an earlier round of this session, ranked by
//     RelevanceScore. Rolled-back rounds are never used. It shows the format
//     filled in with this session's gaps.
//   - Tier 3, templates: the structural templates compiled into the package
//     (EngineerTemplate, ReviewerTemplate), so that something is always
//     available.
//
// Whatever is chosen is fitted into a token budget (Truncate, GAP-FLOW-008 §6):
// sections are kept in the spec's priority order and the one that does not
// fit is abbreviated; text without the expected structure is cut hard. The
// result, notice included, never exceeds the budget. RetryPrompt and
// InitialFormatBlock lay the example out in a prompt, and RenderLog writes
// the "Example Attachment Log" of status.md (GAP-FLOW-008 §8).
//
// Token counts come from a Tokenizer; the default, CharTokenizer, is the
// spec's estimate of four characters per token and needs no network.
//
// The package is pure: no I/O, no goroutines, no package-level mutable
// state. Failure types are validate.FailureType, the one type validate,
// retry and this package share.
//
// GAP-FLOW numbers name the parts of the workflow's design, and "§N" a
// numbered part of one; docs/workflow.md#gap-flow-reference lists them and
// docs/workflow.md#retries-and-examples explains example attachment.
package exemplar
