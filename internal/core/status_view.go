package core

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/refine-spec/refine/internal/core/render"
	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/llm"
)

// The session as Status reports it: built from the state at a durable
// point, as a copy the host may keep.

// statusCache is what building a Status reuses from the last one: the
// validation records of ended rounds and the decoded settings, which
// change rarely (decoding them at every durable point was a twentieth
// of a short session's time).
type statusCache struct {
	validation   render.ValidationCache
	settingsRaw  []byte
	settings     Settings
	settingsRead bool
}

// settingsOf returns the settings stored in raw (validated when stored)
// over defaults, decoding them only when they changed since the last call
// (c nil: always).
func (c *statusCache) settingsOf(raw []byte, defaults Settings) Settings {
	if c != nil && c.settingsRead && bytes.Equal(raw, c.settingsRaw) {
		return c.settings
	}
	set := defaults
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &set) // validated when stored
	}
	if c != nil {
		c.settingsRaw = append(c.settingsRaw[:0], raw...)
		c.settings, c.settingsRead = set, true
	}
	return set
}

// Status is the session's Status as of its last durable point, a copy.
func (s *Engine) Status() Status {
	return statusOf(s.st, &s.status, s.cfg.Defaults).Clone()
}

// StatusOf is the Status of a session's state as stored, with defaults
// for the settings a session from before settings were stored lacks.
func StatusOf(st *state.State, defaults Settings) Status { return statusOf(st, nil, defaults) }

// cloneOrNil copies xs, or returns nil if it is empty: an empty list in
// the session's memory and a missing one in its stored state are the same
// Status.
func cloneOrNil[T any](xs []T) []T {
	if len(xs) == 0 {
		return nil
	}
	return slices.Clone(xs)
}

func statusOf(s *state.State, c *statusCache, defaults Settings) Status {
	st := Status{
		SessionID: s.SessionID,
		Round:     s.Round,
		Reason:    s.OutcomeReason,
		Usage:     s.Usage.Total,
		Calls:     s.Usage.Calls,
		Responses: map[llm.RoleName]int{},
		UpdatedAt: s.UpdatedAt,
	}
	st.Pending = cloneOrNil(s.Pending)
	for r, n := range s.Usage.Responses {
		st.Responses[llm.RoleName(r)] = n
	}
	st.Settings = c.settingsOf(s.Settings, defaults)
	st.FinalSpec, st.FinalSpecReason = FinalSpecStatus(s) // integrate.go
	st.Outcome = s.Outcome
	switch {
	case len(s.Pending) > 0 && !s.Outcome.Terminal():
		// A finished session keeps its outcome while a question waits
		// (the integration's, a rollback's dialog, the archive cleanup).
		st.Outcome = StatusPaused
	case st.Outcome == "":
		st.Outcome = StatusRunning
	}
	if s.Current != nil {
		st.Phase = s.Current.Phase
	}
	for _, g := range s.Ledger.Gaps {
		st.Gaps = append(st.Gaps, GapStatus{ID: g.ID, Title: g.Title, Severity: g.Severity, State: g.State, Location: g.Location, Why: g.Why, History: slices.Clone(g.History)})
	}
	for _, d := range s.Decisions {
		st.Decisions = append(st.Decisions, DecisionStatus{ID: d.ID, Issue: d.Issue, Option: d.Option, Decision: d.Decision})
	}
	for _, d := range s.ConflictDecisions {
		st.Decisions = append(st.Decisions, DecisionStatus{ID: d.ID, Issue: d.IssueID, Option: d.ChosenOption, Decision: d.Decision})
	}
	slices.SortStableFunc(st.Decisions, func(a, b DecisionStatus) int { return CompareDecisionIDs(a.ID, b.ID) })
	if c != nil {
		st.Validation = c.validation.Records(s)
	} else {
		st.Validation = render.ValidationRecords(render.ValidationRows(s, 0, 0))
	}
	st.Normalized = render.NormalizedCounts(s)
	st.Repairs = cloneOrNil(s.Repairs)
	st.Conflicts = cloneOrNil(s.Conflicts)
	st.Rollbacks = cloneOrNil(s.Rollbacks.Records)
	if s.Tracker != nil {
		st.Convergence = s.Tracker.Rows()
		st.ConvergenceState = string(s.Tracker.Current())
	}
	return st
}
