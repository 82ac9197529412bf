package refine_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
)

// racingReader is a reader's view of a Store in which, right after the
// reader has read state.json, the writer replaces it (a rollback writes a
// new snapshot and drops the journal records it holds).
type racingReader struct {
	refine.Store
	once   sync.Once
	writer func()
}

func (r *racingReader) Get(ctx context.Context, key string) ([]byte, error) {
	b, err := r.Store.Get(ctx, key)
	if key == "state.json" {
		r.once.Do(r.writer)
	}
	return b, err
}

// A reader beside a live writer (a web console, `refine status`) that
// reads state.json just before a new snapshot replaces it still reads a
// whole state: the records its snapshot needs are kept while a backup
// needs them, and when they are gone it reads again.
func TestInspectDuringSnapshot(t *testing.T) {
	ctx := context.Background()
	gaps := []gap.Gap{{ID: "GAP-RACE-001", Severity: gap.High}, {ID: "GAP-RACE-002", Severity: gap.High}, {ID: "GAP-RACE-003", Severity: gap.High}}
	s, cfg := threeRounds(t, gaps)
	rolledBack := false
	reader := &racingReader{Store: cfg.Store, writer: func() {
		_, err := s.Rollback(ctx, refine.RollbackRequest{To: 1, Reason: "race a reader", Adjustments: []string{"be concrete"}})
		rolledBack = err == nil
	}}
	st, err := refine.Inspect(ctx, reader)
	if err != nil {
		t.Fatalf("Inspect while the writer snapshotted: %v", err)
	}
	if !rolledBack {
		t.Fatal("the writer's rollback did not happen: the test tested nothing")
	}
	// The reader sees the state from before the rollback or after it,
	// whole: never an error, never a mixture.
	if st.Round != 3 && st.Round != 1 {
		t.Errorf("Inspect saw round %d, want 3 (before the rollback) or 1 (after)", st.Round)
	}
	after, err := refine.Inspect(ctx, cfg.Store)
	if err != nil || after.Round != 1 {
		t.Errorf("Inspect after the rollback = round %d, %v; want round 1", after.Round, err)
	}
}

// Compact folds the journal into state.json and makes every state backup a
// whole state: the session reads the same, rolls back and runs on.
func TestCompact(t *testing.T) {
	ctx := context.Background()
	gaps := []gap.Gap{{ID: "GAP-CMP-001", Severity: gap.High}, {ID: "GAP-CMP-002", Severity: gap.High}, {ID: "GAP-CMP-003", Severity: gap.High}, {ID: "GAP-CMP-004", Severity: gap.High}}
	_, cfg := threeRounds(t, gaps)
	before, _ := refine.Inspect(ctx, cfg.Store)
	if keys, _ := cfg.Store.List(ctx, "journal/"); len(keys) == 0 {
		t.Fatal("no journal before Compact: the test tests nothing")
	}
	if err := refine.Compact(ctx, cfg.Store); err != nil {
		t.Fatal(err)
	}
	if keys, _ := cfg.Store.List(ctx, "journal/"); len(keys) != 0 {
		t.Errorf("journal keys after Compact: %v", keys)
	}
	for _, k := range []string{"state_backup_round_1.json", "state_backup_round_2.json"} {
		b := get(t, cfg, k)
		if strings.Contains(b, "backup_ref") || !strings.Contains(b, `"ledger"`) {
			t.Errorf("%s after Compact is not a whole state: %.80s", k, b)
		}
	}
	after, err := refine.Inspect(ctx, cfg.Store)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("status changed by Compact (-before +after):\n%s", diff)
	}
	s2, err := refine.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Rollback(ctx, refine.RollbackRequest{To: 2, Reason: "after compaction", Adjustments: []string{"be concrete"}}); err != nil {
		t.Fatalf("rollback after Compact: %v", err)
	}
	out, err := s2.Run(ctx)
	if err != nil || out.Status != refine.StatusComplete {
		t.Fatalf("run after Compact = %+v, %v", out, err)
	}
}

// threeRounds plays three rounds of one gap each with roles that resolve
// every gap and approve every proposal.
func threeRounds(t *testing.T, gaps []gap.Gap) (*refine.Session, refine.Config) {
	t.Helper()
	ctx := context.Background()
	eng := refinetest.Func(func(ctx context.Context, req refine.Request) (refine.Response, error) {
		return refine.Response{Content: refinetest.EngineerOutput(req.Gaps...)}, nil
	})
	rev := refinetest.Func(func(ctx context.Context, req refine.Request) (refine.Response, error) {
		return refine.Response{Content: refinetest.ReviewerOutput(req.Round, req.Gaps)}, nil
	})
	cfg := refinetest.Config(eng, rev, auto(), gaps...)
	cfg.GapsPerRound = 1
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := s.Step(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return s, cfg
}
