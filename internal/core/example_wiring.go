package core

import (
	"errors"
	"fmt"

	"github.com/refine-spec/refine/exemplar"
	"github.com/refine-spec/refine/internal/core/state"
	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/validate"
)

// canonical returns the Tier 1 examples: Config's overrides, else those
// extracted from the source spec once per process (GAP-FLOW-018: an
// extraction failure falls through to the next tier, with its reason).
func (s *Engine) canonical() (exemplar.Canonical, error) {
	s.canonOnce.Do(func() {
		src, err := s.source()
		if err != nil {
			s.canonErr = err
			return
		}
		c, err := exemplar.ExtractCanonical(src)
		if s.cfg.CanonicalEngineer != "" {
			c.Engineer = s.cfg.CanonicalEngineer
		}
		if s.cfg.CanonicalReviewer != "" {
			c.Reviewer = s.cfg.CanonicalReviewer
		}
		s.canon, s.canonErr = c, err
		if err != nil {
			s.log.Info("no canonical example in the spec; falling back to session history and templates", "reason", err)
		}
	})
	return s.canon, s.canonErr
}

// history returns the validated outputs of the completed rounds (rolled-back
// rounds are gone from the live session, so never chosen).
func (s *Engine) history(role llm.RoleName) ([]exemplar.HistoryItem, error) {
	var out []exemplar.HistoryItem
	rounds := s.st.Rounds
	if len(rounds) > historyRounds {
		rounds = rounds[len(rounds)-historyRounds:]
	}
	for _, r := range rounds {
		b, err := s.get(state.OutputKey(r.N, role))
		if errors.Is(err, store.ErrNotFound) {
			continue // the role was skipped that round
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", state.OutputKey(r.N, role), err)
		}
		out = append(out, exemplar.HistoryItem{Round: r.N, Role: role, Content: string(b), LedToAccepted: len(r.Accepted) > 0})
	}
	return out, nil
}

// historyRounds is how many recent rounds a Tier 2 example is chosen from:
// a retry reads their outputs, so the work must not grow with the session,
// and the scoring prefers recent rounds anyway.
const historyRounds = 10

// retryExampleKey names the example chosen for attempt k of role in round
// n after a failure of failureType.
func retryExampleKey(n int, role llm.RoleName, k int, failureType validate.FailureType) string {
	return fmt.Sprintf("%d/%s/%d/%s", n, role, k, failureType)
}

// retryExample returns the example for a retry prompt: the one chosen (and
// logged) when the failure was recorded, else a new selection (a process
// that resumed between the two).
func (s *Engine) retryExample(role llm.RoleName, k int, failureType validate.FailureType) (exemplar.Selection, error) {
	if sel, ok := s.chosenExamples[retryExampleKey(s.st.Current.N, role, k, failureType)]; ok {
		return sel, nil
	}
	return s.example(role, failureType, s.cfg.RetryExampleBudget)
}

// example selects the example for a prompt (GAP-FLOW-008): failureType ""
// for an initial prompt (canonical format, else template), otherwise the
// failure's mapping with Tier 1 → 2 → 3 fallthrough, truncated to budget.
func (s *Engine) example(role llm.RoleName, failureType validate.FailureType, budget int) (exemplar.Selection, error) {
	canon, canonErr := s.canonical()
	req := exemplar.Request{Role: role, FailureType: failureType, Gaps: s.st.Ledger.IDs(),
		Canonical: canon, CanonicalErr: canonErr, Budget: budget, Tokenizer: s.tok}
	if s.st.Current != nil {
		req.CurrentRound = s.st.Current.N
	}
	if failureType == "" {
		return exemplar.SelectInitial(req), nil
	}
	h, err := s.history(role)
	if err != nil {
		return exemplar.Selection{}, err
	}
	req.History = h
	return exemplar.Select(req), nil
}

func exampleLabel(sel exemplar.Selection) string {
	if sel.Text == "" {
		return "None (execution issue)"
	}
	label := fmt.Sprintf("%s (%s chars)", sel.Source, commaInt(sel.Chars))
	if sel.TruncatedFromChars > 0 {
		label += fmt.Sprintf(", truncated from %s chars", commaInt(sel.TruncatedFromChars))
	}
	return label
}

// commaInt formats 1247 as "1,247", as the spec's status.md examples do.
func commaInt(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + commaInt(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
