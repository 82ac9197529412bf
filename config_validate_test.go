package refine_test

import (
	"testing"
	"time"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/refinetest"
)

// TestConfigValidateNamesEachField pins Validate's message for every field
// it checks, word for word, and that the first unusable field is the one
// named.
func TestConfigValidateNamesEachField(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*refine.Config)
		want   string
	}{
		{"store", func(c *refine.Config) { c.Store = nil }, "invalid config: Store is nil: use store/memory.New() or store/fs.Open(dir)"},
		{"engineer", func(c *refine.Config) { c.Engineer = nil }, "invalid config: Engineer is nil: set a Role"},
		{"reviewer", func(c *refine.Config) { c.Reviewer = nil }, "invalid config: Reviewer is nil: set a Role"},
		{"asker", func(c *refine.Config) { c.Asker = nil }, "invalid config: Asker is nil: use refine.DefaultAsker{} for automated mode"},
		{"max rounds 0", func(c *refine.Config) { c.MaxRounds = 0 }, "invalid config: MaxRounds is 0: want 1 to 999 (issue and decision IDs carry up to three round digits)"},
		{"max rounds over", func(c *refine.Config) { c.MaxRounds = refine.MaxRoundsLimit + 1 }, "invalid config: MaxRounds is 1000: want 1 to 999 (issue and decision IDs carry up to three round digits)"},
		{"gaps per round", func(c *refine.Config) { c.GapsPerRound = 0 }, "invalid config: GapsPerRound is 0: want at least 1"},
		{"parallel gaps", func(c *refine.Config) { c.ParallelGaps = 0 }, "invalid config: ParallelGaps is 0: want at least 1"},
		{"max retries", func(c *refine.Config) { c.MaxRetries = -1 }, "invalid config: MaxRetries is -1: want 0 or more"},
		{"stall rounds", func(c *refine.Config) { c.StallRounds = 0 }, "invalid config: StallRounds is 0: want at least 1"},
		{"retry example budget", func(c *refine.Config) { c.RetryExampleBudget = -3 }, "invalid config: RetryExampleBudget is -3 tokens: want more than 0"},
		{"initial example budget", func(c *refine.Config) { c.InitialExampleBudget = 0 }, "invalid config: InitialExampleBudget is 0 tokens: want more than 0"},
		{"prompt budget", func(c *refine.Config) { c.PromptBudget = 0 }, "invalid config: PromptBudget is 0 tokens: want more than 0"},
		{"max tokens", func(c *refine.Config) { c.MaxTokens = -1 }, "invalid config: MaxTokens is -1: want 0 (backend default) or more"},
		{"max output bytes", func(c *refine.Config) { c.MaxOutputBytes = 0 }, "invalid config: MaxOutputBytes is 0: want more than 0"},
		{"backup retention", func(c *refine.Config) { c.BackupRetention = 0 }, "invalid config: BackupRetention is 0: want at least 1"},
		{"rollback limit", func(c *refine.Config) { c.RollbackLimit = -1 }, "invalid config: RollbackLimit is -1: want 0 or more"},
		{"rollback analysis threshold", func(c *refine.Config) { c.RollbackAnalysisThreshold = 0 }, "invalid config: RollbackAnalysisThreshold is 0: want at least 1"},
		{"rollback mode", func(c *refine.Config) { c.RollbackMode = "SOMETIMES" }, "invalid config: RollbackMode is \"SOMETIMES\": want INTERACTIVE, AUTO_RETRY or STRICT"},
		{"archive retention", func(c *refine.Config) { c.ArchiveRetention = -time.Hour }, "invalid config: ArchiveRetention is -1h0m0s: want a positive duration"},
		{"disagree round limit 0", func(c *refine.Config) { c.DisagreeRoundLimit = 0 }, "invalid config: DisagreeRoundLimit is 0: want a share in (0, 1]"},
		{"disagree round limit over", func(c *refine.Config) { c.DisagreeRoundLimit = 1.5 }, "invalid config: DisagreeRoundLimit is 1.5: want a share in (0, 1]"},
		{"disagree session limit", func(c *refine.Config) { c.DisagreeSessionLimit = -0.25 }, "invalid config: DisagreeSessionLimit is -0.25: want a share in (0, 1]"},
		{"disagree window", func(c *refine.Config) { c.DisagreeWindow = 0 }, "invalid config: DisagreeWindow is 0: want at least 1"},
		{"disagree max per round", func(c *refine.Config) { c.DisagreeMaxPerRound = 0 }, "invalid config: DisagreeMaxPerRound is 0: want at least 1"},
		{"transport retries", func(c *refine.Config) { c.TransportRetries = -2 }, "invalid config: TransportRetries is -2: want 0 or more"},
		{"backoff base", func(c *refine.Config) { c.BackoffBase = 0 }, "invalid config: BackoffBase/BackoffMax are 0s/1m0s: want 0 < base <= max"},
		{"backoff max below base", func(c *refine.Config) { c.BackoffMax = c.BackoffBase - 1 }, "invalid config: BackoffBase/BackoffMax are 1s/999.999999ms: want 0 < base <= max"},
		{"first field wins", func(c *refine.Config) { c.PromptBudget, c.MaxRetries = 0, -1 }, "invalid config: MaxRetries is -1: want 0 or more"},
		{"valid", func(*refine.Config) {}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := refinetest.Config(refinetest.Script(), refinetest.Script(), auto())
			tt.mutate(&cfg)
			got := ""
			if err := cfg.Validate(); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("Validate() = %q, want %q", got, tt.want)
			}
		})
	}
}
