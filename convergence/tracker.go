package convergence

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/refine-spec/refine/gap"
)

// Settings are the tracker's thresholds; each has the spec's default and is
// a session setting (docs/workflow.md#settings).
type Settings struct {
	// StallRounds is how many consecutive rounds without weighted progress
	// raise DIVERGENCE_WARNING, and how long "accept complexity" keeps the
	// warning quiet. Default 2.
	StallRounds int `json:"stall_rounds"`
	// DivergenceNet is the single-round threshold: a round whose Net is
	// below it raises DIVERGENCE_WARNING at once. Default -2 (Net < -2).
	DivergenceNet int `json:"divergence_net"`
	// Weights are the severity weights Tracker.Observe measures with.
	Weights gap.Weights `json:"weights"`
}

// DefaultSettings returns the spec's thresholds and the default weights.
func DefaultSettings() Settings {
	return Settings{StallRounds: 2, DivergenceNet: -2, Weights: gap.DefaultWeights()}
}

// Validate checks that StallRounds is at least 1, DivergenceNet is not
// positive (a positive threshold would warn on rounds that made progress),
// and the weights are valid.
func (s Settings) Validate() error {
	if s.StallRounds < 1 {
		return fmt.Errorf("convergence: StallRounds is %d: want at least 1", s.StallRounds)
	}
	if s.DivergenceNet > 0 {
		return fmt.Errorf("convergence: DivergenceNet is %d: want 0 or less (a round warns when Net < DivergenceNet)", s.DivergenceNet)
	}
	if err := s.Weights.Validate(); err != nil {
		return fmt.Errorf("convergence: %w", err)
	}
	return nil
}

// EventKind names a user response the tracker remembers.
type EventKind string

// The user responses that change the stall count.
const (
	// AcceptedComplexity: the stall count restarts and no warning is raised
	// for the next StallRounds rounds.
	AcceptedComplexity EventKind = "accept_complexity"
	// StallReset: the stall count restarts (the user changed course, e.g.
	// narrowed scope or gave input), warnings stay armed.
	StallReset EventKind = "reset_stall"
)

// Event is a user response recorded after round Round.
type Event struct {
	Round int       `json:"round"`
	Kind  EventKind `json:"kind"`
}

// Tracker is the GAP-FLOW-002 state machine over the rows of a session.
//
// A round is CONVERGING when its WeightedNet > 0; otherwise it is the k-th
// consecutive round without progress, STALLED(k). It is DIVERGENCE_WARNING
// instead when k reaches StallRounds or its Net < DivergenceNet, unless the
// round lies in an accept-complexity window. While k stays at or above
// StallRounds every further flat round warns again.
//
// The zero value is ready to use with DefaultSettings. A Tracker encodes to
// and decodes from JSON with everything it needs, so restoring a state
// snapshot restores it exactly. It is not safe for concurrent mutation.
type Tracker struct {
	settings     Settings // zero: DefaultSettings
	rows         []Row
	events       []Event
	stall        int // consecutive rounds without weighted progress
	quietThrough int // last round of the accept-complexity window; 0 none
}

// NewTracker returns an empty tracker with validated settings.
func NewTracker(s Settings) (*Tracker, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &Tracker{settings: s}, nil
}

// Settings returns the thresholds in effect.
func (t *Tracker) Settings() Settings {
	if t.settings == (Settings{}) {
		return DefaultSettings()
	}
	return t.settings
}

// Observe measures round with the tracker's weights and records the row.
func (t *Tracker) Observe(round int, before, after *gap.Ledger) Row {
	return t.Record(Measure(round, before, after, t.Settings().Weights))
}

// Record appends row with its State filled in and returns it. Net and
// WeightedNet are taken as given. A Round ≤ 0 is numbered after the last
// recorded round; a Round at or before the last recorded one first rewinds
// the tracker to before that round (see Rewind), so re-running a round
// replaces its row.
func (t *Tracker) Record(row Row) Row {
	last := t.lastRound()
	switch {
	case row.Round <= 0:
		row.Round = last + 1
	case row.Round <= last:
		t.Rewind(row.Round)
	}
	row = t.next(row)
	t.rows = append(t.rows, row)
	return row
}

// next computes row's state and advances the stall count.
func (t *Tracker) next(row Row) Row {
	s := t.Settings()
	quiet := row.Round <= t.quietThrough
	if row.WeightedNet > 0 {
		t.stall = 0
		row.State = Converging
	} else {
		t.stall++
		row.State = Stalled(t.stall)
		if t.stall >= s.StallRounds && !quiet {
			row.State = DivergenceWarning
		}
	}
	if row.Net < s.DivergenceNet && !quiet {
		row.State = DivergenceWarning
	}
	return row
}

// Amend replaces the counts of the last recorded row, which must be row's
// round, keeping its state: for scope changes made after the round was
// measured (a narrow-scope answer to its own divergence warning defers
// gaps). A deferral moves no Net, so the state stands. It reports whether
// a row was amended.
func (t *Tracker) Amend(row Row) bool {
	n := len(t.rows)
	if n == 0 || t.rows[n-1].Round != row.Round {
		return false
	}
	row.State, row.Net, row.WeightedNet = t.rows[n-1].State, t.rows[n-1].Net, t.rows[n-1].WeightedNet
	t.rows[n-1] = row
	return true
}

// AcceptComplexity records the user's "accept complexity" answer to the
// last recorded round's warning: the stall count restarts and the next
// StallRounds rounds raise no DIVERGENCE_WARNING, neither from stalling nor
// from a single round's Net. An answer always follows the newest row, so it
// takes no round argument; that keeps Rewind's replay identical to what
// happened live.
func (t *Tracker) AcceptComplexity() {
	t.apply(Event{Round: t.lastRound(), Kind: AcceptedComplexity})
}

// ResetStall restarts the stall count after the last recorded round without
// a quiet window: for answers that change course (narrow scope, pause for
// input), so the next flat round is STALLED(1) rather than an immediate
// repeat of the warning.
func (t *Tracker) ResetStall() {
	t.apply(Event{Round: t.lastRound(), Kind: StallReset})
}

func (t *Tracker) apply(e Event) {
	t.events = append(t.events, e)
	t.stall = 0
	if e.Kind == AcceptedComplexity {
		t.quietThrough = max(t.quietThrough, e.Round+t.Settings().StallRounds)
	}
}

// Rewind forgets round and every later round, with the answers given after
// them, and recomputes the rest as if they had never happened. Restoring a
// snapshot taken before round gives the same tracker; Rewind is for when no
// snapshot is at hand (GAP-FLOW-007: convergence recalculated post-rollback).
func (t *Tracker) Rewind(round int) {
	rows, events := t.rows, t.events
	t.rows, t.events, t.stall, t.quietThrough = nil, nil, 0, 0
	next := 0
	for _, r := range rows {
		if r.Round >= round {
			break
		}
		for next < len(events) && events[next].Round < r.Round {
			t.apply(events[next])
			next++
		}
		r.State = ""
		t.rows = append(t.rows, t.next(r))
	}
	for ; next < len(events) && events[next].Round < round; next++ {
		t.apply(events[next])
	}
}

// Current returns the state of the last recorded round, CONVERGING before
// the first round (the spec's state machine starts there).
func (t *Tracker) Current() State {
	if len(t.rows) == 0 {
		return Converging
	}
	return t.rows[len(t.rows)-1].State
}

// Rows returns a copy of the recorded rows, oldest first.
func (t *Tracker) Rows() []Row { return append([]Row(nil), t.rows...) }

// RowsFrom returns a copy of the recorded rows of round and later, oldest
// first: a status page shows its recent rounds, and copying every row of
// a long session to drop most of them grew with the session.
func (t *Tracker) RowsFrom(round int) []Row {
	i, _ := slices.BinarySearchFunc(t.rows, round, func(r Row, round int) int { return cmp.Compare(r.Round, round) })
	return append([]Row(nil), t.rows[i:]...)
}

// Len returns the number of recorded rows.
func (t *Tracker) Len() int { return len(t.rows) }

// Events returns a copy of the recorded user responses, oldest first.
func (t *Tracker) Events() []Event { return append([]Event(nil), t.events...) }

// StallCount returns the current number of consecutive rounds without
// weighted progress.
func (t *Tracker) StallCount() int { return t.stall }

// QuietThrough returns the last round of the accept-complexity window, or 0
// when complexity was never accepted.
func (t *Tracker) QuietThrough() int { return t.quietThrough }

func (t *Tracker) lastRound() int {
	if len(t.rows) == 0 {
		return 0
	}
	return t.rows[len(t.rows)-1].Round
}

// trackerJSON is the Tracker's wire form inside state.json.
type trackerJSON struct {
	Settings     Settings `json:"settings"`
	Rows         []Row    `json:"rows"`
	Events       []Event  `json:"events"`
	Stall        int      `json:"stall"`
	QuietThrough int      `json:"quiet_through"`
}

// MarshalJSON encodes the whole tracker. It has a value receiver so a
// Tracker held by value inside another struct still encodes fully.
func (t Tracker) MarshalJSON() ([]byte, error) {
	w := trackerJSON{
		Settings:     t.Settings(),
		Rows:         t.rows,
		Events:       t.events,
		Stall:        t.stall,
		QuietThrough: t.quietThrough,
	}
	// Always arrays, never null, so status readers need no special case.
	if w.Rows == nil {
		w.Rows = []Row{}
	}
	if w.Events == nil {
		w.Events = []Event{}
	}
	return json.Marshal(w)
}

// UnmarshalJSON decodes a tracker written by MarshalJSON, rejecting
// snapshots that could not have been produced by one (bad settings, unknown
// states, rounds out of order), so a corrupt state file fails loudly instead
// of mis-steering the session. Missing settings mean DefaultSettings.
func (t *Tracker) UnmarshalJSON(data []byte) error {
	var w trackerJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return fmt.Errorf("convergence: decode tracker: %w", err)
	}
	if w.Settings != (Settings{}) {
		if err := w.Settings.Validate(); err != nil {
			return fmt.Errorf("convergence: decode tracker: %w", err)
		}
	}
	if w.Stall < 0 || w.QuietThrough < 0 {
		return fmt.Errorf("convergence: decode tracker: negative stall count %d or quiet window %d", w.Stall, w.QuietThrough)
	}
	last := 0
	for i, r := range w.Rows {
		if r.Round <= last {
			return fmt.Errorf("convergence: decode tracker: row %d has round %d after round %d: rounds must increase", i, r.Round, last)
		}
		if !r.State.Valid() {
			return fmt.Errorf("convergence: decode tracker: round %d: invalid state %q", r.Round, r.State)
		}
		last = r.Round
	}
	lastEvent := 0
	for i, e := range w.Events {
		if e.Kind != AcceptedComplexity && e.Kind != StallReset {
			return fmt.Errorf("convergence: decode tracker: event %d has unknown kind %q", i, e.Kind)
		}
		if e.Round < lastEvent || e.Round > last {
			return fmt.Errorf("convergence: decode tracker: event %d has round %d: events must be in round order and follow a recorded round (last %d)", i, e.Round, last)
		}
		lastEvent = e.Round
	}
	*t = Tracker{settings: w.Settings, stall: w.Stall, quietThrough: w.QuietThrough}
	// Empty and missing lists decode to nil, as in a fresh tracker, so a
	// round trip is exact.
	if len(w.Rows) > 0 {
		t.rows = w.Rows
	}
	if len(w.Events) > 0 {
		t.events = w.Events
	}
	return nil
}
