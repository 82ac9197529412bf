// Package core holds a session's decisions: given its state (held in
// memory, rebuilt on open) and an input — start, a delivered role
// response, an answer, a rollback request, approve or abandon — the
// Engine decides and leaves in its Ready writes what to persist, which
// role calls to make and which questions to ask. It makes no role call,
// asks no Asker, writes no Store, reads no wall clock, starts no
// goroutine and imports no context: what it must read of the Store it
// reads through a view the driver binds (ReadyWrites.Base), its events go
// through the driver's Telemetry, its time through the driver's clock.
//
// The root package refine is the public API over it and its driver: Run,
// Next/Advance/Deliver and the Temporal workflow all drive this one core.
// Nothing outside the module imports it.
package core
