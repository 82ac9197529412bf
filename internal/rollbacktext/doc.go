// Package rollbacktext renders what refine's engine and CLI show around a
// rollback (docs/workflow.md#rollback-dialogs): the questions (targets,
// confirmation, retry options, session limit, root-cause analysis, decision
// recovery, archive cleanup) as question.Question values of kind rollback
// with machine-readable option effects, the blocks written into status.md and decisions.md
// (rollback notices, the auto-retry block, the Rollback History and Session
// Rollback Summary), the "Rollback Analysis" report archived as
// analysis.md, and the log and override messages.
//
// The rollback logic itself (plans, execution, archives, modes, history,
// pattern detection, root-cause analysis, cold storage) is package
// rollback, which a host can use without this text. The wording follows the
// spec's examples byte for byte; the tests hold it there.
package rollbacktext
