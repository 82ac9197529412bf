// Package refinetemporal runs refine sessions as Temporal workflows: a
// session survives worker restarts and waits for a human for as long as it
// takes, and its LLM calls get Temporal's timeouts, heartbeats and retry
// policies across a fleet of workers.
//
// The workflow RefineSession drives the refine engine through
// refine.Session.Next, the engine's decisions without its I/O: Next plays
// the session until it needs role calls made or questions answered and
// returns them with the writes its decisions made; the workflow commits
// the writes to its store and calls Advance, runs each call as the
// CallRole activity (all
// of a parallel-drafting round's calls side by side), hands the responses
// back with Deliver, and waits for Updates to answer questions. Everything
// else non-deterministic comes from the workflow: time (workflow.Now),
// the session ID (the workflow ID) and the backoff jitter seed. A
// response that fails validation is retried by the engine with its
// failure-specific prompt, as in process; a transient transport error is
// retried by the activity's retry policy. The session's state lives in the
// workflow (rebuilt by replay). When the starter asks for it
// (SessionInput.Mirror), a local activity (Activities.MirrorSession)
// copies it to a store.Backend at every rendering, so status.md,
// decisions.md and final_spec.md exist for humans and `refine status` and
// `refine serve` read the mirror. A session costs one CallRole activity
// and one workflow task per role call, plus the first workflow task.
//
// A question pauses the workflow durably. The Update "answer" resumes it
// (validated first: a rejected update changes nothing); "approve",
// "abandon" and "rollback" are Updates too, and the Query "status"
// returns the shape of `refine status --json`.
//
// The module is separate from refine's, so hosts that do not use Temporal
// never download its SDK. The refine-temporal command (cmd/refine-temporal)
// runs a worker and starts, answers and inspects sessions.
package refinetemporal
