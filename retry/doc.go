// Package retry holds the Mediator's retry policy as pure functions: the
// prompt modification for each validation failure type (GAP-FLOW-001 §4,
// verbatim), the escalation question asked when retries are exhausted
// (GAP-FLOW-001 §5 / GAP-FLOW-004), and exponential backoff with full jitter
// for transient transport errors, which never spend the validation budget.
//
// The package does no I/O, starts no goroutines and reads no clock: callers
// pass time and randomness in.
//
// GAP-FLOW numbers name the parts of the workflow's design, and "§N" a
// numbered part of one; docs/workflow.md#gap-flow-reference lists them.
package retry
