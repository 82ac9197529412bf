package render

import (
	"fmt"
	"strings"
	"time"

	"github.com/refine-spec/refine/conflict"
	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/validate"
)

// row renders the event as a row of the "## Round N Errors" table.
func loggedRow(e state.LoggedEvent) state.ErrorEntry {
	r := state.ErrorEntry{Round: e.Round, At: e.At}
	switch e.Kind {
	case state.LoggedTransportRetry:
		r.Role, r.Event = e.Role.Title(), "Transport retry"
		r.Details = fmt.Sprintf("%s; retry %d in %s", e.Err, e.Try, e.Delay.Round(time.Millisecond))
	case state.LoggedImplicitDisagreement:
		r.Role, r.Event = "Mediator", "Implicit disagreement (logged)"
		r.Details = fmt.Sprintf("%s (%s issue; %s confidence; %s): %s", e.Issue, e.Severity, e.Confidence, heuristicList(e.Heuristics), strings.Join(e.Evidence, "; "))
	case state.LoggedDisagree:
		r.Role, r.Event = "Engineer", "DISAGREE logged (not a conflict)"
		r.Details = fmt.Sprintf("%s: %s", Dash(e.Issue), Dash(e.Position))
	case state.LoggedUnmatchedDisagree:
		what := "names no issue"
		if e.Issue != "" {
			what = "names " + e.Issue
		}
		if e.Line > 0 {
			what = fmt.Sprintf("line %d %s", e.Line, what)
		}
		r.Role, r.Event = "Engineer", "Unmatched DISAGREE block (logged)"
		r.Details = fmt.Sprintf("%s and matches no issue of round %d: %s", what, e.Against, Dash(e.Position))
	case state.LoggedExecutionError:
		r.Role, r.Event, r.Details = "Mediator", string(validate.ExecutionError), e.Err
	default:
		r.Role, r.Event, r.Details = "Mediator", string(e.Kind), e.Err
	}
	return r
}

// heuristicList names the heuristics that fired ("H1 UNADDRESSED_ID, …").
func heuristicList(hs []conflict.Heuristic) string {
	parts := make([]string, len(hs))
	for i, h := range hs {
		parts[i] = string(h)
	}
	return strings.Join(parts, ", ")
}
