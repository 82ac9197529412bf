// Package rollback implements GAP-FLOW-007 (revised, spec round 6): undoing
// one or more rounds of a refinement session.
//
// It covers the whole mechanism as pure logic over bytes and keys:
//
//   - backups: key names, rotation (keep the last Retention rounds) and the
//     table of rounds that can still be restored (backups.go, targets.go);
//   - planning a rollback from the keys present in the Store, with the
//     session limit and per-round attempt numbers (plan.go), and executing a
//     plan into the puts and deletes of one atomic commit (execute.go);
//   - deterministic tar.gz archives of rolled-back rounds and a hardened
//     reader for them (archive.go);
//   - the markdown the spec prescribes: rollback notices, the auto-retry
//     block, the Rollback History and Session Rollback Summary (notices.go,
//     history.go), and the questions as neutral Prompt values (prompt.go);
//   - the three modes AUTO_RETRY, INTERACTIVE and STRICT (modes.go);
//   - pattern detection over rolled-back outputs, the "Rollback Analysis"
//     report, auto-adjustments, root-cause analysis after repeated rollbacks
//     and gap splitting (patterns.go, adjustments.go, analysis.go,
//     rootcause.go, split.go);
//   - recovery of decisions made in a rolled-back round (recovery.go);
//   - archive handling at session end and cold storage with its retention
//     job (cold.go).
//
// The package does no I/O, starts no goroutines, never reads the clock (every
// function that needs a time takes a time.Time) and has no package-level
// mutable state. The engine reads the keys a Plan names from its Store,
// passes their bytes in, and commits what comes back in one Store commit.
package rollback
