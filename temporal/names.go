package refinetemporal

// Names a client uses to reach a session workflow.
const (
	// WorkflowName is the registered name of RefineSession.
	WorkflowName = "RefineSession"
	// QueryStatus returns the session's status in the shape of
	// `refine status --json`.
	QueryStatus = "status"
	// UpdateAnswer answers the pending question (AnswerRequest).
	UpdateAnswer = "answer"
	// UpdateApprove accepts the spec as it stands (ApproveRequest).
	UpdateApprove = "approve"
	// UpdateAbandon ends the session without a final spec (AbandonRequest).
	UpdateAbandon = "abandon"
	// UpdateRollback returns the session to an earlier round
	// (RollbackRequest).
	UpdateRollback = "rollback"
	// DefaultTaskQueue is the task queue the command-line tool uses.
	DefaultTaskQueue = "refine"
)

// Activity names, as registered by Activities.
const (
	activityCallRole = "CallRole"
	activityMirror   = "Mirror"
)
