package state

import (
	"fmt"

	"github.com/refine-spec/refine/llm"
)

// Store keys of the session artifacts (docs/workflow.md#session-folder).
const (
	KeyState     = "state.json"
	KeyStatus    = "status.md"
	KeyDecisions = "decisions.md"
	KeySpec      = "source_spec.md"
	KeyFinalSpec = "final_spec.md"
	KeyFinalSum  = "final_summary.md"
	// KeyFinalTrace is the integration step's trace: how final_spec.md
	// was written.
	KeyFinalTrace = "final_spec_trace.json"
)

// RoundDir is the folder of round n's files.
func RoundDir(n int) string { return fmt.Sprintf("round_%03d", n) }

// OutputKey names role's output of round n.
func OutputKey(n int, role llm.RoleName) string { return fmt.Sprintf("%s/%s.md", RoundDir(n), role) }

// SummaryKey names round n's summary.
func SummaryKey(n int) string { return RoundDir(n) + "/summary.md" }

// AttemptKeys returns the journal keys of one attempt: the exact prompt
// sent and the raw response. part is "" or the gap ID of a parallel call.
func AttemptKeys(n int, role llm.RoleName, part string, attempt int) (prompt, response string) {
	name := string(role)
	if part != "" {
		name += "-" + part
	}
	return fmt.Sprintf("%s/prompts/%s-%d.md", RoundDir(n), name, attempt),
		fmt.Sprintf("%s/attempts/%s-%d.md", RoundDir(n), name, attempt)
}

// FinalAttemptKeys are the journal keys of an integration-step attempt.
func FinalAttemptKeys(role llm.RoleName, k int) (prompt, response string) {
	return fmt.Sprintf("final/prompts/%s-%d.md", role, k), fmt.Sprintf("final/attempts/%s-%d.md", role, k)
}

// FinalOutputKey holds the role's accepted output of the integration step.
func FinalOutputKey(role llm.RoleName) string { return "final/" + string(role) + ".md" }

// BackupKeyState, BackupKeyStatus and BackupKeyDecisions name round n's
// backups (FLOW-007 §2).
func BackupKeyState(n int) string     { return fmt.Sprintf("state_backup_round_%d.json", n) }
func BackupKeyStatus(n int) string    { return fmt.Sprintf("status_backup_round_%d.md", n) }
func BackupKeyDecisions(n int) string { return fmt.Sprintf("decisions_backup_round_%d.md", n) }
