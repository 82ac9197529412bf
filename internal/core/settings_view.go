package core

import (
	"fmt"
	"github.com/refine-spec/refine/internal/core/state"
	"strconv"
	"strings"
)

// SettingValue is one of a session's settings as status reports show it:
// its JSON name (as in Settings and `status --json`'s "settings") and
// its value as text.
type SettingValue struct {
	Name, Value string
}

// View lists the settings a person tunes (the ones the CLI's flags
// change), in a stable order, with their effective values: a rollback
// limit or mode left unset reads as the default it stands for. Never a
// key: Settings hold none.
func (set Settings) View() []SettingValue {
	p := &Params{Settings: set}
	cold := p.ColdStorage
	if cold == "" {
		cold = "—"
	}
	itoa := strconv.Itoa
	return []SettingValue{
		{"max_rounds", itoa(p.MaxRounds)},
		{"gaps_per_round", itoa(p.GapsPerRound)},
		{"parallel_gaps", itoa(p.ParallelGaps)},
		{"max_retries", itoa(p.MaxRetries)},
		{"rollback_mode", string(RollbackModeOf(p))},
		{"rollback_limit", itoa(p.rollbackLimit())},
		{"rollback_analysis_threshold", itoa(analysisThresholdOf(p))},
		{"backup_retention", itoa(p.BackupRetention)},
		{"cold_storage", cold},
		{"integrate", strconv.FormatBool(p.Integrate)},
		{"transport_retries", itoa(p.TransportRetries)},
		{"backoff_base", p.BackoffBase.String()},
		{"max_tokens", itoa(p.MaxTokens)},
		{"max_tokens_cap", itoa(p.TokensCap())},
	}
}

// writeSettings writes status.md's "## Settings": the session's settings
// and each change made to them since it started (`refine resume
// --rollback-limit …`, Session.SetSettings), so what state.json holds is
// also what a person reads (#40).
func writeSettings(b *strings.Builder, p *Params, log []state.SettingsChange) {
	b.WriteString("\n## Settings\n\n| Setting | Value |\n|---------|-------|\n")
	for _, v := range p.View() {
		fmt.Fprintf(b, "| %s | %s |\n", v.Name, cell(v.Value))
	}
	if len(log) == 0 {
		return
	}
	b.WriteString("\nChanged:\n")
	for _, c := range log {
		fmt.Fprintf(b, "- round %d, %s: %s\n", c.Round, c.At, cell(strings.Join(c.Changes, "; ")))
	}
}
