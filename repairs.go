package refine

import (
	"slices"

	"github.com/refine-spec/refine/store"
)

// Repair is [store.Repair]: a value the session's Store found damaged
// when it opened, and wrote again from its own log. Status.Repairs lists
// them; `refine status` shows them.
type Repair = store.Repair

// storeRepairs are the repairs the session's Store reports (a
// store.Repairer), for the decisions to record at their next durable
// point; recordedRepairs acknowledges them once that point is committed.
// A Store whose repairs cannot be read is logged, not fatal: they stay
// reported for the next open.
func (s *Session) storeRepairs() []Repair {
	r, ok := s.config.Store.(store.Repairer)
	if !ok {
		return nil
	}
	rs, err := r.Repairs()
	if err != nil {
		s.config.Logger.Warn("could not read the repairs the store made", "err", err)
		return nil
	}
	s.unrecorded = s.unrecorded[:0]
	for _, rep := range rs {
		s.unrecorded = append(s.unrecorded, rep.ID)
	}
	return rs
}

// recordedRepairs tells the Store that a commit made the state hold the
// repairs noteRepairs took in.
func (s *Session) recordedRepairs() {
	if len(s.unrecorded) == 0 {
		return
	}
	if r, ok := s.config.Store.(store.Repairer); ok {
		if err := r.RepairsRecorded(s.unrecorded); err != nil {
			s.config.Logger.Warn("could not tell the store its repairs are recorded; they are reported again at the next open", "err", err)
			return
		}
	}
	s.unrecorded = nil
}

// withStoreRepairs adds to status the repairs st reports that the state
// does not record yet (made by a process that recorded nothing, as
// `refine status` opening a folder does).
func withStoreRepairs(status Status, st Store) Status {
	r, ok := st.(store.Repairer)
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
