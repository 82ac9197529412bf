package render

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/validate"
)

// ValidationRows returns the validation log's rows of rounds from to to
// (0: no bound): a session's legacy rows (written before attempt facts),
// then, round by round, the rows of each attempt followed by the round's
// warnings, then the warnings of rounds without attempt facts. It is
// linear in the facts, warnings and legacy rows: a long session builds
// these rows at every durable point.
func ValidationRows(st *state.State, from, to int) []state.ValidationEntry {
	in := func(round int) bool { return round >= from && (to == 0 || round <= to) }
	var rows []state.ValidationEntry
	for _, v := range st.LegacyValidation {
		if in(v.Round) {
			rows = append(rows, v)
		}
	}
	rows = factRows(st, rows, factsIn(st, from, to, in), in)
	return orphanWarnings(st, rows, in)
}

// factRound orders attempt facts by round, as the engine records them.
func factRound(f state.AttemptFact, round int) int { return cmp.Compare(f.Round, round) }

// factsInOrder reports whether the attempt log is in round order, as the
// engine writes it (an edited state.json may not be).
func factsInOrder(st *state.State) bool {
	return slices.IsSortedFunc(st.AttemptLog, func(a, b state.AttemptFact) int { return cmp.Compare(a.Round, b.Round) })
}

// factsIn returns the attempt facts of rounds from to to (0: no bound),
// for reading only: a part of the log when it is in round order, found
// by binary search (a long session's status.md shows its recent rounds at
// every durable point, and copying the whole log to filter it grew with
// the session), else a filtered copy.
func factsIn(st *state.State, from, to int, in func(round int) bool) []state.AttemptFact {
	log := st.AttemptLog
	if !factsInOrder(st) {
		return slices.DeleteFunc(slices.Clone(log), func(f state.AttemptFact) bool { return !in(f.Round) })
	}
	lo, _ := slices.BinarySearchFunc(log, from, factRound)
	hi := len(log)
	if to != 0 {
		hi, _ = slices.BinarySearchFunc(log, to+1, factRound)
	}
	hi = max(hi, lo)
	return log[lo:hi:hi]
}

// factRows appends the rows of facts, each round's followed by its
// warnings (those in range).
func factRows(st *state.State, rows []state.ValidationEntry, facts []state.AttemptFact, in func(round int) bool) []state.ValidationEntry {
	byRound := map[int][]state.WarningFact{}
	for _, w := range st.Warnings {
		if in(w.Round) {
			byRound[w.Round] = append(byRound[w.Round], w)
		}
	}
	warnings := func(round int) {
		for _, w := range byRound[round] {
			rows = append(rows, warningRow(w))
		}
	}
	round := 0
	for _, f := range facts {
		if f.Round != round {
			warnings(round)
			round = f.Round
		}
		base := state.ValidationEntry{Round: f.Round, At: f.At, Role: f.Role, Part: f.Part, Attempt: f.N}
		if f.Success {
			structure, content := base, base
			structure.Tier, structure.Result, structure.Message = "Structure", "PASS", "-"
			content.Tier, content.Result, content.Message = "Content", "PASS", f.Summary
			rows = append(rows, structure, content)
			continue
		}
		fail := base
		fail.Tier, fail.Result, fail.Message, fail.FailureType = f.Tier, "FAIL", f.Message, f.FailureType
		rows = append(rows, fail)
		if f.Retry == nil {
			// The budget is spent: FLOW-001 §5 logs MAX_RETRIES_EXHAUSTED
			// and escalates (FLOW-004).
			spent := base
			spent.Tier, spent.Result, spent.FailureType = state.TierEscalation, "FAIL", validate.MaxRetriesExhausted
			spent.Message = fmt.Sprintf("%s: %s after %d attempt%s; escalated", validate.MaxRetriesExhausted, f.FailureType, f.N, Plural(f.N))
			rows = append(rows, spent)
		}
	}
	warnings(round)
	return rows
}

// orphanWarnings appends the warnings (in range) of rounds with no
// attempt facts (a legacy round).
func orphanWarnings(st *state.State, rows []state.ValidationEntry, in func(round int) bool) []state.ValidationEntry {
	return orphans(st, rows, in, factsInOrder(st))
}

// orphans is orphanWarnings, told whether the attempt log is in round
// order: such a log is searched rather than indexed in a map (this runs
// at every durable point, and the map grew with the session).
func orphans(st *state.State, rows []state.ValidationEntry, in func(round int) bool, inOrder bool) []state.ValidationEntry {
	var withFacts func(round int) bool
	if inOrder {
		withFacts = func(round int) bool {
			_, found := slices.BinarySearchFunc(st.AttemptLog, round, factRound)
			return found
		}
	} else {
		rounds := map[int]bool{}
		for _, f := range st.AttemptLog {
			rounds[f.Round] = true
		}
		withFacts = func(round int) bool { return rounds[round] }
	}
	for _, w := range st.Warnings {
		if in(w.Round) && !withFacts(w.Round) {
			rows = append(rows, warningRow(w))
		}
	}
	return rows
}

// row is the warning's validation log row.
func warningRow(w state.WarningFact) state.ValidationEntry {
	return state.ValidationEntry{Round: w.Round, At: w.At, Role: w.Role, Attempt: w.Attempt, Tier: "Warning", Result: resultWarn, Message: w.Message}
}

// ValidationCache holds the validation records of a state's ended rounds,
// which no longer change (see historyCache), so that publishing a long
// session's Status does not rebuild them at every durable point.
type ValidationCache struct {
	// Check makes each call check the cached records against records
	// built whole (Options.SelfCheck).
	Check bool
	st    *state.State
	round int // the records are those of the rounds before round
	facts int // taken from AttemptLog[:facts], which is in round order
	recs  []ValidationRecord
}

// Records returns Status.Validation for st, reusing the records of ended
// rounds. Test binaries check it against the records built whole.
//
// The records returned share memory with the cache until the next call:
// the records of the round in flight are written after the cached ones,
// in the cache's spare capacity (copying every ended round's records at
// each durable point grew with the session). The caller copies them
// (Session.publish clones the Status).
func (c *ValidationCache) Records(st *state.State) []ValidationRecord {
	whole := func() []ValidationRecord { return ValidationRecords(ValidationRows(st, 0, 0)) }
	if len(st.LegacyValidation) > 0 {
		return whole() // an old session's: no blocks to reuse
	}
	if c.st != st || c.facts > len(st.AttemptLog) || c.round > st.Round {
		*c = ValidationCache{st: st}
	}
	// The facts before c.facts were in round order when cached and have
	// not changed since: only the rest needs checking.
	if !slices.IsSortedFunc(st.AttemptLog[max(c.facts-1, 0):], func(a, b state.AttemptFact) int { return cmp.Compare(a.Round, b.Round) }) {
		return whole() // an unordered log: no blocks to reuse
	}
	all := func(int) bool { return true }
	if st.Round > c.round {
		n := c.facts
		for n < len(st.AttemptLog) && st.AttemptLog[n].Round < st.Round {
			n++
		}
		before := func(r int) bool { return r >= c.round && r < st.Round }
		c.recs = append(c.recs, ValidationRecords(factRows(st, nil, st.AttemptLog[c.facts:n], before))...)
		c.facts, c.round = n, st.Round
	}
	from := c.round
	out := append(c.recs, ValidationRecords(factRows(st, nil, st.AttemptLog[c.facts:], func(r int) bool { return r >= from }))...)
	out = append(out, ValidationRecords(orphans(st, nil, all, true))...)
	c.recs = out[:len(c.recs)] // the same records, in out's array when it grew
	if c.Check {
		if want := whole(); !slices.Equal(out, want) {
			panic(fmt.Sprintf("validation records: the cached records of ended rounds differ from the records built whole:\ncached %v\nwhole  %v", out, want))
		}
	}
	return out
}

// RetryRows returns the retry details: legacy ones, then one per failure
// of round from or later that led to a retry, its outcome read from the
// attempt that followed.
func RetryRows(st *state.State, from int) []state.RetryDetail {
	rows := slices.Clone(st.LegacyRetries)
	facts := factsIn(st, from, 0, func(round int) bool { return round >= from })
	for i, f := range facts {
		if f.Retry == nil {
			continue
		}
		outcome := "pending"
		for _, next := range facts[i+1:] {
			if next.Round == f.Round && next.Role == f.Role && next.Part == f.Part && next.N == f.N+1 {
				outcome = "Failed again (" + string(next.FailureType) + ")"
				if next.Success {
					outcome = "Success on retry"
				}
				break
			}
		}
		rows = append(rows, state.RetryDetail{Round: f.Round, Role: f.Role, Part: f.Part, Retry: f.N, At: f.At, FailureType: f.FailureType,
			Modification: f.Retry.Modification, Example: f.Retry.Example, Outcome: outcome})
	}
	return rows
}

// ErrorRows returns the rows of status.md's error tables: those the
// attempt facts give (a failure and what followed it, a success on retry)
// and the logged events (transport retries, disagreement logs, execution
// errors), in time order.
func ErrorRows(st *state.State) []state.ErrorEntry {
	var rows []state.ErrorEntry
	for _, f := range st.AttemptLog {
		switch {
		case f.Success && f.N > 1:
			rows = append(rows, state.ErrorEntry{Round: f.Round, At: f.At, Role: f.Role.Title(), Event: "Retry success", Details: fmt.Sprintf("Valid output on attempt %d", f.N)})
		case !f.Success:
			details := "Retries exhausted: escalating"
			if f.Retry != nil {
				details = fmt.Sprintf("Retry %d initiated", f.N)
			}
			rows = append(rows, state.ErrorEntry{Round: f.Round, At: f.At, Role: f.Role.Title(), Event: string(f.FailureType), Details: details})
		}
	}
	for _, e := range st.Logged {
		rows = append(rows, loggedRow(e))
	}
	rows = append(rows, st.LegacyErrors...)
	slices.SortStableFunc(rows, func(a, b state.ErrorEntry) int { return a.At.Compare(b.At) })
	return rows
}
