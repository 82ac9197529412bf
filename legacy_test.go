package refine_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/llm/replay"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/store/fs"
)

// copyDir copies a session folder from testdata into a temporary folder.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	err := os.CopyFS(dst, os.DirFS(src))
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func legacyConfig(t *testing.T, dir string) (refine.Config, *fs.Store) {
	t.Helper()
	st, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg := refine.DefaultConfig()
	cfg.Store = st
	// The recorded answers first, then a Role that resolves what it is
	// given, so the resumed session can finish whatever the answers.
	r := replay.Dir("cmd/refine/demo/replay")
	fallback := refine.RoleFunc(func(ctx context.Context, req refine.Request) (refine.Response, error) {
		if resp, err := r.Respond(ctx, req); err == nil {
			return resp, nil
		}
		if req.Role == refine.Engineer {
			return refine.Response{Content: refinetest.EngineerOutput(req.Gaps...)}, nil
		}
		return refine.Response{Content: refinetest.ReviewerOutput(req.Round, req.Gaps)}, nil
	})
	cfg.Engineer, cfg.Reviewer = fallback, fallback
	cfg.Asker = refine.DefaultAsker{}
	return cfg, st
}

// Session folders written by refine 0.1 (commit ec0199c, state.json
// schema 1) open, report their status and resume; the first commit
// rewrites state.json in the current schema.
func TestLegacySessionsOpenAndResume(t *testing.T) {
	ctx := context.Background()
	t.Run("finished demo", func(t *testing.T) {
		cfg, _ := legacyConfig(t, copyDir(t, "testdata/legacy-ec0199c/demo"))
		s, err := refine.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		st, err := s.Status(ctx)
		if err != nil || st.Outcome != refine.StatusComplete || st.Round != 4 {
			t.Fatalf("status = %s round %d, %v; want COMPLETE after round 4", st.Outcome, st.Round, err)
		}
		if len(st.Rollbacks) != 1 {
			t.Errorf("rollbacks = %d, want the demo's one", len(st.Rollbacks))
		}
	})
	t.Run("paused replay", func(t *testing.T) {
		dir := copyDir(t, "testdata/legacy-ec0199c/paused")
		cfg, _ := legacyConfig(t, dir)
		s, err := refine.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := s.Status(ctx)
		if st.Outcome != refine.StatusPaused || len(st.Pending) != 1 || st.Pending[0].ID != "rate-warning-r2" {
			t.Fatalf("status = %s, pending %v; want PAUSED on rate-warning-r2", st.Outcome, st.Pending)
		}
		if err := s.Answer(ctx, "rate-warning-r2", refine.Answer{Key: "1"}); err != nil {
			t.Fatal(err)
		}
		out, err := s.Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !out.Status.Terminal() {
			t.Fatalf("outcome %s (%s), pending %+v, want a terminal one", out.Status, out.Reason, out.Pending)
		}
		b, err := cfg.Store.Get(ctx, "state.json")
		if err != nil {
			t.Fatal(err)
		}
		var head struct{ Schema int }
		if err := json.Unmarshal(b, &head); err != nil || head.Schema != 3 {
			t.Errorf("state.json schema after resuming = %d (%v), want 3", head.Schema, err)
		}
		// And the rewritten session opens again, in another process.
		cfg.Store.(*fs.Store).Close()
		cfg2, _ := legacyConfig(t, dir)
		s2, err := refine.Open(ctx, cfg2)
		if err != nil {
			t.Fatal(err)
		}
		st2, _ := s2.Status(ctx)
		if st2.Outcome != out.Status || st2.Round != out.Round {
			t.Errorf("reopened: %s round %d, want %s round %d", st2.Outcome, st2.Round, out.Status, out.Round)
		}
	})
}

// Session folders written by b1a9ae5 (schema 2: a journal, snapshots and
// backups without a checksum) open, roll back through their backups and
// resume; the first commit writes state.json sealed (schema 3).
func TestSchema2SessionsOpenAndResume(t *testing.T) {
	ctx := context.Background()
	t.Run("finished demo rolls back", func(t *testing.T) {
		dir := copyDir(t, "testdata/legacy-b1a9ae5/demo")
		cfg, _ := legacyConfig(t, dir)
		s, err := refine.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		st, err := s.Status(ctx)
		if err != nil || st.Outcome != refine.StatusComplete || st.Round != 4 || len(st.Rollbacks) != 1 {
			t.Fatalf("status = %s round %d, %d rollbacks, %v; want COMPLETE after round 4, 1 rollback", st.Outcome, st.Round, len(st.Rollbacks), err)
		}
		if _, err := s.Rollback(ctx, refine.RollbackRequest{To: 1, Reason: "again", Adjustments: []string{"be concrete"}}); err != nil {
			t.Fatalf("rollback to round 1 through schema-2 backups: %v", err)
		}
		if st, _ := s.Status(ctx); st.Round != 1 {
			t.Errorf("after the rollback: round %d, want 1", st.Round)
		}
		b, err := cfg.Store.Get(ctx, "state.json")
		if err != nil || !strings.HasPrefix(string(b), `{"checksum":"crc32c:`) {
			t.Errorf("state.json after the rollback is not sealed: %.60s (%v)", b, err)
		}
	})
	t.Run("paused replay", func(t *testing.T) {
		dir := copyDir(t, "testdata/legacy-b1a9ae5/paused")
		cfg, _ := legacyConfig(t, dir)
		s, err := refine.Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := s.Status(ctx)
		const q = "conflict-r2-ISSUE-R1-001"
		if st.Outcome != refine.StatusPaused || len(st.Pending) != 1 || st.Pending[0].ID != q {
			t.Fatalf("status = %s, pending %v; want PAUSED on %s", st.Outcome, st.Pending, q)
		}
		if err := s.Answer(ctx, q, refine.Answer{Key: "A"}); err != nil {
			t.Fatal(err)
		}
		out, err := s.Run(ctx)
		if err != nil || !out.Status.Terminal() {
			t.Fatalf("Run = %s (%s), %v; want a terminal outcome", out.Status, out.Reason, err)
		}
		cfg.Store.(*fs.Store).Close()
		cfg2, _ := legacyConfig(t, dir)
		s2, err := refine.Open(ctx, cfg2)
		if err != nil {
			t.Fatal(err)
		}
		st2, _ := s2.Status(ctx)
		if st2.Outcome != out.Status || st2.Round != out.Round {
			t.Errorf("reopened: %s round %d, want %s round %d", st2.Outcome, st2.Round, out.Status, out.Round)
		}
	})
}
