// Package refinetemporal runs refine sessions as Temporal workflows: a
// session survives worker restarts and waits for a human for as long as it
// takes, and its LLM calls get Temporal's timeouts, heartbeats and retry
// policies across a fleet of workers.
//
// The workflow RefineSession drives the same engine as refine.Session.Run,
// with everything non-deterministic supplied by the workflow: time
// (workflow.Now, workflow.Sleep), identifiers, the backoff jitter seed and
// the concurrency of parallel drafting (workflow coroutines, through
// refine.Workers). Each role call is an activity (Activities.CallRole); a
// response that fails validation is retried by the engine with its
// failure-specific prompt, as in process, while a transient transport
// error is retried by the activity's retry policy. The session's state
// lives in the workflow (rebuilt by replay), and an activity
// (Activities.Mirror) copies it to a refine.Backend at every rendering,
// so status.md, decisions.md and final_spec.md exist for humans and
// `refine status` and `refine serve` read the mirror.
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
