// Package gap is the leaf vocabulary of refine: the identifiers that appear in
// specs and role outputs (gaps, issues, decisions), gap severities with their
// weights, and the eight-state gap lifecycle kept in a Ledger.
//
// Identifiers follow the spec's regexes (GAP-FLOW-001 §3) with word
// boundaries, so GAP-FLOW-0012 is not GAP-FLOW-001, and with one optional
// lowercase letter for split sub-gaps (GAP-FLOW-007a). Placeholders used in
// the spec's templates (GAP-XXX, ISSUE-RN-001) match nothing.
//
// docs/workflow.md#identifiers describes the identifiers and
// docs/workflow.md#gap-states the lifecycle; GAP-FLOW numbers are explained
// in docs/workflow.md#gap-flow-reference.
//
// The package does no I/O and has no package-level mutable state.
package gap
