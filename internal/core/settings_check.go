package core

import "fmt"

// Validate returns an error wrapping ErrInvalidConfig that names the first
// unusable setting.
func (c Settings) Validate() error {
	for _, chk := range settingsChecks() {
		if chk.bad(&c) {
			return fmt.Errorf("%w: %s %s", ErrInvalidConfig, chk.field, chk.why(&c))
		}
	}
	if err := c.Weights.Validate(); err != nil {
		return fmt.Errorf("%w: Weights: %w", ErrInvalidConfig, err)
	}
	return nil
}

// settingsCheck is one field's check: bad reports an unusable value, why
// says what it is and what is wanted.
type settingsCheck struct {
	field string
	bad   func(*Settings) bool
	why   func(*Settings) string
}

// settingsChecks are Validate's checks, in the order it reports them.
func settingsChecks() []settingsCheck {
	return []settingsCheck{
		{"MaxRounds", func(c *Settings) bool { return c.MaxRounds < 1 || c.MaxRounds > MaxRoundsLimit }, func(c *Settings) string {
			return fmt.Sprintf("is %d: want 1 to %d (issue and decision IDs carry up to three round digits)", c.MaxRounds, MaxRoundsLimit)
		}},
		atLeast("GapsPerRound", 1, "is %d: want at least 1", func(c *Settings) int { return c.GapsPerRound }),
		atLeast("ParallelGaps", 1, "is %d: want at least 1", func(c *Settings) int { return c.ParallelGaps }),
		atLeast("MaxRetries", 0, "is %d: want 0 or more", func(c *Settings) int { return c.MaxRetries }),
		atLeast("StallRounds", 1, "is %d: want at least 1", func(c *Settings) int { return c.StallRounds }),
		atLeast("RetryExampleBudget", 1, "is %d tokens: want more than 0", func(c *Settings) int { return c.RetryExampleBudget }),
		atLeast("InitialExampleBudget", 1, "is %d tokens: want more than 0", func(c *Settings) int { return c.InitialExampleBudget }),
		atLeast("PromptBudget", 1, "is %d tokens: want more than 0", func(c *Settings) int { return c.PromptBudget }),
		atLeast("MaxTokens", 0, "is %d: want 0 (backend default) or more", func(c *Settings) int { return c.MaxTokens }),
		{"MaxTokensCap", func(c *Settings) bool {
			return c.MaxTokensCap < 0 || (c.MaxTokensCap > 0 && c.MaxTokensCap < c.MaxTokens)
		}, func(c *Settings) string {
			return fmt.Sprintf("is %d: want 0 (DefaultMaxTokensCap) or at least MaxTokens (%d)", c.MaxTokensCap, c.MaxTokens)
		}},
		atLeast("MaxOutputBytes", 1, "is %d: want more than 0", func(c *Settings) int { return c.MaxOutputBytes }),
		atLeast("BackupRetention", 1, "is %d: want at least 1", func(c *Settings) int { return c.BackupRetention }),
		atLeast("RollbackLimit", 0, "is %d: want 0 or more", func(c *Settings) int { return c.RollbackLimit }),
		atLeast("RollbackAnalysisThreshold", 1, "is %d: want at least 1", func(c *Settings) int { return c.RollbackAnalysisThreshold }),
		{"RollbackMode", func(c *Settings) bool { return !c.RollbackMode.Valid() }, func(c *Settings) string {
			return fmt.Sprintf("is %q: want INTERACTIVE, AUTO_RETRY or STRICT", c.RollbackMode)
		}},
		{"ArchiveRetention", func(c *Settings) bool { return c.ArchiveRetention <= 0 }, func(c *Settings) string {
			return fmt.Sprintf("is %s: want a positive duration", c.ArchiveRetention)
		}},
		share("DisagreeRoundLimit", func(c *Settings) float64 { return c.DisagreeRoundLimit }),
		share("DisagreeSessionLimit", func(c *Settings) float64 { return c.DisagreeSessionLimit }),
		atLeast("DisagreeWindow", 1, "is %d: want at least 1", func(c *Settings) int { return c.DisagreeWindow }),
		atLeast("DisagreeMaxPerRound", 1, "is %d: want at least 1", func(c *Settings) int { return c.DisagreeMaxPerRound }),
		atLeast("TransportRetries", 0, "is %d: want 0 or more", func(c *Settings) int { return c.TransportRetries }),
		{"BackoffBase/BackoffMax", func(c *Settings) bool { return c.BackoffBase <= 0 || c.BackoffMax < c.BackoffBase }, func(c *Settings) string {
			return fmt.Sprintf("are %s/%s: want 0 < base <= max", c.BackoffBase, c.BackoffMax)
		}},
	}
}

// atLeast checks an int field against its least usable value; format
// shows the value.
func atLeast(field string, least int, format string, v func(*Settings) int) settingsCheck {
	return settingsCheck{field, func(c *Settings) bool { return v(c) < least }, func(c *Settings) string { return fmt.Sprintf(format, v(c)) }}
}

// share checks a share in (0, 1].
func share(field string, v func(*Settings) float64) settingsCheck {
	return settingsCheck{field, func(c *Settings) bool { return v(c) <= 0 || v(c) > 1 }, func(c *Settings) string {
		return fmt.Sprintf("is %v: want a share in (0, 1]", v(c))
	}}
}
