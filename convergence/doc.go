// Package convergence decides whether a refinement session is getting
// anywhere and when it should stop (GAP-FLOW-002 and GAP-FLOW-005 as refine
// revised them; docs/workflow.md#convergence and #outcomes).
//
// Measure turns two ledger snapshots into one Row of the convergence table;
// a Tracker turns the sequence of rows into the CONVERGING / STALLED(k) /
// DIVERGENCE_WARNING state machine and is plain JSON, so a state snapshot
// restores it exactly. Decide walks the termination decision tree, including
// the conflict-blocking rules of GAP-FLOW-006 §8 and the once-per-open-set
// early-termination offer. The remaining files render what the user reads:
// the markdown table and SVG chart for status.md, the wording of the
// divergence and early-termination questions, and final_summary.md.
//
// Everything here is pure: no I/O, no goroutines, no package-level mutable
// state. The caller (the refine Mediator) owns persistence and asking.
package convergence
