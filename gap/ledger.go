package gap

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"
)

// ErrUnknownGap is returned when a Ledger operation names a gap it does not hold.
var ErrUnknownGap = errors.New("unknown gap")

// ErrDuplicateGap is returned when a gap ID is added twice.
var ErrDuplicateGap = errors.New("duplicate gap")

// Transition records one lifecycle change of a gap.
type Transition struct {
	From   State     `json:"from"`
	To     State     `json:"to"`
	Round  int       `json:"round"`
	At     time.Time `json:"at"`
	Reason string    `json:"reason"`
}

// Gap is one open question of the spec with its lifecycle.
type Gap struct {
	ID       ID       `json:"id"`
	Title    string   `json:"title"`
	Severity Severity `json:"severity"`
	State    State    `json:"state"`
	// Blocking marks a gap that other work waits on; assignment prefers it
	// after severity.
	Blocking bool `json:"blocking,omitempty"`
	// Parent is the gap this one was split from, if any.
	Parent ID `json:"parent,omitempty"`
	// Location is where the spec leaves the gap open: a heading of the
	// spec or a quotation of its text, as discovery or a gap list gives it
	// ("" when none was given).
	Location string `json:"location,omitempty"`
	// Why says what an implementer could not decide from the spec as it
	// stands ("" when none was given).
	Why string `json:"why,omitempty"`
	// Round is the round in which the gap entered the ledger (0: the initial list).
	Round   int          `json:"round"`
	History []Transition `json:"history,omitempty"`
}

// Ledger holds a session's gaps in the order they were added and enforces
// the lifecycle on every change. The zero value is an empty ledger ready to
// use. A Ledger is not safe for concurrent mutation.
type Ledger struct {
	Gaps []Gap `json:"gaps"`
}

// Add appends a gap. An unset state becomes OPEN and an unset severity
// MEDIUM: a gap listed without a severity is treated as a suboptimal design
// rather than guessed higher or lower. Add looks through the ledger for
// a duplicate: to add many gaps, use AddAll.
func (l *Ledger) Add(g Gap) error {
	if _, err := ParseID(string(g.ID)); err != nil {
		return err
	}
	if l.index(g.ID) >= 0 {
		return fmt.Errorf("%w: %s is already in the ledger", ErrDuplicateGap, g.ID)
	}
	return l.add(g)
}

// AddAll appends gaps as Add does, in time linear in the ledger and the
// gaps (a session's initial list of many thousand gaps). On error (the
// first gap Add would refuse) the ledger is left unchanged.
func (l *Ledger) AddAll(gaps []Gap) error {
	seen := make(map[ID]bool, len(l.Gaps)+len(gaps))
	for _, g := range l.Gaps {
		seen[g.ID] = true
	}
	n := len(l.Gaps)
	l.Gaps = slices.Grow(l.Gaps, len(gaps)) // one allocation, whatever the size of a Gap
	for _, g := range gaps {
		if _, err := ParseID(string(g.ID)); err != nil {
			l.Gaps = l.Gaps[:n]
			return err
		}
		if seen[g.ID] {
			l.Gaps = l.Gaps[:n]
			return fmt.Errorf("%w: %s is already in the ledger", ErrDuplicateGap, g.ID)
		}
		seen[g.ID] = true
		if err := l.add(g); err != nil {
			l.Gaps = l.Gaps[:n]
			return err
		}
	}
	return nil
}

// add appends g, known to be new, with its defaults.
func (l *Ledger) add(g Gap) error {
	if g.State == "" {
		g.State = Open
	}
	if !g.State.Valid() {
		return fmt.Errorf("gap %s: invalid state %q", g.ID, g.State)
	}
	if g.Severity == 0 {
		g.Severity = Medium
	}
	if !g.Severity.Valid() {
		return fmt.Errorf("gap %s: invalid severity %d", g.ID, int(g.Severity))
	}
	l.Gaps = append(l.Gaps, g)
	return nil
}

// Get returns a copy of the gap with the given ID.
func (l *Ledger) Get(id ID) (Gap, bool) {
	i := l.index(id)
	if i < 0 {
		return Gap{}, false
	}
	return l.Gaps[i], true
}

// Has reports whether the ledger holds id.
func (l *Ledger) Has(id ID) bool { return l.index(id) >= 0 }

// Transition moves gap id to state to, recording round, time and reason.
// A change the lifecycle forbids returns an error wrapping
// ErrInvalidTransition and leaves the gap untouched; moving a gap to the
// state it is already in is a no-op.
func (l *Ledger) Transition(id ID, to State, round int, at time.Time, reason string) error {
	i := l.index(id)
	if i < 0 {
		return fmt.Errorf("%w: %s", ErrUnknownGap, id)
	}
	g := &l.Gaps[i]
	if g.State == to {
		return nil
	}
	if err := CheckTransition(g.State, to); err != nil {
		return fmt.Errorf("gap %s: %w", id, err)
	}
	g.History = append(g.History, Transition{From: g.State, To: to, Round: round, At: at.UTC(), Reason: reason})
	g.State = to
	return nil
}

// SetSeverity changes a gap's severity (a user override, FLOW-006 Example 3).
func (l *Ledger) SetSeverity(id ID, s Severity) error {
	i := l.index(id)
	if i < 0 {
		return fmt.Errorf("%w: %s", ErrUnknownGap, id)
	}
	if !s.Valid() {
		return fmt.Errorf("gap %s: invalid severity %d", id, int(s))
	}
	l.Gaps[i].Severity = s
	return nil
}

// IDs returns every gap ID in ledger order.
func (l *Ledger) IDs() []ID {
	out := make([]ID, len(l.Gaps))
	for i, g := range l.Gaps {
		out[i] = g.ID
	}
	return out
}

// Open returns copies of the gaps in an open state, in ledger order.
func (l *Ledger) Open() []Gap { return l.filter(func(g Gap) bool { return g.State.IsOpen() }) }

// Closed returns copies of the gaps in a closed state, in ledger order.
func (l *Ledger) Closed() []Gap { return l.filter(func(g Gap) bool { return g.State.IsClosed() }) }

// InState returns copies of the gaps in state s, in ledger order.
func (l *Ledger) InState(s State) []Gap { return l.filter(func(g Gap) bool { return g.State == s }) }

// Clone returns a deep copy, so a snapshot can be kept while the original changes.
func (l *Ledger) Clone() *Ledger {
	c := &Ledger{Gaps: make([]Gap, len(l.Gaps))}
	for i, g := range l.Gaps {
		g.History = slices.Clone(g.History)
		c.Gaps[i] = g
	}
	return c
}

func (l *Ledger) filter(keep func(Gap) bool) []Gap {
	var out []Gap
	for _, g := range l.Gaps {
		if keep(g) {
			out = append(out, g)
		}
	}
	return out
}

func (l *Ledger) index(id ID) int {
	for i := range l.Gaps {
		if l.Gaps[i].ID == id {
			return i
		}
	}
	return -1
}

// AssignmentOrder sorts gaps in the order a round picks them up (the
// round's "assign" step, docs/workflow.md#one-round): NEEDS_REVISION first, then higher severity, then blocking gaps,
// then by ID.
func AssignmentOrder(gaps []Gap) {
	slices.SortStableFunc(gaps, func(a, b Gap) int {
		ar, br := a.State == NeedsRevision, b.State == NeedsRevision
		if ar != br {
			if ar {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(b.Severity, a.Severity); c != 0 {
			return c
		}
		if a.Blocking != b.Blocking {
			if a.Blocking {
				return -1
			}
			return 1
		}
		return Compare(a.ID, b.ID)
	})
}

// SimplestOrder sorts gaps for "narrow scope", the escalation option that
// keeps only the simplest assigned gap (docs/workflow.md#partial-rounds): lowest severity
// weight first, then fewest failed attempts (as given by failures), then ID.
func SimplestOrder(gaps []Gap, w Weights, failures map[ID]int) {
	slices.SortStableFunc(gaps, func(a, b Gap) int {
		if c := cmp.Compare(w.Of(a.Severity), w.Of(b.Severity)); c != 0 {
			return c
		}
		if c := cmp.Compare(failures[a.ID], failures[b.ID]); c != 0 {
			return c
		}
		return Compare(a.ID, b.ID)
	})
}
