// Package conflict implements disagreement handling between the Engineer and
// the Reviewer: explicit conflicts from "## DISAGREE: ISSUE-…" blocks and the
// soft-matching fallback (GAP-FLOW-006 §2), implicit disagreement heuristics
// H1-H5 (GAP-FLOW-013, docs/workflow.md#implicit-disagreement), DISAGREE
// rate limits (§3), option generation and the conflict presentation (§4),
// prioritisation and user
// severity overrides (§7, Example 3), decision records, the decisions.md
// rendering and the next-prompt resolution block (§5), the re-argue
// compliance check (§5), and the counts that block termination (§8).
//
// The package is pure logic: no I/O, no goroutines, no clock (callers pass
// time.Time values) and no package-level mutable state. Every state type
// (Conflict, Ruling, IgnoreSet, RateHistory, Overrides) is a plain,
// JSON-serialisable value. Markdown is read only through internal/markdown,
// and identifiers and phrases inside code (fenced blocks, inline code) never
// count: they are examples, not statements.
//
// # Engine call order for one round N+1
//
// Given the Reviewer issues of round N (user Overrides applied with
// ApplyOverrides) and the validated Engineer output of round N+1:
//
//  1. CheckCompliance(output, allDecisions), as part of validation: a Fatal
//     Violation is the retriable failure RE_ARGUED_CONFLICT with its Message
//     (retry the Engineer); the others are warnings. (validate's
//     ResolvedIssues check catches the plain DISAGREE case first; this adds
//     the quoted decision, informal re-arguments and the warning.)
//  2. DetectExplicit: conflicts from DISAGREE blocks and soft matches.
//  3. DetectImplicit (with the round's assigned gaps, the previous Engineer
//     output and the IgnoreSet). For each Finding with Escalate, ask
//     ImplicitQuestion and apply the answer with ResolveImplicit: an
//     instruction for the next prompt (gap → NEEDS_REVISION), a converted
//     Conflict, a waiver Ruling, or a grown IgnoreSet. Findings without
//     Escalate are only logged.
//  4. CheckRate(history, RateInputFor(round, issues, conflicts,
//     explicit.Submitted), limits): ask RateQuestion for each alert in order;
//     BLOCK_ROUND answered "request revision" retries the Engineer with
//     BlockInstruction. Store the returned history.
//  5. Pending(conflicts): for each, ask ConflictQuestion (optionally after
//     WithAnalysis), then Decide with a decision ID from gap.NextDecisionID, or
//     OverrideSeverity when the user re-grades the issue instead.
//  6. While conflicts are pending: BlockedGaps → BLOCKED; Blocking feeds the
//     termination check. Ruling.NextState suggests the gap's state after.
//  7. Render decisions.md with RenderDecisions; the next Engineer prompt
//     starts with ResolutionBlock(RecentDecisions(all, N+2)).
//
// Every question is a question.Question, handed to the host's asker as it
// is, with a documented automated-mode Default and an Effect on each option;
// validateAnswer checks an answer against it.
package conflict
