package core

import (
	"strconv"
	"strings"

	"github.com/refine-spec/refine/internal/core/render"
	"github.com/refine-spec/refine/llm"
)

// View lists the settings a person tunes (the ones the CLI's flags
// change), in a stable order, with their effective values: a rollback
// limit or mode left unset reads as the default it stands for. Never a
// key: Settings hold none.
func (set Settings) View() []render.SettingValue {
	p := &Params{Settings: set}
	cold := p.ColdStorage
	if cold == "" {
		cold = "—"
	}
	itoa := strconv.Itoa
	return []render.SettingValue{
		{Name: "max_rounds", Value: itoa(p.MaxRounds)},
		{Name: "gaps_per_round", Value: itoa(p.GapsPerRound)},
		{Name: "parallel_gaps", Value: itoa(p.ParallelGaps)},
		{Name: "max_retries", Value: itoa(p.MaxRetries)},
		{Name: "rollback_mode", Value: string(rollbackModeOf(p))},
		{Name: "rollback_limit", Value: itoa(p.rollbackLimit())},
		{Name: "rollback_analysis_threshold", Value: itoa(analysisThresholdOf(p))},
		{Name: "backup_retention", Value: itoa(p.BackupRetention)},
		{Name: "cold_storage", Value: cold},
		{Name: "integrate", Value: strconv.FormatBool(p.Integrate)},
		{Name: "transport_retries", Value: itoa(p.TransportRetries)},
		{Name: "backoff_base", Value: p.BackoffBase.String()},
		{Name: "max_tokens", Value: itoa(p.MaxTokens)},
		{Name: "max_tokens_cap", Value: itoa(p.TokensCap())},
	}
}

// setup is what status.md shows of the session's configuration: its
// settings, its effective rollback limit and the backend of each role.
func (p *Params) setup() render.Setup {
	var models []string
	for _, r := range []llm.RoleName{llm.Engineer, llm.Reviewer} {
		rb := p.Backend.Role(r)
		label := rb.Kind
		if rb.Model != "" {
			label = strings.TrimPrefix(label+":"+rb.Model, ":")
		}
		if label != "" {
			models = append(models, r.Title()+": "+label)
		}
	}
	return render.Setup{Settings: p.View(), RollbackLimit: p.rollbackLimit(), Models: models}
}
