package refine

import (
	"fmt"
	"log/slog"
	"strings"
	"text/template"
	"time"
	"unicode/utf8"

	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/core"
	"github.com/refine-spec/refine/rollback"
)

// Config is everything a session needs. Start from DefaultConfig, which
// holds the spec's defaults, then set the Store, the Roles and the Asker:
//
//	cfg := refine.DefaultConfig()
//	cfg.Store, cfg.Engineer, cfg.Reviewer, cfg.Asker = st, eng, rev, refine.DefaultAsker{}
//
// Validate reports the first field that is unusable; New and Open call it.
type Config struct {
	// Store holds the session. Required.
	Store Store
	// Engineer and Reviewer are the two LLM-backed roles. Required.
	Engineer Role
	Reviewer Role
	// Asker answers the Mediator's questions. Required; DefaultAsker is
	// automated mode, DeferAsker pauses at every question.
	Asker Asker

	// Spec is the source document being refined (New only; Open reads it
	// from the Store): UTF-8 text without NUL bytes.
	Spec string
	// Gaps is the initial gap list (New only), at most MaxGaps long.
	// Empty: the session starts with discovery (DESIGN §19): the
	// Reviewer lists the spec's gaps, each with its Location and Why, and
	// the Asker confirms the list (a question of kind "discovery", round
	// 0) before round 1.
	Gaps []gap.Gap
	// Discover makes a session given Gaps start with discovery too, which
	// proposes additions to them (New only; refine run --discover).
	Discover bool
	// MaxGaps bounds the initial gap list (New only); 0 means
	// DefaultMaxGaps. Setting a session up takes time and memory linear in
	// its gaps; a longer list is refused rather than slowly accepted.
	MaxGaps int

	// Settings are the session's tunables: thresholds, limits, budgets,
	// the rollback mode. They live with the session: New stores them, Open
	// restores them (the Config's own Settings are then ignored), and
	// Session.SetSettings changes them, recorded in the session.
	Settings

	// ColdStore, when set, is offered at session end as cold storage for
	// rollback archives (manifest.json, cleanup_log.txt; apply the 30-day
	// retention with `refine archives --expire` or rollback.Expired). It is
	// a Store, not a path, so the library does no filesystem I/O of its
	// own; store/fs.Open(dir) gives one. nil: cold storage is not offered.
	ColdStore Store

	// EngineerTemplate and ReviewerTemplate replace the default prompts
	// (nil: defaults). They execute with a PromptData.
	EngineerTemplate *template.Template
	ReviewerTemplate *template.Template
	// ExcerptPrompts selects the compact prompt layout of refine before
	// #28: one system message, and in the user message only the spec
	// sections that mention the call's gaps and the last 10 decisions.
	// It suits backends without prompt caching and with small context
	// windows. The default carries the whole spec (up to half of
	// PromptBudget) and every decision in a stable prefix that providers
	// cache (see Request.Stable and PromptData).
	ExcerptPrompts bool
	// CanonicalEngineer and CanonicalReviewer override the Tier 1 canonical
	// examples otherwise extracted from Spec.
	CanonicalEngineer string
	CanonicalReviewer string

	// Clock, IDs and Tokenizer are injectable for deterministic tests;
	// nil means the system clock, time-based IDs and CharTokenizer.
	Clock     Clock
	IDs       IDSource
	Tokenizer Tokenizer
	// JitterSeed seeds backoff jitter (0: seeded from the clock).
	JitterSeed uint64
	// Logger receives structured logs (nil: discarded).
	Logger *slog.Logger
	// Observer receives progress events (nil: none).
	Observer Observer
}

// DefaultConfig returns a Config with every threshold at the spec's default
// and no Store, Roles or Asker.
func DefaultConfig() Config {
	return Config{Settings: Settings{
		MaxRounds:                 10,
		GapsPerRound:              3,
		ParallelGaps:              1,
		MaxRetries:                2,
		StallRounds:               2,
		Weights:                   gap.DefaultWeights(),
		RetryExampleBudget:        2000,
		InitialExampleBudget:      1000,
		PromptBudget:              24000,
		MaxTokensCap:              DefaultMaxTokensCap,
		MaxOutputBytes:            1 << 20,
		BackupRetention:           3,
		RollbackLimit:             7,
		RollbackAnalysisThreshold: 2,
		RollbackMode:              rollback.ModeInteractive,
		ArchiveRetention:          30 * 24 * time.Hour,
		DisagreeRoundLimit:        0.5,
		DisagreeSessionLimit:      0.4,
		DisagreeWindow:            3,
		DisagreeMaxPerRound:       5,
		TransportRetries:          5,
		BackoffBase:               time.Second,
		BackoffMax:                60 * time.Second,
		Integrate:                 true,
	}}
}

// Validate returns an error wrapping ErrInvalidConfig that names the first
// unusable field.
func (c *Config) Validate() error {
	for _, chk := range configChecks() {
		if chk.bad(c) {
			return fmt.Errorf("%w: %s %s", ErrInvalidConfig, chk.field, chk.why(c))
		}
	}
	return c.Settings.Validate()
}

// Validate's required fields, in the order it reports them.
func configChecks() []configCheck {
	return []configCheck{
		isNil("Store", "use store/memory.New() or store/fs.Open(dir)", func(c *Config) bool { return c.Store == nil }),
		isNil("Engineer", "set a Role", func(c *Config) bool { return c.Engineer == nil }),
		isNil("Reviewer", "set a Role", func(c *Config) bool { return c.Reviewer == nil }),
		isNil("Asker", "use refine.DefaultAsker{} for automated mode", func(c *Config) bool { return c.Asker == nil }),
	}
}

// configCheck is one field's check: bad reports an unusable value, why
// says what it is and what is wanted.
type configCheck struct {
	field string
	bad   func(*Config) bool
	why   func(*Config) string
}

// isNil checks a required field: "is nil: " and what to do.
func isNil(field, todo string, missing func(*Config) bool) configCheck {
	return configCheck{field, missing, func(*Config) string { return "is nil: " + todo }}
}

// DefaultMaxGaps is the longest initial gap list New accepts when
// Config.MaxGaps is 0: far more than a spec's review finds, and set up
// in about a second.
const DefaultMaxGaps = 100_000

// validateNew checks what only a new session needs.
func (c *Config) validateNew() error {
	if at := notText(c.Spec); at >= 0 {
		return fmt.Errorf("%w: Spec is not UTF-8 text (a NUL or invalid byte at offset %d): give the draft as text, not a binary file", ErrInvalidConfig, at)
	}
	if (len(c.Gaps) == 0 || c.Discover) && strings.TrimSpace(c.Spec) == "" {
		return fmt.Errorf("%w: Spec is empty: with no Gaps (or Discover), the session discovers them in the spec", ErrInvalidConfig)
	}
	limit := c.MaxGaps
	switch {
	case limit < 0:
		return fmt.Errorf("%w: MaxGaps is %d: want 0 (DefaultMaxGaps) or more", ErrInvalidConfig, limit)
	case limit == 0:
		limit = DefaultMaxGaps
	}
	if len(c.Gaps) > limit {
		return fmt.Errorf("%w: Gaps lists %d gaps, above the limit of %d (Config.MaxGaps): split the spec into parts refined apart, or raise MaxGaps",
			ErrInvalidConfig, len(c.Gaps), limit)
	}
	var l gap.Ledger
	if err := l.AddAll(c.Gaps); err != nil {
		return fmt.Errorf("%w: Gaps: %w", ErrInvalidConfig, err)
	}
	return nil
}

// notText is the offset of the first byte that makes s no text (a NUL or
// an invalid UTF-8 sequence), or -1: the roles are sent the spec in a
// prompt, and a binary file sent there costs a call and yields nothing.
func notText(s string) int {
	for i, r := range s {
		if r == 0 || r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD") {
			return i
		}
	}
	return -1
}

// params returns what the decisions read of c.
func (c *Config) params() core.Params {
	return core.Params{
		Settings:          c.Settings,
		Defaults:          DefaultConfig().Settings,
		HasColdStore:      c.ColdStore != nil,
		EngineerTemplate:  c.EngineerTemplate,
		ReviewerTemplate:  c.ReviewerTemplate,
		ExcerptPrompts:    c.ExcerptPrompts,
		CanonicalEngineer: c.CanonicalEngineer,
		CanonicalReviewer: c.CanonicalReviewer,
		Discover:          c.Discover,
		MaxGaps:           c.MaxGaps,
	}
}
