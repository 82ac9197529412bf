package retry

import (
	"fmt"

	"github.com/refine-spec/refine/question"
	"github.com/refine-spec/refine/validate"
)

// Escalation option keys, as numbered in GAP-FLOW-001 §5, and the sixth,
// rolling the round back, offered when a rollback is possible.
const (
	OptionSkip     = "1"
	OptionReassign = "2"
	OptionContext  = "3"
	OptionNarrow   = "4"
	OptionPause    = "5"
	OptionRollback = "6"
)

// roleTitle capitalises "engineer" → "Engineer".
func roleTitle(role string) string {
	if role == "" {
		return role
	}
	b := []byte(role)
	if b[0] >= 'a' && b[0] <= 'z' {
		b[0] -= 'a' - 'A'
	}
	return string(b)
}

// EscalationQuestion words the GAP-FLOW-001 §5 question for role in round
// after attempts failed attempts ending in failureType. With rollback set
// it also offers OptionRollback: validation failures can trigger a
// rollback (GAP-FLOW-001 §10), whose reason is the answer's text. The body
// lists the options as the spec shows them (question.Menu). The caller
// sets the question's ID, which counts the role's escalations.
//
// Automated default: OptionSkip, skip the role this round, which keeps the
// session moving and loses nothing (the gaps return to OPEN or stay
// PROPOSED for the next Reviewer).
func EscalationQuestion(role string, round int, failureType validate.FailureType, attempts int, rollback bool) question.Question {
	r := roleTitle(role)
	opts := []question.Option{
		{Key: OptionSkip, Label: fmt.Sprintf("Skip %s this round - Proceed without %s output", r, r), Effect: fmt.Sprintf("Round %d recorded as \"%s: SKIP\"", round, r), Recommended: true},
		{Key: OptionReassign, Label: "Reassign gaps - Choose different gaps for this round", Effect: "Select from non-blocked gaps in status.md (answer text may list gap IDs)"},
		{Key: OptionContext, Label: fmt.Sprintf("Provide context - Add information %s may be missing", r), Effect: "Text input added to prompt, one additional retry"},
		{Key: OptionNarrow, Label: "Narrow scope - Address only the simplest gap", Effect: "Reassign to single lowest-complexity gap"},
		{Key: OptionPause, Label: "Pause session - Save state for later", Effect: "Session saved, can resume with fresh context"},
	}
	if rollback {
		opts = append(opts, question.Option{Key: OptionRollback, Label: "Roll back this round - Archive it, restore the state before it, and retry",
			Effect: "Round archived as round_NNN_rolled_back_K.tar.gz; answer text is the rollback's reason; the rollback options follow"})
	}
	body := fmt.Sprintf(`%s could not produce valid output after %d attempts.

=== Situation ===
Round: %d
Role: %s
Failure Type: %s
Attempts: %d (all failed validation)

=== Options ===
`, r, attempts, round, r, failureType, attempts) + question.Menu(opts)
	return question.Question{
		Kind:      question.KindEscalation,
		Round:     round,
		Title:     fmt.Sprintf("Round %d: %s could not produce valid output", round, r),
		Body:      body,
		Options:   opts,
		AllowText: true,
		Default:   OptionSkip,
	}
}
