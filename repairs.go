package refine

import (
	"slices"

	"github.com/refine-spec/refine/internal/core"
)

// Repair is [store.Repair]: a value the session's Store found damaged
// when it opened, and wrote again from its own log. Status.Repairs lists
// them; `refine status` shows them.
type Repair = core.Repair

// Repairer is [store.Repairer]: a Store that reports the repairs it made
// when it opened until the session records them.
type Repairer = core.Repairer

// noteRepairs takes the repairs the session's Store reports (Repairer)
// into the state, for the next durable point to record, and remembers
// them for recordedRepairs to acknowledge once that point is committed.
// A Store whose repairs cannot be read is logged, not fatal: they stay
// reported for the next open.
func (s *Session) noteRepairs() {
	r, ok := s.config.Store.(Repairer)
	if !ok {
		return
	}
	rs, err := r.Repairs()
	if err != nil {
		s.Log.Warn("could not read the repairs the store made", "err", err)
		return
	}
	if s.St.NoteRepairs(rs) {
		s.Dirty = true
	}
	s.unrecorded = s.unrecorded[:0]
	for _, rep := range rs {
		s.unrecorded = append(s.unrecorded, rep.ID)
	}
}

// recordedRepairs tells the Store that a commit made the state hold the
// repairs noteRepairs took in.
func (s *Session) recordedRepairs() {
	if len(s.unrecorded) == 0 {
		return
	}
	if r, ok := s.config.Store.(Repairer); ok {
		if err := r.RepairsRecorded(s.unrecorded); err != nil {
			s.Log.Warn("could not tell the store its repairs are recorded; they are reported again at the next open", "err", err)
			return
		}
	}
	s.unrecorded = nil
}

// withStoreRepairs adds to status the repairs st reports that the state
// does not record yet (made by a process that recorded nothing, as
// `refine status` opening a folder does).
func withStoreRepairs(status Status, st Store) Status {
	r, ok := st.(Repairer)
	if !ok {
		return status
	}
	rs, err := r.Repairs()
	if err != nil {
		return status
	}
	for _, rep := range rs {
		if !slices.ContainsFunc(status.Repairs, func(h Repair) bool { return h.ID == rep.ID }) {
			status.Repairs = append(status.Repairs, rep)
		}
	}
	return status
}
