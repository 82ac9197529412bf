package core

import (
	"fmt"
	"slices"
	"time"

	"github.com/refine-spec/refine/conflict"
	"github.com/refine-spec/refine/internal/rollbacktext"

	"github.com/refine-spec/refine/rollback"
)

// recoverDecisions asks, before the first round after a rollback, what to
// do with the decisions the undone rounds had recorded (FLOW-007 Example 5):
// re-apply, modify then re-apply, or leave them archived.
func (s *Engine) recoverDecisions() (bool, error) {
	if len(s.St.Recover) == 0 {
		return false, nil
	}
	// Listed in the order they were made, whatever their kind.
	slices.SortStableFunc(s.St.Recover, func(a, b rollback.RoundDecision) int { return CompareDecisionIDs(a.ID, b.ID) })
	from := s.St.Recover[0].Round()
	q := rollbacktext.RecoveryQuestion(from, s.St.Recover)
	q.Round = s.St.Round + 1
	a, paused, err := s.ask(q)
	if err != nil || paused {
		return paused, err
	}
	opt, _ := q.Option(a.Key)
	rec, err := rollbacktext.ResolveRecovery(s.St.Recover, opt)
	if err != nil {
		return false, fmt.Errorf("decision recovery: %w", err)
	}
	reapplyDecisions(s.St, rec, a.Text, s.at)
	s.St.Recover, s.St.RecoverConflicts = nil, nil
	s.St.recordProcedural(s.at(), s.St.Round, "", q, a, opt.Label)
	s.stage()
	return false, nil
}

// reapplyDecisions files the recovered decisions rec re-applies (all of
// st.Recover modified by note, when rec.Modify) under st's last round; now
// dates each decision record.
func reapplyDecisions(st *State, rec rollbacktext.Recovery, note string, now func() time.Time) {
	reapply := rec.Reapply
	if rec.Modify {
		// The answer's text is the modification; applied to every archived decision.
		for _, d := range st.Recover {
			reapply = append(reapply, rollbacktext.Modified(d, d.Round(), note))
		}
	}
	for _, d := range reapply {
		if !rec.Modify {
			d = rollbacktext.Reapply(d, d.Round())
		}
		if i := slices.IndexFunc(st.RecoverConflicts, func(c conflict.Ruling) bool { return c.ID == d.ID }); i >= 0 {
			// A conflict resolution comes back as one: later Engineer
			// prompts carry it and compliance checks hold to it. Like the
			// other re-applied decisions it is filed under the round it is
			// re-applied in, so the retried round's prompt carries it as a
			// resolution from the previous round.
			c := st.RecoverConflicts[i]
			c.Decision, c.Rationale = d.Choice, joinNonEmpty(d.Rationale, d.Note)
			c.Round = st.Round
			if !slices.ContainsFunc(st.ConflictDecisions, func(x conflict.Ruling) bool { return x.ID == c.ID }) {
				st.ConflictDecisions = append(st.ConflictDecisions, c)
			}
			continue
		}
		st.Decisions = append(st.Decisions, DecisionRecord{
			ID: d.ID, Round: st.Round, Issue: d.Issue, Question: d.Summary, Option: d.Option,
			Decision: d.Choice, Text: joinNonEmpty(d.Rationale, d.Note), At: now(),
		})
	}
}

func joinNonEmpty(parts ...string) string {
	out := ""
	for _, p := range parts {
		if p == "" {
			continue
		}
		if out != "" {
			out += " — "
		}
		out += p
	}
	return out
}
