package refine_test

import (
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/rollback"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/fs"
	"github.com/refine-spec/refine/store/memory"
	"github.com/refine-spec/refine/store/sqlite"
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

// Settings live with the session: Open restores them whatever the Config
// says, and SetSettings changes them for every later run.
func TestSettingsSurviveOpen(t *testing.T) {
	ctx := context.Background()
	cfg := refinetest.Config(refinetest.Script(engineerDoc("GAP-TEST-001")), refinetest.Script(), refine.DeferAsker{})
	cfg.MaxRounds, cfg.ParallelGaps, cfg.RollbackMode = 20, 2, rollback.ModeStrict
	cfg.Backend = refine.BackendInfo{Kind: "replay", Source: "replays/"}
	if _, err := refine.New(ctx, cfg); err != nil {
		t.Fatal(err)
	}

	resume := cfg
	resume.Settings = refine.DefaultConfig().Settings // what a resuming host passes by default
	s, err := refine.Open(ctx, resume)
	if err != nil {
		t.Fatal(err)
	}
	got := s.Settings()
	if got.MaxRounds != 20 || got.ParallelGaps != 2 || got.RollbackMode != rollback.ModeStrict || got.Backend.Kind != "replay" {
		t.Fatalf("settings after Open = %+v; want those the session was started with", got)
	}

	got.MaxRounds = 30
	if err := s.SetSettings(ctx, got); err != nil {
		t.Fatal(err)
	}
	bad := got
	bad.MaxRounds = 0
	if err := s.SetSettings(ctx, bad); !errors.Is(err, refine.ErrInvalidConfig) {
		t.Errorf("SetSettings(MaxRounds 0) = %v, want ErrInvalidConfig", err)
	}
	s2, err := refine.Open(ctx, resume)
	if err != nil {
		t.Fatal(err)
	}
	if n := s2.Settings().MaxRounds; n != 30 {
		t.Errorf("MaxRounds after SetSettings and Open = %d, want 30", n)
	}
}

// A session has one ID: the one its Store knows (a Backend's session, a
// session folder's name), in its state and in every listing (issue #23).
func TestSessionHasTheStoresID(t *testing.T) {
	ctx := context.Background()
	eng, rev := approvingRoles()
	sq, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "s.db"), sqlite.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer sq.Close()
	backends := map[string]store.Backend{
		"memory": memory.NewBackend(),
		"fs":     mustFS(t),
		"sqlite": sq,
	}
	for name, b := range backends {
		t.Run(name, func(t *testing.T) {
			id, st, err := b.Create(ctx)
			if err != nil {
				t.Fatal(err)
			}
			cfg := refinetest.Config(eng, rev, refine.DefaultAsker{})
			cfg.Store = st
			s, err := refine.New(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			status, _ := s.Status(ctx)
			if status.SessionID != id {
				t.Errorf("session ID %q, the %s Backend's %q", status.SessionID, name, id)
			}
			if c, ok := st.(interface{ Close() error }); ok {
				_ = c.Close()
			}
		})
	}
	// A session folder opened on its own is named by the folder.
	st, err := fs.Open(filepath.Join(t.TempDir(), "orders-api"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg := refinetest.Config(eng, rev, refine.DefaultAsker{})
	cfg.Store = st
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if status, _ := s.Status(ctx); status.SessionID != "orders-api" {
		t.Errorf("session ID %q, want the folder's name", status.SessionID)
	}
	// Without an ID from the Store: the Backends' format, random, so two
	// processes starting a session in the same second differ.
	seen := map[string]bool{}
	for range 2 {
		cfg := refinetest.Config(eng, rev, refine.DefaultAsker{})
		cfg.IDs = nil
		s, err := refine.New(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		status, _ := s.Status(ctx)
		if !regexp.MustCompile(`^\d{8}-\d{6}-[0-9a-f]{6}$`).MatchString(status.SessionID) || seen[status.SessionID] {
			t.Errorf("default session ID %q: want a fresh 20060102-150405-xxxxxx", status.SessionID)
		}
		seen[status.SessionID] = true
	}
}

func mustFS(t *testing.T) *fs.Backend {
	t.Helper()
	b, err := fs.OpenBackend(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestNewRejectsBadInput(t *testing.T) {
	ctx := context.Background()
	base := refinetest.Config(refinetest.Script(), refinetest.Script(), auto())
	tests := []struct {
		name   string
		mutate func(*refine.Config)
		want   error
		field  string
	}{
		{"no gaps, no spec to discover them in", func(c *refine.Config) { c.Gaps, c.Spec = nil, " \n" }, refine.ErrInvalidConfig, "Spec"},
		{"duplicate gaps", func(c *refine.Config) { c.Gaps = append(twoGaps, twoGaps[0]) }, gap.ErrDuplicateGap, "GAP-FLOW-001"},
		{"a binary spec", func(c *refine.Config) { c.Spec = "# Draft\n\x89PNG\x00" }, refine.ErrInvalidConfig, "offset 8"},
		{"a NUL in the spec", func(c *refine.Config) { c.Spec = "# Draft\x00" }, refine.ErrInvalidConfig, "offset 7"},
		{"no store", func(c *refine.Config) { c.Store = nil }, refine.ErrInvalidConfig, "Store"},
		{"max rounds 1000", func(c *refine.Config) { c.MaxRounds = 1000 }, refine.ErrInvalidConfig, "MaxRounds"},
		{"zero example budget", func(c *refine.Config) { c.RetryExampleBudget = 0 }, refine.ErrInvalidConfig, "RetryExampleBudget"},
		{"weights unordered", func(c *refine.Config) { c.Weights = gap.Weights{Critical: 1, High: 4, Medium: 2, Low: 1} }, refine.ErrInvalidConfig, "Weights"},
	}
	// The replacement character written as text is text.
	cfg := base
	cfg.Spec = "# Draft\n\uFFFD marks a byte a converter could not read.\n"
	if _, err := refine.New(ctx, cfg); err != nil {
		t.Errorf("New with U+FFFD in the spec: %v", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := base
			tt.mutate(&cfg)
			_, err := refine.New(ctx, cfg)
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.field) {
				t.Errorf("New = %v, want %v naming %s", err, tt.want, tt.field)
			}
		})
	}
}
