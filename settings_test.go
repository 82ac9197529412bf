package refine_test

import (
	"context"
	"errors"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/rollback"
)

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
