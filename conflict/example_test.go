package conflict_test

import (
	"fmt"
	"time"

	"github.com/refine-spec/refine/conflict"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/question"
)

// A round: the Engineer disagrees with one issue and silently skips
// another; the user converts the silent one into a conflict, and both are
// decided in priority order. The decisions feed the next Engineer prompt and
// the compliance check of the round after.
func Example() {
	issues := []conflict.Issue{
		{ID: "ISSUE-R5-003", Round: 5, Severity: gap.High, Gap: "GAP-FLOW-001",
			Summary:    "Retry mechanism should use exponential backoff",
			Suggestion: "Implement 1s, 2s, 4s delays between retries",
			Impact:     "Linear retries may overwhelm failed services"},
		{ID: "ISSUE-R5-004", Round: 5, Severity: gap.Critical, Gap: "GAP-FLOW-007",
			Summary:    "Backup files create inconsistency risk",
			Suggestion: "Keep last 3 backups",
			Impact:     "A crash mid-write corrupts the only backup"},
	}
	output := `## Gap Resolution: GAP-FLOW-001

## DISAGREE: ISSUE-R5-003

**Reviewer Concern:**
> Retry mechanism should use exponential backoff.

**Engineer Position:**
Exponential backoff adds complexity for marginal benefit in this context.

**Rationale:**
Retries target local file validation, which fails fast.
`
	at := time.Date(2026, 1, 12, 15, 30, 0, 0, time.UTC)

	explicit := conflict.DetectExplicit(conflict.ExplicitInput{Round: 6, EngineerOutput: output, Issues: issues, At: at})
	conflicts := explicit.Conflicts
	for _, f := range conflict.DetectImplicit(conflict.ImplicitInput{Round: 6, EngineerOutput: output, Issues: issues}) {
		fmt.Printf("implicit: %s %v confidence %s\n", f.IssueID, f.Heuristics, f.Confidence)
		out, err := conflict.ResolveImplicit(f, "2", "", "", at, conflict.IgnoreSet{}) // convert to DISAGREE
		if err != nil {
			panic(err)
		}
		conflicts = append(conflicts, *out.Conflict)
	}

	_, alerts := conflict.CheckRate(conflict.RateHistory{},
		conflict.RateInputFor(6, issues, conflicts, explicit.Submitted),
		conflict.Limits{RoundRate: 0.5, SessionRate: 0.4, SessionRounds: 3, MaxPerRound: 5})
	for _, a := range alerts {
		fmt.Println("rate:", a.Message)
	}

	var decisions []conflict.Ruling
	var ids []string // every decision ID of the session, whatever its kind
	for _, c := range conflict.Pending(conflicts) {
		p := conflict.ConflictQuestion(c)
		fmt.Printf("%s: options %v, default %s\n", p.Title, keys(p), p.Default)
		// The user takes the recommended option.
		r := conflict.Resolution{Option: p.Default, Rationale: "The Reviewer is right"}
		d, _, err := conflict.Decide(c, r, gap.NextDecisionID(ids, 6), at)
		if err != nil {
			panic(err)
		}
		decisions = append(decisions, d)
		ids = append(ids, d.ID)
		fmt.Printf("%s: Option %s for %s\n", d.ID, d.ChosenOption, d.IssueID)
	}

	next := "## DISAGREE: ISSUE-R5-004\n\n**Rationale:** One backup is enough.\n"
	for _, v := range conflict.CheckCompliance(next, decisions) {
		fmt.Println(v.Kind, v.Fatal)
	}
	// Output:
	// implicit: ISSUE-R5-004 [UNADDRESSED_ID GAP_NOT_REVISITED SEMANTIC_NON_RESPONSE] confidence HIGH
	// rate: Engineer disagreed with 100% of HIGH/CRITICAL issues this round.
	// Conflict: ISSUE-R5-004 (CRITICAL): options [A B D], default A
	// DECISION-R6-001: Option A for ISSUE-R5-004
	// Conflict: ISSUE-R5-003 (HIGH): options [A B C], default A
	// DECISION-R6-002: Option A for ISSUE-R5-003
	// RE_ARGUED_CONFLICT true
}

func keys(p question.Question) []string {
	var out []string
	for _, o := range p.Options {
		out = append(out, o.Key)
	}
	return out
}
