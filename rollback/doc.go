// Package rollback undoes one or more rounds of a refinement session: the
// workflow's GAP-FLOW-007 (docs/workflow.md#rollback). A host that drives
// its own rounds can use it on its own; refine's engine uses it the same way.
//
// It covers the whole mechanism as pure logic over bytes and keys:
//
//   - backups: key names, rotation (keep the last Retention rounds) and the
//     rounds that can still be restored (backups.go, targets.go);
//   - planning a rollback from the keys present in the Store, with the
//     session limit and per-round attempt numbers (plan.go), and executing a
//     plan into the puts and deletes of one atomic commit (execute.go);
//   - deterministic tar.gz archives of rolled-back rounds and a hardened
//     reader for them that refuses absolute paths, "..", links and archives
//     that unpack to more than 64 MiB (archive.go), with the decisions
//     archived alongside (decisions.go);
//   - the three modes AUTO_RETRY, INTERACTIVE and STRICT and the triggers
//     (modes.go), and the rollback history kept in the session state
//     (history.go);
//   - pattern detection over rolled-back outputs, the adjustments that
//     answer it, root-cause analysis after repeated rollbacks and gap
//     splitting (patterns.go, adjustments.go, rootcause.go, split.go);
//   - archive handling at session end and cold storage with its retention
//     job (cold.go).
//
// The questions refine asks around a rollback and the markdown it writes
// into status.md are the engine's, not part of this package.
//
// The package does no I/O, starts no goroutines, never reads the clock (every
// function that needs a time takes a time.Time) and has no package-level
// mutable state. The host reads the keys a Plan names from its Store,
// passes their bytes in, and commits what comes back in one Store commit.
package rollback
