// Package sim is the deterministic session simulator of issue #23 ("never
// stuck, never corrupt"): from a seed it builds a spec's gaps, a scripted
// Engineer and Reviewer that produce valid and invalid outputs, and an
// operator that at every stop of the session answers, defers, reopens,
// rolls back, approves, abandons, exports and imports, crashes and moves
// the session between stores. After every step it checks the invariants
// the issue lists (see Invariant) and reports each violation with the seed
// and a shortened history.
//
// Everything is a function of the seed: the roles answer by (seed, role,
// call, round, attempt, gaps), the session runs on a fixed clock with
// fixed IDs, and the operator draws its choices from two streams — the
// decisions that change the session (answers, rollbacks, approval) and the
// perturbations that must not (reopening, export/import, crashes, store
// moves, refused answers) — so a twin without perturbations must end the
// same way.
//
// Run it with
//
//	go test ./internal/sim -run '^TestSimulate$' -seeds=2000      # CI's kind of run
//	go test ./internal/sim -run '^TestSimulate$' -seed=311 -v     # replay one seed
//	go test ./internal/sim -run '^TestSimulate$' -seeds=100000 -probes=0.25 -timeout=3h -show=20
//
// and leave a known bug's area out while it is being fixed with
// -off=NAME,… (or REFINE_SIM_OFF): a move ("crash", "export", "casekey",
// …), an invariant ("stuck", "drivers", …), "q:TEXT" for the questions
// whose ID contains TEXT, or "flowpending" for answers given while a
// rollback dialog waits next to them.
package sim
