package convergence

import "github.com/refine-spec/refine/gap"

// Row is one round of the convergence table (docs/workflow.md#convergence).
// Its JSON form is a
// row of `refine status --json`'s "convergence" array.
//
// Counts compare the ledger at the end of the previous round ("before") with
// the ledger at the end of this round ("after"); see Measure for the exact
// definitions. Weighted fields use the gap's severity weight in "after".
type Row struct {
	Round int `json:"round"`
	// GapsStart and GapsEnd count gaps in an open state (OPEN, IN_PROGRESS,
	// PROPOSED, NEEDS_REVISION, BLOCKED) before and after the round.
	GapsStart int `json:"gaps_start"`
	// Resolved counts gaps that became ACCEPTED this round.
	Resolved int `json:"resolved"`
	// Deferred counts gaps that became DEFERRED: a scope change, so it is not
	// part of Net.
	Deferred int `json:"deferred"`
	// New counts gaps added this round, split sub-gaps excepted.
	New int `json:"new"`
	// Reopened counts gaps that left ACCEPTED or DEFERRED this round.
	Reopened int `json:"reopened"`
	GapsEnd  int `json:"gaps_end"`
	// Net is Resolved − New − Reopened.
	Net int `json:"net"`
	// WeightedNet is Σw(resolved) − Σw(new) − Σw(reopened); it drives the
	// tracker, so closing three LOW gaps while opening one CRITICAL is no
	// progress.
	WeightedNet int `json:"weighted_net"`
	// WeightedOpen is Σw over the gaps open at the end of the round: the
	// open load the chart plots next to GapsEnd.
	WeightedOpen int `json:"weighted_open"`
	// State is filled in by Tracker.Record; Measure leaves it empty.
	State State `json:"state"`
}

// Measure computes round's row from the ledger at the end of the previous
// round (before) and at the end of this round (after). A nil ledger is empty.
// A zero Weights means gap.DefaultWeights.
//
// Pass the previous round's "after" as "before", not a snapshot taken when
// the next round starts: then changes the user makes between rounds (narrow
// scope, accept complexity, conflict decisions) are counted in the next row
// and GapsStart always equals the previous GapsEnd.
//
// Definitions, per gap g of after, with b its state in before:
//   - New: g is not in before. Exception: a split sub-gap (g.Parent set and
//     the parent SUPERSEDED in after but not in before) is neither new nor
//     resolved, and the SUPERSEDED parent is not resolved either: a split
//     reshapes the work without progress or regress.
//     A gap added and closed in the same round counts as New and as Resolved
//     (Net 0: found and fixed) or Deferred (Net −1: scope grew, then was set
//     aside), so the count identity below holds.
//   - Reopened: b is closed and g.State differs (only ACCEPTED and DEFERRED
//     can be left; SUPERSEDED is final).
//   - Resolved: g is ACCEPTED and b was not (including reopened-and-accepted
//     within the round, which nets to zero).
//   - Deferred: g is DEFERRED and b was not.
//
// Without splits, GapsEnd = GapsStart + New + Reopened − Resolved − Deferred.
// Severity changes alone move WeightedOpen, never WeightedNet. Gaps present
// in before but missing from after (ledgers never drop gaps) are ignored
// except in GapsStart.
func Measure(round int, before, after *gap.Ledger, w gap.Weights) Row {
	if w == (gap.Weights{}) {
		w = gap.DefaultWeights()
	}
	row := Row{Round: round}

	previous := make(map[gap.ID]gap.State, len(gapsOf(before)))
	for _, g := range gapsOf(before) {
		previous[g.ID] = g.State
		if g.State.IsOpen() {
			row.GapsStart++
		}
	}
	// Parents split this round: their children are a restatement of the
	// parent, not new scope.
	splitThisRound := map[gap.ID]bool{}
	for _, g := range gapsOf(after) {
		if g.State == gap.Superseded && previous[g.ID] != gap.Superseded {
			splitThisRound[g.ID] = true
		}
	}

	var resolvedW, newW, reopenedW int
	for _, g := range gapsOf(after) {
		weight := w.Of(g.Severity)
		if g.State.IsOpen() {
			row.GapsEnd++
			row.WeightedOpen += weight
		}
		was, existed := previous[g.ID]
		switch {
		case !existed && g.Parent != "" && splitThisRound[g.Parent]:
			continue
		case !existed:
			row.New++
			newW += weight
		case was == g.State:
			continue
		case was.IsClosed():
			row.Reopened++
			reopenedW += weight
		}
		switch g.State {
		case gap.Accepted:
			row.Resolved++
			resolvedW += weight
		case gap.Deferred:
			row.Deferred++
		}
	}
	row.Net = row.Resolved - row.New - row.Reopened
	row.WeightedNet = resolvedW - newW - reopenedW
	return row
}

func gapsOf(l *gap.Ledger) []gap.Gap {
	if l == nil {
		return nil
	}
	return l.Gaps
}
