package render

import (
	"fmt"
	"strings"

	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/llm"
)

// renderIntegration is status.md's "Final Spec" section: the form of
// final_spec.md and the integration step's attempts.
func renderIntegration(b *strings.Builder, in *state.IntegrationState) {
	if in == nil {
		return
	}
	b.WriteString("\n## Final Spec\n\n")
	switch {
	case in.Step != state.IntegDone:
		b.WriteString("The integration step is under way: final_spec.md holds the appendix form until it ends.\n")
	case in.Form == state.FinalSpecIntegrated:
		fmt.Fprintf(b, "final_spec.md is the integrated spec (v1.0); its Resolution Log is also in %s.\n", state.KeyFinalTrace)
	default:
		fmt.Fprintf(b, "final_spec.md is the appendix form: %s.\n", in.Reason)
	}
	if len(in.Engineer)+len(in.Reviewer) == 0 {
		return
	}
	b.WriteString("\n| Timestamp | Role | Attempt | Tier | Result | Message |\n|-----------|------|---------|------|--------|---------|\n")
	row := func(role llm.RoleName, a state.AttemptRec) {
		result, msg := "PASS", a.Message
		if !a.Success {
			result, msg = "FAIL "+string(a.FailureType), a.Message
		}
		fmt.Fprintf(b, "| %s | %s | %d | %s | %s | %s |\n", a.At.UTC().Format("2006-01-02 15:04:05"), role.Title(), a.N, Dash(a.Tier), result, Cell(OneLine(msg)))
	}
	i, j := 0, 0
	for i < len(in.Engineer) || j < len(in.Reviewer) {
		if j >= len(in.Reviewer) || (i < len(in.Engineer) && !in.Engineer[i].At.After(in.Reviewer[j].At)) {
			row(llm.Engineer, in.Engineer[i])
			i++
		} else {
			row(llm.Reviewer, in.Reviewer[j])
			j++
		}
	}
}
