package core

import (
	"errors"
	"fmt"

	"github.com/refine-spec/refine/conflict"
	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/store"
)

// disagreement detects explicit and implicit disagreement with the previous
// review, checks the DISAGREE rate, and asks the user to resolve each
// conflict; unresolved HIGH/CRITICAL conflicts keep their gaps BLOCKED.
// Each step is decided in disagree_decide.go; here it is asked and staged.
func (s *Engine) disagreement() (stop, error) {
	cur := s.st.Current
	ds := &cur.Disagree
	if ds.Done || cur.Engineer.Status != state.RoleAccepted {
		return goOn, nil
	}
	if !ds.Detected {
		if err := s.detectDisagreement(); err != nil {
			return goOn, err
		}
	}
	// Ignored feedback first: the answers may add conflicts.
	if st, err := s.askFindings(); err != nil || st != goOn {
		return st, err
	}
	// A session paused by refine 0.1 computed its alerts before the implicit
	// findings and has no RateChecked: its alerts stand.
	if !ds.RateChecked && len(ds.Alerts) == 0 {
		checkRate(s.st, cur, s.st.Round, conflictLimits(&s.cfg))
		s.stage()
	}
	if st, err := s.askAlerts(); err != nil || st != goOn {
		return st, err
	}
	paused, err := s.resolveConflicts(cur.N)
	if err != nil || paused {
		return waitIf(paused), err
	}
	ds.Done = true
	return goOn, nil
}

// detectDisagreement reads the round's Engineer output and the one the
// review being answered (the last completed round's) saw, and files what
// detectDisagreement decides.
func (s *Engine) detectDisagreement() error {
	cur := s.st.Current
	prev := s.st.Round
	out, err := s.get(state.OutputKey(cur.N, llm.Engineer))
	if err != nil {
		return fmt.Errorf("round %d disagreement: read engineer.md: %w", cur.N, err)
	}
	var previous string
	if b, err := s.get(state.OutputKey(prev, llm.Engineer)); err == nil {
		previous = string(b)
	} else if !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("round %d disagreement: read %s: %w", cur.N, state.OutputKey(prev, llm.Engineer), err)
	}
	ApplyDetection(s.st, cur, DetectDisagreement(s.st, cur, prev, string(out), previous, s.at))
	s.stage()
	return nil
}

// askFindings asks about each implicit-disagreement finding not answered
// yet and applies the answers.
func (s *Engine) askFindings() (stop, error) {
	cur := s.st.Current
	ds := &cur.Disagree
	for ds.NextFinding < len(ds.Findings) {
		f := ds.Findings[ds.NextFinding]
		q := conflict.ImplicitQuestion(f)
		q.Round = cur.N
		a, paused, err := s.ask(q)
		if err != nil || paused {
			return waitIf(paused), err
		}
		o, err := conflict.ResolveImplicit(f, a.Key, a.Text, NextDecisionID(s.st, cur.N), s.at(), s.st.Ignore)
		if err != nil {
			return goOn, fmt.Errorf("round %d: %s: %w", cur.N, q.ID, err)
		}
		if err := applyImplicit(s.st, cur.N, f, o, s.at); err != nil {
			return goOn, err
		}
		ds.NextFinding++
		s.stage()
	}
	return goOn, nil
}

// askAlerts asks each DISAGREE rate alert not answered yet and applies the
// answers; a "request revision" sends the round back to the Engineer.
func (s *Engine) askAlerts() (stop, error) {
	cur := s.st.Current
	ds := &cur.Disagree
	for ds.NextAlert < len(ds.Alerts) {
		alert := ds.Alerts[ds.NextAlert]
		q := conflict.RateQuestion(alert)
		q.Round = cur.N
		a, paused, err := s.ask(q)
		if err != nil || paused {
			return waitIf(paused), err
		}
		opt, _ := q.Option(a.Key)
		ds.NextAlert++
		recordDecision(s.st, s.at(), cur.N, "", q, a, opt.Label)
		aa := DecideAlert(alert, opt.Effect, a.Text)
		if aa.Redo != "" {
			// The round goes back to the Engineer: disagreement returns
			// backToEngineer and playRound sets the phase; both ride on
			// the next commit (the Engineer's prompt), or on neither after
			// a crash, when the answer that asked for this is applied
			// again.
			if err := RedoEngineer(s.st, aa.Redo, s.cfg.MaxRetries, s.at); err != nil {
				return backToEngineer, err
			}
			s.stage()
			return backToEngineer, nil
		}
		if err := applyAlert(s.st, cur.N, aa); err != nil {
			return goOn, err
		}
		s.stage()
	}
	return goOn, nil
}

// resolveConflicts asks the user to decide every unresolved conflict, most
// severe first (FLOW-006 §4), and applies each decision to its gap. The
// gaps of unresolved HIGH/CRITICAL conflicts are BLOCKED meanwhile.
func (s *Engine) resolveConflicts(round int) (bool, error) {
	if err := blockConflictGaps(s.st, s.at); err != nil {
		return false, err
	}
	for {
		pending := conflict.Pending(s.st.Conflicts)
		if len(pending) == 0 {
			return false, nil
		}
		c := pending[0]
		q := conflict.ConflictQuestion(c)
		q.Round = round // a conflict of an earlier round may be decided now
		a, paused, err := s.ask(q)
		if err != nil || paused {
			return paused, err
		}
		d, resolved, err := conflict.Decide(c, conflict.Resolution{Option: a.Key, Text: a.Text}, NextDecisionID(s.st, round), s.at())
		if err != nil {
			return false, fmt.Errorf("round %d: decide %s: %w", round, c.IssueID, err)
		}
		if err := applyConflictDecision(s.st, round, c, resolved, d, s.at); err != nil {
			return false, err
		}
		s.stage()
	}
}
