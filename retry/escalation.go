package retry

import "fmt"

// Escalation option keys, as numbered in GAP-FLOW-001 §5.
const (
	OptionSkip     = "1"
	OptionReassign = "2"
	OptionContext  = "3"
	OptionNarrow   = "4"
	OptionPause    = "5"
)

// EscalationOption is one choice of the escalation question.
type EscalationOption struct {
	Key, Label, Effect string
}

// Escalation is the question asked when a role exhausted its retries.
type Escalation struct {
	Title   string
	Body    string
	Options []EscalationOption
	// Default is the automated-mode choice: skip the role this round, which
	// keeps the session moving and loses nothing (the gaps return to OPEN or
	// stay PROPOSED for the next Reviewer).
	Default string
}

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

// EscalationQuestion words the FLOW-001 §5 question for role in round after
// attempts failed attempts ending in failureType.
func EscalationQuestion(role string, round int, failureType string, attempts int) Escalation {
	r := roleTitle(role)
	opts := []EscalationOption{
		{OptionSkip, fmt.Sprintf("Skip %s this round - Proceed without %s output", r, r), fmt.Sprintf("Round %d recorded as \"%s: SKIP\"", round, r)},
		{OptionReassign, "Reassign gaps - Choose different gaps for this round", "Select from non-blocked gaps in status.md (answer text may list gap IDs)"},
		{OptionContext, fmt.Sprintf("Provide context - Add information %s may be missing", r), "Text input added to prompt, one additional retry"},
		{OptionNarrow, "Narrow scope - Address only the simplest gap", "Reassign to single lowest-complexity gap"},
		{OptionPause, "Pause session - Save state for later", "Session saved, can resume with fresh context"},
	}
	body := fmt.Sprintf(`%s could not produce valid output after %d attempts.

=== Situation ===
Round: %d
Role: %s
Failure Type: %s
Attempts: %d (all failed validation)

=== Options ===
`, r, attempts, round, r, failureType, attempts)
	for _, o := range opts {
		body += fmt.Sprintf("%s. %s\n   Effect: %s\n\n", o.Key, o.Label, o.Effect)
	}
	body += "Choose an option (1-5): ___"
	return Escalation{
		Title:   fmt.Sprintf("Round %d: %s could not produce valid output", round, r),
		Body:    body,
		Options: opts,
		Default: OptionSkip,
	}
}
