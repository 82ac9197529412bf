package rollbacktext

import (
	"fmt"
	"strings"

	"github.com/refine-spec/refine/internal/rollbackfmt"
	"github.com/refine-spec/refine/question"
	"github.com/refine-spec/refine/rollback"
)

// triggerSource is the short attribution the spec prints after a reason
// (`Attempt 1: "…" (user)`).
func triggerSource(t rollback.Trigger) string {
	switch t {
	case rollback.TriggerUser:
		return "user"
	case rollback.TriggerValidation:
		return "validation failure"
	case rollback.TriggerDivergence:
		return "divergence warning"
	}
	return "unknown"
}

// Effects of OptionsQuestion's options.
const (
	EffectRetrySame    = "retry-same"
	EffectRetryNarrow  = "retry-narrow"
	EffectRetryContext = "retry-context"
	EffectMultiRound   = "multi-round"
	EffectSkip         = "skip"
)

// OptionsQuestion is the standard rollback question of the INTERACTIVE path
// ("Present rollback options"): retry with the same prompt, with narrowed
// scope, with user-provided context (free text), roll back several rounds
// (only offered when more than one target is available), or skip to the
// next round. Keys keep the spec's numbering 1-5 even when option 4 is not
// offered, so scripted answers stay valid. The automated default is "1":
// retry, leaving the engine's Mediator-recommended adjustments in force.
func OptionsQuestion(round, attempt int, reason string, targets int) question.Question {
	var b strings.Builder
	fmt.Fprintf(&b, "Round %d is being rolled back (rollback %d of this round).\n", round, attempt)
	if r := rollbackfmt.OneLine(reason); r != "" {
		fmt.Fprintf(&b, "Reason: %s\n", r)
	}
	b.WriteString("\nWhat adjustments would you like for the retry?\n")
	p := question.Question{
		Kind:      question.KindRollback,
		ID:        fmt.Sprintf("rollback-options-r%d-a%d", round, attempt),
		Title:     fmt.Sprintf("ROUND %d ROLLBACK OPTIONS", round),
		Body:      b.String(),
		AllowText: true,
		Default:   "1",
		Options: []question.Option{
			{Key: "1", Label: "Retry with same prompt", Effect: EffectRetrySame},
			{Key: "2", Label: "Retry with narrowed scope", Effect: EffectRetryNarrow},
			{Key: "3", Label: "Retry with user-provided context", Effect: EffectRetryContext},
		},
	}
	if targets > 1 {
		p.Options = append(p.Options, question.Option{Key: "4", Label: "Rollback multiple rounds", Effect: EffectMultiRound})
	}
	p.Options = append(p.Options, question.Option{Key: "5", Label: "Skip to next round", Effect: EffectSkip})
	return p
}

// Effects of LimitQuestion's options.
const (
	EffectPause         = "pause"
	EffectAccept        = "accept"
	EffectAbandon       = "abandon"
	EffectPromptRefresh = "prompt-refresh"
)

// LimitQuestion is the "SESSION ROLLBACK LIMIT REACHED" question (Example 4):
// usage, per-round rollback counts with the last outcome of each round, and
// the four options. The automated default is "1" (pause for human review):
// a session that has exhausted its rollbacks has systematic problems that an
// unattended run should not paper over by accepting or abandoning.
func LimitQuestion(h rollback.History, limit int) question.Question {
	if limit <= 0 {
		limit = rollback.DefaultLimit
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Used: %d of %d rollback attempts\n", h.Used(), limit)
	if rounds := h.Rounds(); len(rounds) > 0 {
		b.WriteString("\nRollback history:\n")
		for _, r := range rounds {
			recs := h.ForRound(r)
			fmt.Fprintf(&b, "- Round %d: %s", r, rollbackfmt.Plural(len(recs), "rollback", "rollbacks"))
			if o := rollbackfmt.OneLine(recs[len(recs)-1].Outcome); o != "" {
				fmt.Fprintf(&b, " (%s)", o)
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("\nThis pattern suggests systematic issues.\n")
	b.WriteString("\nNote: Additional rollbacks are not available.\n")
	return question.Question{
		Kind:  question.KindRollback,
		ID:    "rollback-limit",
		Title: "SESSION ROLLBACK LIMIT REACHED",
		Body:  b.String(),
		Options: []question.Option{
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
