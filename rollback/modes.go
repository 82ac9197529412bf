package rollback

import (
	"fmt"
	"strings"
)

// Mode is the rollback behaviour mode of the spec.
type Mode string

// The three modes.
const (
	// ModeInteractive (the spec's default): every rollback asks the user for
	// adjustments; root-cause analysis from the AnalysisThreshold-th
	// rollback of a round.
	ModeInteractive Mode = "INTERACTIVE"
	// ModeAutoRetry: the first rollback of a round retries at once with
	// Mediator-selected adjustments and no question; later rollbacks of the
	// same round behave as Interactive.
	ModeAutoRetry Mode = "AUTO_RETRY"
	// ModeStrict: every rollback asks, and root-cause analysis runs from the
	// first rollback of a round (threshold 1), for sensitive specs.
	ModeStrict Mode = "STRICT"
)

// DefaultMode is the spec's default, Interactive.
const DefaultMode = ModeInteractive

// Valid reports whether m is one of the three modes.
func (m Mode) Valid() bool { return m == ModeInteractive || m == ModeAutoRetry || m == ModeStrict }

// ParseMode reads a mode name, case-insensitively; "-" and " " may stand for "_".
func ParseMode(s string) (Mode, error) {
	m := Mode(strings.NewReplacer("-", "_", " ", "_").Replace(strings.ToUpper(strings.TrimSpace(s))))
	if !m.Valid() {
		return "", fmt.Errorf("rollback: unknown mode %q: want AUTO_RETRY, INTERACTIVE or STRICT", s)
	}
	return m, nil
}

// Trigger is what started a rollback (the spec's three triggers).
type Trigger string

// The three triggers.
const (
	// TriggerUser: the user asked ("That round wasn't helpful").
	TriggerUser Trigger = "USER_REQUEST"
	// TriggerValidation: validation failed after retries (GAP-FLOW-001).
	TriggerValidation Trigger = "VALIDATION_FAILURE"
	// TriggerDivergence: the user chose "roll back" on a divergence warning.
	TriggerDivergence Trigger = "DIVERGENCE"
)

// Defaults of the spec's session configuration table.
const (
	// DefaultLimit is max_rollbacks_session.
	DefaultLimit = 7
	// DefaultAnalysisThreshold is rollback_analysis_threshold: root-cause
	// analysis from the 2nd rollback of the same round.
	DefaultAnalysisThreshold = 2
)

// Policy is the rollback configuration of a session.
type Policy struct {
	Mode Mode
	// analysisThreshold is the rollback number of a round from which
	// root-cause analysis runs; <= 0 means DefaultAnalysisThreshold. Strict
	// always uses 1.
	analysisThreshold int
	// maxRollbacks is the session rollback limit; <= 0 means DefaultLimit.
	maxRollbacks int
}

// DefaultPolicy returns the spec's defaults: INTERACTIVE, threshold 2, limit 7.
func DefaultPolicy() Policy {
	return Policy{Mode: DefaultMode, analysisThreshold: DefaultAnalysisThreshold, maxRollbacks: DefaultLimit}
}

func (p Policy) threshold() int {
	if p.Mode == ModeStrict {
		return 1
	}
	if p.analysisThreshold <= 0 {
		return DefaultAnalysisThreshold
	}
	return p.analysisThreshold
}

func (p Policy) limit() int {
	if p.maxRollbacks <= 0 {
		return DefaultLimit
	}
	return p.maxRollbacks
}

// Step says how the next rollback of a round proceeds under a Policy.
type Step struct {
	// Attempt is the 1-based number of this rollback of the round.
	Attempt int
	// Mode is the effective mode to record in history: AUTO_RETRY for an
	// automatic retry, otherwise INTERACTIVE (or STRICT).
	Mode Mode
	// LimitReached: the session has no rollback left; ask the user what
	// to do instead of rolling back (PlanRollback would return ErrLimit).
	LimitReached bool
	// AutoRetry: roll back without asking, apply AutoAdjustments, record
	// the automatic retry in status.md, and retry the round at once.
	AutoRetry bool
	// Analyze: run root-cause analysis (Diagnose) and ask the user about
	// its result before anything else.
	Analyze bool
	// Ask: ask the user. Without Analyze, the question offers the standard
	// retry options (same prompt, narrowed scope, added context, several
	// rounds back, skip).
	Ask bool
}

// Next decides how the rollback of `round` proceeds, given the session's
// history. autoRetryOff is the user's "Don't auto-retry, ask me" override
// for this round; multiRound marks a rollback of more than one round, which
// is always the user's choice and never automatic.
//
// The spec's flow: limit check first; then AUTO_RETRY on a round's first
// rollback retries without a question; otherwise the user is asked, with
// root-cause analysis from the threshold-th rollback of the round (the 1st
// in STRICT). In every mode the "Rollback Analysis" report is produced after
// the rollback and archived as analysis.md.
func (p Policy) Next(round int, h History, autoRetryOff, multiRound bool) Step {
	s := Step{Attempt: h.Attempts(round) + 1, Mode: p.Mode}
	if !s.Mode.Valid() {
		s.Mode = DefaultMode
	}
	if h.Used() >= p.limit() {
		s.LimitReached = true
		return s
	}
	t := p.threshold()
	if s.Mode == ModeAutoRetry {
		// Only a round's first rollback is automatic; a threshold of 1
		// asks for analysis at once, which needs the user.
		if s.Attempt == 1 && t > 1 && !autoRetryOff && !multiRound {
			s.AutoRetry = true
			return s
		}
		s.Mode = ModeInteractive
	}
	s.Ask = true
	s.Analyze = s.Attempt >= t
	return s
}
