// Package refine turns a loose spec into a finished one by running LLM roles
// in rounds: an Engineer proposes resolutions for the spec's open gaps, a
// Reviewer critiques them with severity-tagged issues, and the Mediator
// validates every output, retries with failure-specific prompts and examples,
// tracks convergence, surfaces disagreement to the user, records decisions
// that feed back into later prompts, and can roll whole rounds back.
//
// Hosts inject the LLM backend (Role), storage (Store) and user interaction
// (Asker). The Role and Store contracts live in packages llm and store, so
// that adapters depend on them and not on the engine; refine.Role,
// refine.Store and their companions are aliases of those. The subpackages are usable on their own: gap (identifiers,
// severity, lifecycle), validate (two-tier output validation), exemplar,
// retry, convergence, conflict and rollback are pure logic; store/memory and
// store/fs are Stores checked by storetest; refinetest scripts roles and
// answers for tests; llm adapts langchaingo models.
package refine
