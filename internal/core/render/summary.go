package render

import (
	"encoding/json"
	"fmt"

	"github.com/refine-spec/refine/convergence"
	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/store"
)

// SummaryOp returns the summary record (SummaryKey) of the session whose
// state is st, committed with every durable point so that a Backend lists
// sessions (round, outcome, open gaps by severity, pending questions,
// last activity) without reading their state.
func SummaryOp(st *state.State) store.Op {
	b, _ := json.Marshal(summaryOf(st)) // plain data: cannot fail
	return store.Put(store.SummaryKey, b)
}

// summaryOf is the SessionSummary of the session whose state is st.
func summaryOf(st *state.State) store.SessionSummary {
	sum := store.SessionSummary{Round: st.Round, Outcome: st.Outcome, Pending: len(st.Pending), Created: st.CreatedAt, Updated: st.UpdatedAt,
		OpenGaps: map[string]int{}}
	switch {
	case st.Outcome.Terminal(): // kept while a question waits (statusOutcome)
	case len(st.Pending) > 0:
		sum.Outcome = convergence.Paused
	case sum.Outcome == "":
		sum.Outcome = convergence.Running
	}
	for _, g := range st.Ledger.Open() {
		sum.OpenGaps[g.Severity.String()]++
	}
	switch {
	case len(st.Pending) > 0:
		sum.Activity = fmt.Sprintf("waiting: %s", st.Pending[0].Title)
	case st.Current != nil:
		sum.Activity = fmt.Sprintf("round %d: %s", st.Current.N, st.Current.Phase)
	case sum.Outcome.Terminal():
		sum.Activity = "finished: " + string(sum.Outcome)
	default:
		sum.Activity = fmt.Sprintf("round %d done", st.Round)
	}
	return sum
}
