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

// source is the short attribution the spec prints after a reason
// (`Attempt 1: "…" (user)`).
func (t Trigger) source() string {
	switch t {
	case TriggerUser:
		return "user"
	case TriggerValidation:
		return "validation failure"
	case TriggerDivergence:
		return "divergence warning"
	}
	return "unknown"
}

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
	// AnalysisThreshold is the rollback number of a round from which
	// root-cause analysis runs; <= 0 means DefaultAnalysisThreshold. Strict
	// always uses 1.
	AnalysisThreshold int
	// Limit is the session rollback limit; <= 0 means DefaultLimit.
	Limit int
}

// DefaultPolicy returns the spec's defaults: INTERACTIVE, threshold 2, limit 7.
func DefaultPolicy() Policy {
	return Policy{Mode: DefaultMode, AnalysisThreshold: DefaultAnalysisThreshold, Limit: DefaultLimit}
}

func (p Policy) threshold() int {
	if p.Mode == ModeStrict {
		return 1
	}
	if p.AnalysisThreshold <= 0 {
		return DefaultAnalysisThreshold
	}
	return p.AnalysisThreshold
}

func (p Policy) limit() int {
	if p.Limit <= 0 {
		return DefaultLimit
	}
	return p.Limit
}

// Step says how the next rollback of a round proceeds under a Policy.
type Step struct {
	// Attempt is the 1-based number of this rollback of the round.
	Attempt int
	// Mode is the effective mode to record in history: AUTO_RETRY for an
	// automatic retry, otherwise INTERACTIVE (or STRICT).
	Mode Mode
	// LimitReached: the session has no rollback left; present LimitPrompt
	// instead of rolling back (PlanRollback would return ErrLimit).
	LimitReached bool
	// AutoRetry: roll back without asking, apply AutoAdjustments, append
	// AutoRetryBlock to status.md, and retry the round at once.
	AutoRetry bool
	// Analyze: run root-cause analysis (Diagnose) and ask AnalysisPrompt
	// before anything else.
	Analyze bool
	// Ask: ask the user. Without Analyze, the question is OptionsPrompt.
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

// Effects of OptionsPrompt's options.
const (
	EffectRetrySame    = "retry-same"
	EffectRetryNarrow  = "retry-narrow"
	EffectRetryContext = "retry-context"
	EffectMultiRound   = "multi-round"
	EffectSkip         = "skip"
)

// OptionsPrompt is the standard rollback question of the INTERACTIVE path
// ("Present rollback options"): retry with the same prompt, with narrowed
// scope, with user-provided context (free text), roll back several rounds
// (only offered when more than one target is available), or skip to the
// next round. Keys keep the spec's numbering 1-5 even when option 4 is not
// offered, so scripted answers stay valid. The automated default is "1":
// retry, leaving the engine's Mediator-recommended adjustments in force.
func OptionsPrompt(round, attempt int, reason string, targets int) Prompt {
	var b strings.Builder
	fmt.Fprintf(&b, "Round %d is being rolled back (rollback %d of this round).\n", round, attempt)
	if r := oneLine(reason); r != "" {
		fmt.Fprintf(&b, "Reason: %s\n", r)
	}
	b.WriteString("\nWhat adjustments would you like for the retry?\n")
	p := Prompt{
		ID:        fmt.Sprintf("rollback-options-r%d-a%d", round, attempt),
		Title:     fmt.Sprintf("ROUND %d ROLLBACK OPTIONS", round),
		Body:      b.String(),
		AllowText: true,
		Default:   "1",
		Options: []Option{
			{Key: "1", Label: "Retry with same prompt", Effect: EffectRetrySame},
			{Key: "2", Label: "Retry with narrowed scope", Effect: EffectRetryNarrow},
			{Key: "3", Label: "Retry with user-provided context", Effect: EffectRetryContext},
		},
	}
	if targets > 1 {
		p.Options = append(p.Options, Option{Key: "4", Label: "Rollback multiple rounds", Effect: EffectMultiRound})
	}
	p.Options = append(p.Options, Option{Key: "5", Label: "Skip to next round", Effect: EffectSkip})
	return p
}

// Effects of LimitPrompt's options.
const (
	EffectPause         = "pause"
	EffectAccept        = "accept"
	EffectAbandon       = "abandon"
	EffectPromptRefresh = "prompt-refresh"
)

// LimitPrompt is the "SESSION ROLLBACK LIMIT REACHED" question (Example 4):
// usage, per-round rollback counts with the last outcome of each round, and
// the four options. The automated default is "1" (pause for human review):
// a session that has exhausted its rollbacks has systematic problems that an
// unattended run should not paper over by accepting or abandoning.
func LimitPrompt(h History, limit int) Prompt {
	if limit <= 0 {
		limit = DefaultLimit
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Used: %d of %d rollback attempts\n", h.Used(), limit)
	if rounds := h.Rounds(); len(rounds) > 0 {
		b.WriteString("\nRollback history:\n")
		for _, r := range rounds {
			recs := h.ForRound(r)
			fmt.Fprintf(&b, "- Round %d: %s", r, plural(len(recs), "rollback", "rollbacks"))
			if o := oneLine(recs[len(recs)-1].Outcome); o != "" {
				fmt.Fprintf(&b, " (%s)", o)
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("\nThis pattern suggests systematic issues.\n")
	b.WriteString("\nNote: Additional rollbacks are not available.\n")
	return Prompt{
		ID:    "rollback-limit",
		Title: "SESSION ROLLBACK LIMIT REACHED",
		Body:  b.String(),
		Options: []Option{
			{Key: "1", Label: "Pause for human review - Export session state", Effect: EffectPause},
			{Key: "2", Label: "Accept current state - USER_APPROVED flow", Effect: EffectAccept},
			{Key: "3", Label: "Abandon session", Effect: EffectAbandon},
			{Key: "4", Label: "Prompt refresh (experimental) - Reset Mediator context", Effect: EffectPromptRefresh},
		},
		Default: "1",
	}
}

// OverrideMessage is the Mediator's reply to the spec's user overrides:
// "Don't auto-retry, ask me" (enable=false) and "Enable auto-retry mode".
func OverrideMessage(enable bool) string {
	if enable {
		return "Auto-retry enabled. First rollback of each round will auto-adjust."
	}
	return "Auto-retry disabled for this round. What adjustments would you like?"
}

// AutoRetryLog is the log line of an automatic retry:
// "Auto-retrying Round 4 with adjustments: …".
func AutoRetryLog(round int, adjustments []string) string {
	return fmt.Sprintf("Auto-retrying Round %d with adjustments: %s", round, strings.Join(adjustments, "; "))
}
