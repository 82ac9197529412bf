package fs_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/store/fs"
)

// runSession plays a refine session of rounds rounds (one gap each, the
// Reviewer raising no issue) through Session.Run on s.
func runSession(t *testing.T, s *fs.Store, rounds int) {
	t.Helper()
	ctx := context.Background()
	eng := refinetest.Func(func(ctx context.Context, req llm.Request) (llm.Response, error) {
		return llm.Response{Content: refinetest.EngineerOutput(req.Gaps...)}, nil
	})
	rev := refinetest.Func(func(ctx context.Context, req llm.Request) (llm.Response, error) {
		return llm.Response{Content: refinetest.ReviewerOutput(req.Round, req.Gaps)}, nil
	})
	gaps := make([]gap.Gap, rounds)
	for i := range gaps {
		gaps[i] = gap.Gap{ID: gap.ID(fmt.Sprintf("GAP-SYNC-%03d", i+1)), Title: "a gap of the sync test", Severity: gap.Medium}
	}
	cfg := refinetest.Config(eng, rev, &refinetest.Asker{DefaultAfterScript: true}, gaps...)
	cfg.GapsPerRound = 1
	cfg.MaxRounds = rounds + 1
	cfg.Store = s
	sess, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := sess.Run(ctx)
	if err != nil || out.Status != refine.StatusComplete || out.Round != rounds {
		t.Fatalf("Run = %+v, %v; want a session complete after %d rounds", out, err, rounds)
	}
}

// TestSessionSyncCalls counts the sync calls (fsync, fdatasync, syncfs,
// folders' fsyncs) a refine session makes on store/fs through
// Session.Run: at most two per commit on the commit path (one: a log
// frame's fdatasync), none for spares or for checkpoints a crash would
// redo from the log (the applier goes idle after every commit here, so
// any idle work that synced would show; growing the log file ahead syncs
// once), and none when the session's folder is opened again after a
// clean Close. A long session reaches the checkpoint threshold, whose
// fsyncs stay off the commit path and come once per threshold's worth of
// commits.
func TestSessionSyncCalls(t *testing.T) {
	t.Run("session", func(t *testing.T) {
		dir := t.TempDir()
		var syncs fs.SyncCounts
		s, err := fs.Open(dir, fs.WithSyncCounter(&syncs), fs.WithIdleDelay(0))
		if err != nil {
			t.Fatal(err)
		}
		// A new folder: the log folder's entry, the log file and its name.
		if got, want := syncs.Counts(), map[string]int{"open": 3}; !cmp.Equal(got, want) {
			t.Errorf("Open of a new folder: sync calls %v, want %v", got, want)
		}
		syncs.Reset()
		runSession(t, s, 5)
		commits := fs.Commits(s)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		got := syncs.Counts()
		t.Logf("%d commits: sync calls %v (%.2f a commit)", commits, got, float64(got["commit"])/float64(commits))
		if commits < 10 {
			t.Fatalf("%d commits in a 5-round session: the test exercises too little", commits)
		}
		if got["commit"] > 2*commits {
			t.Errorf("%d sync calls on the commit path for %d commits, want at most 2 a commit", got["commit"], commits)
		}
		// Idle time grows the log file ahead, once here (the session's
		// frames take less than the 256 KiB reserve; twice if the applier
		// first goes idle late); nothing syncs for spares or a
		// checkpoint, nor at Close.
		reserve := got["reserve"]
		if reserve > 2 {
			t.Errorf("%d sync calls to grow the log file, want at most 2", reserve)
		}
		want := map[string]int{"commit": commits}
		if reserve > 0 {
			want["reserve"] = reserve
		}
		if !cmp.Equal(got, want) {
			t.Errorf("sync calls %v, want %v: one fdatasync a commit, nothing for spares, checkpoints or Close (paths %q)",
				got, want, syncs.Paths("checkpoint"))
		}
		if total := got["commit"] + got["reserve"] + got["checkpoint"]; total > 2*commits {
			t.Errorf("%d sync calls in all for %d commits, want at most 2 a commit", total, commits)
		}

		// Opening the folder again replays nothing the files hold and
		// syncs nothing.
		syncs.Reset()
		s, err = fs.Open(dir, fs.WithSyncCounter(&syncs))
		if err != nil {
			t.Fatal(err)
		}
		keys := snapshotKeys(t, s)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if got := syncs.Counts(); len(got) != 0 {
			t.Errorf("Open and Close of the finished session: sync calls %v, want none", got)
		}
		if len(keys) == 0 || keys["state.json"] == "" {
			t.Errorf("the reopened session holds %d keys, no state.json", len(keys))
		}
	})
	t.Run("threshold", func(t *testing.T) {
		const threshold = 8
		dir := t.TempDir()
		var syncs fs.SyncCounts
		s, err := fs.Open(dir, fs.WithSyncCounter(&syncs), fs.WithCheckpointThresholds(threshold, 1<<30))
		if err != nil {
			t.Fatal(err)
		}
		syncs.Reset()
		runSession(t, s, 6)
		commits := fs.Commits(s)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		got := syncs.Counts()
		headers := 0
		for _, p := range syncs.Paths("checkpoint") {
			if p == ".refine-wal/log" {
				headers++
			}
		}
		t.Logf("%d commits, checkpoint every %d records: sync calls %v, %d checkpoints", commits, threshold, got, headers)
		if got["commit"] != commits {
			t.Errorf("%d sync calls on the commit path for %d commits, want one a commit", got["commit"], commits)
		}
		if headers == 0 || headers > commits/threshold {
			t.Errorf("%d checkpoints for %d commits, want between 1 and one per %d commits", headers, commits, threshold)
		}
		if fs.SyncsFileSystems && got["checkpoint"] != 2*headers {
			t.Errorf("%d sync calls for %d checkpoints, want 2 each: one syncfs and the header (paths %q)", got["checkpoint"], headers, syncs.Paths("checkpoint"))
		}
		if total := got["commit"] + got["checkpoint"] + got["reserve"]; fs.SyncsFileSystems && total > 2*commits {
			t.Errorf("%d sync calls in all for %d commits, want at most 2 a commit", total, commits)
		}
		if got["open"] != 0 || got["none"] != 0 {
			t.Errorf("sync calls %v: none should be Open's or untagged", got)
		}
	})
}

// snapshotKeys reads every key of s.
func snapshotKeys(t *testing.T, s *fs.Store) map[string]string {
	t.Helper()
	ctx := context.Background()
	keys, err := s.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, k := range keys {
		b, err := s.Get(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		m[k] = string(b)
	}
	return m
}
