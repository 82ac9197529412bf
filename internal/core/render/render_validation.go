package render

import (
	"fmt"
	"slices"
	"strings"

	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/llm"
)

// writeValidationLogs writes the validation log of every recent round
// that has validation rows.
func writeValidationLogs(b *strings.Builder, st *state.State, recent int) {
	vrows, rrows := ValidationRows(st, recent, 0), RetryRows(st, recent)
	for _, n := range roundsWith(vrows) {
		if n >= recent {
			RenderValidationLog(b, st, n, vrows, rrows)
		}
	}
}

// RenderValidationLog writes the "## Round N Validation Log" of spec
// round-09 §9 from the session's validation and retry rows.
func RenderValidationLog(b *strings.Builder, st *state.State, n int, rows []state.ValidationEntry, retries []state.RetryDetail) {
	fmt.Fprintf(b, "\n## Round %d Validation Log\n\n### Validation Summary\n| Role | Outcome | Attempts | Final Failure Type |\n|------|---------|----------|-------------------|\n", n)
	for _, role := range []llm.RoleName{llm.Engineer, llm.Reviewer} {
		t := tallyRole(rows, n, role, attemptsOf(st, n, role))
		if t.attempts == 0 {
			continue
		}
		outcome, final := t.outcome()
		fmt.Fprintf(b, "| %s | %s | %d | %s |\n", role.Title(), outcome, t.attempts, final)
	}
	writeDetailedLog(b, n, rows)
	writeRetryDetails(b, n, retries)
}

// roleTally is what one role's validation rows of one round come to.
type roleTally struct {
	attempts int
	lastFail string // the failure type of the last failed attempt
	passed   bool
}

// tallyRole counts the attempts of role in round n from its validation
// rows; recorded are the role's attempts of the round still in state,
// which name the failure type of a legacy row.
func tallyRole(rows []state.ValidationEntry, n int, role llm.RoleName, recorded []state.AttemptRec) roleTally {
	var t roleTally
	for _, v := range rows {
		if v.Round != n || v.Role != role || v.Tier == state.TierEscalation {
			continue // an escalation row is the spent budget, not an attempt
		}
		if v.Tier == "Structure" || v.Result == "FAIL" {
			t.attempts++
		}
		if v.Result == "FAIL" {
			t.lastFail = failureTypeOf(v, recorded)
		}
		if v.Result == "PASS" && v.Tier == "Content" {
			t.passed = true
		}
	}
	return t
}

// failureTypeOf returns a failed row's failure type. A legacy row has
// none: it takes its recorded attempt's, else its tier.
func failureTypeOf(v state.ValidationEntry, recorded []state.AttemptRec) string {
	if v.FailureType != "" {
		return string(v.FailureType)
	}
	ft := v.Tier
	for _, a := range recorded {
		if a.N == v.Attempt && !a.Success {
			ft = string(a.FailureType)
		}
	}
	return ft
}

// outcome returns the validation summary's outcome and final failure
// type for the tallied role.
func (t roleTally) outcome() (outcome, final string) {
	switch {
	case t.passed && t.attempts > 1:
		return "SUCCESS", "N/A (passed on retry)"
	case t.passed:
		return "SUCCESS", "N/A"
	default:
		return "FAILED", t.lastFail
	}
}

// writeDetailedLog writes the validation log's "### Detailed Log" table
// of round n.
func writeDetailedLog(b *strings.Builder, n int, rows []state.ValidationEntry) {
	b.WriteString("\n### Detailed Log\n\n| Timestamp | Role | Attempt | Validation | Result | Message |\n|-----------|------|---------|------------|--------|---------|\n")
	for _, v := range rows {
		if v.Round != n {
			continue
		}
		fmt.Fprintf(b, "| %s | %s | %d | %s | %s | %s |\n", Timestamp(v.At), roleLabel(v.Role, v.Part), v.Attempt, v.Tier, v.Result, Cell(v.Message))
	}
}

// writeRetryDetails writes the validation log's "### Retry Details" of
// round n, if it had retries.
func writeRetryDetails(b *strings.Builder, n int, retries []state.RetryDetail) {
	first := true
	for _, r := range retries {
		if r.Round != n {
			continue
		}
		if first {
			b.WriteString("\n### Retry Details\n")
			first = false
		}
		fmt.Fprintf(b, "\n#### %s Retry %d (%s)\n- **Failure Type:** %s\n- **Prompt Modification:** %s\n- **Example Attached:** %s\n- **Outcome:** %s\n",
			roleLabel(r.Role, r.Part), r.Retry, Timestamp(r.At), r.FailureType, r.Modification, r.Example, r.Outcome)
	}
}

// roleLabel names a role in the validation log: "Engineer", or
// "Engineer (G-003)" for one part of a parallel Engineer call.
func roleLabel(role llm.RoleName, part string) string {
	if part == "" {
		return role.Title()
	}
	return role.Title() + " (" + part + ")"
}

// attemptsOf returns the recorded attempts of a role in round n, if that
// round's detail is still in state.
func attemptsOf(st *state.State, n int, role llm.RoleName) []state.AttemptRec {
	if st.Current != nil && st.Current.N == n {
		return st.Current.Role(role).Attempts
	}
	return nil
}

// roundsWith returns the rounds the validation rows belong to, in order.
func roundsWith(rows []state.ValidationEntry) []int {
	var out []int
	for _, v := range rows {
		if !slices.Contains(out, v.Round) {
			out = append(out, v.Round)
		}
	}
	return out
}

// writeErrors writes the "## Round N Errors" table of every recent round
// with error rows.
func writeErrors(b *strings.Builder, errs []state.ErrorEntry, recent int) {
	for _, n := range roundsOf(errs) {
		if n < recent {
			continue
		}
		fmt.Fprintf(b, "\n## Round %d Errors\n\n| Timestamp | Role | Event | Details |\n|-----------|------|-------|---------|\n", n)
		for _, e := range errs {
			if e.Round == n {
				fmt.Fprintf(b, "| %s | %s | %s | %s |\n", Timestamp(e.At), e.Role, e.Event, Cell(e.Details))
			}
		}
	}
}

// roundsOf returns the rounds the error rows belong to, in order.
func roundsOf(rows []state.ErrorEntry) []int {
	var out []int
	for _, e := range rows {
		if !slices.Contains(out, e.Round) {
			out = append(out, e.Round)
		}
	}
	return out
}
