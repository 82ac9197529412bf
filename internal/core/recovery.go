package core

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/refine-spec/refine/conflict"
	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/internal/rollbacktext"
	"github.com/refine-spec/refine/question"

	"github.com/refine-spec/refine/rollback"
)

// recoverDecisions asks, before the first round after a rollback, what to
// do with the decisions the undone rounds had recorded (FLOW-007 Example 5):
// re-apply, modify then re-apply, or leave them archived. "Modify" changes
// one decision, named in the MODIFY DECISION question, and asks again for
// the others.
func (s *Engine) recoverDecisions() (bool, error) {
	for len(s.st.Recover) > 0 {
		// Listed in the order they were made, whatever their kind.
		slices.SortStableFunc(s.st.Recover, func(a, b rollback.RoundDecision) int { return CompareDecisionIDs(a.ID, b.ID) })
		dlg := s.st.RecoverDialog
		if dlg == nil {
			dlg = &state.RecoverDialog{}
		}
		from := s.st.Recover[0].Round()
		var q question.Question
		if dlg.Modify {
			q = rollbacktext.ModifyQuestion(from, s.st.Recover, dlg.Text)
		} else {
			q = rollbacktext.RecoveryQuestion(from, s.st.Recover)
			if len(dlg.Modified) > 0 {
				q.Body = fmt.Sprintf("Re-applied as modified: %s.\n\n", strings.Join(dlg.Modified, ", ")) + q.Body
			}
		}
		if dlg.Asked > 0 {
			q.ID += fmt.Sprintf("-%d", dlg.Asked+1)
		}
		q.Round = s.st.Round + 1
		a, paused, err := s.ask(q)
		if err != nil || paused {
			return paused, err
		}
		opt, _ := q.Option(a.Key)
		decision := opt.Label
		dlg.Asked++
		s.st.RecoverDialog = dlg
		text := strings.TrimSpace(a.Text)
		switch {
		case dlg.Modify:
			dlg.Modify = false
			if d, ok := rollbacktext.ModifyTarget(s.st.Recover, opt); ok {
				decision = modifyDecision(s.st, d, cmp.Or(text, dlg.Text), s.at)
			}
		default:
			rec, err := rollbacktext.ResolveRecovery(s.st.Recover, opt)
			if err != nil {
				return false, fmt.Errorf("decision recovery: %w", err)
			}
			switch {
			case rec.Modify && len(s.st.Recover) == 1 && text != "":
				// One decision, and the answer says what it becomes.
				decision = modifyDecision(s.st, s.st.Recover[0], text, s.at)
			case rec.Modify:
				dlg.Modify, dlg.Text = true, text
			default:
				for i := range rec.Reapply {
					rec.Reapply[i] = rollbacktext.Reapply(rec.Reapply[i], rec.Reapply[i].Round())
				}
				reapplyDecisions(s.st, rec.Reapply, s.at)
				s.st.Recover = nil
			}
		}
		recordProcedural(s.st, s.at(), s.st.Round, "", q, a, decision)
		s.stage()
	}
	s.st.Recover, s.st.RecoverConflicts, s.st.RecoverDialog = nil, nil, nil
	return false, nil
}

// modifyDecision re-applies d, one of st.Recover, changed by the user's
// text, and takes it out of those left to recover; it returns the
// decision to record.
func modifyDecision(st *state.State, d rollback.RoundDecision, text string, now func() time.Time) string {
	reapplyDecisions(st, []rollback.RoundDecision{rollbacktext.Modified(d, d.Round(), text)}, now)
	st.Recover = slices.DeleteFunc(st.Recover, func(r rollback.RoundDecision) bool { return r.ID == d.ID })
	if st.RecoverDialog != nil {
		st.RecoverDialog.Modified = append(st.RecoverDialog.Modified, d.ID)
	}
	return d.ID + " modified and re-applied"
}

// reapplyDecisions files the recovered decisions (each with its note)
// under st's last round; now dates each decision record.
func reapplyDecisions(st *state.State, reapply []rollback.RoundDecision, now func() time.Time) {
	for _, d := range reapply {
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
		st.Decisions = append(st.Decisions, state.DecisionRecord{
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
