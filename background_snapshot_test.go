package refine_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/memory"
)

// commitLog is a Store that keeps every commit's ops and, once crashAt
// says so, refuses this commit and every later one, as a process that
// died before it would.
type commitLog struct {
	refine.Store
	mu      sync.Mutex
	commits [][]store.Op
	crashAt func(ops []store.Op) bool
	crashed bool
}

var errCrashed = errors.New("the process died here")

func (c *commitLog) Commit(ctx context.Context, ops ...store.Op) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.crashed || c.crashAt != nil && c.crashAt(ops) {
		c.crashed = true
		return errCrashed
	}
	if err := c.Store.Commit(ctx, ops...); err != nil {
		return err
	}
	c.commits = append(c.commits, ops)
	return nil
}

func (c *commitLog) Appends() bool { return true }

// longSession is an 80-round session with outputs of realistic size: its
// journal outgrows its first snapshot, so a background snapshot is written
// and completed.
func longSession(t *testing.T, st refine.Store) refine.Config {
	t.Helper()
	eng, rev := realisticRoles(0)
	cfg := refinetest.Config(eng, rev, refine.DefaultAsker{}, benchGaps(80)...)
	cfg.Spec = realisticSpec()
	cfg.GapsPerRound, cfg.MaxRounds = 1, 90
	cfg.Store = st
	return cfg
}

// snapshotChunks returns, per commit, the background-snapshot ops it
// holds (Put of the first chunk, Append of the others) and its journal
// record's size.
func snapshotChunks(commits [][]store.Op) (chunks [][]store.Op, records []int) {
	for _, ops := range commits {
		var cs []store.Op
		rec := 0
		for _, op := range ops {
			switch {
			case strings.HasPrefix(op.Key, "snapshots/") && op.Kind != store.OpDelete:
				cs = append(cs, op)
			case strings.HasPrefix(op.Key, "journal/"):
				rec += len(op.Value)
			}
		}
		chunks, records = append(chunks, cs), append(records, rec)
	}
	return chunks, records
}

// A long session's snapshot is written a chunk per commit, never more
// than the commit's record or 2 KiB, while state.json stays as it was; the
// commit of the last chunk drops the records the snapshot holds, and the
// session reads the same from its Store afterwards.
func TestBackgroundSnapshot(t *testing.T) {
	ctx := context.Background()
	log := &commitLog{Store: memory.New()}
	cfg := longSession(t, log)
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil || out.Status != refine.StatusComplete {
		t.Fatalf("Run = %+v, %v", out, err)
	}
	chunks, records := snapshotChunks(log.commits)
	var key string
	var doc []byte
	first, done := -1, -1
	for i, cs := range chunks {
		for _, op := range cs {
			if op.Kind == store.OpPut && strings.HasPrefix(op.Key, "snapshots/state_") && first < 0 {
				// The first background snapshot; an earlier one is a copy
				// of state.json kept for a backup.
				var head struct {
					JournalSeq int64 `json:"journal_seq"`
				}
				if json.Unmarshal(op.Value, &head) == nil {
					continue // a whole document: a kept copy
				}
				first, key = i, op.Key
			}
			if op.Key != key || first < 0 {
				continue
			}
			// A chunk a durable point, the size of its journal records or
			// 2 KiB; a driver's commit holds a Ready's durable points (two
			// here: a call's result and the next call's prompt).
			if limit := 2 * max(2048, records[i]); len(op.Value) > limit {
				t.Errorf("commit %d appends %d bytes of the snapshot, more than %d", i, len(op.Value), limit)
			}
			doc = append(doc, op.Value...)
			if json.Valid(doc) && done < 0 {
				done = i
			}
		}
		if first >= 0 && (done < 0 || i <= done) {
			for _, op := range log.commits[i] {
				if op.Key == "state.json" {
					t.Errorf("commit %d rewrites state.json while a background snapshot is written", i)
				}
			}
		}
	}
	if first < 0 || done < 0 {
		t.Fatalf("no background snapshot completed in %d commits (first chunk at %d, done at %d)", len(log.commits), first, done)
	}
	if done-first < 2 {
		t.Errorf("the snapshot took commits %d to %d: not spread", first, done)
	}
	dropped := 0
	for _, op := range log.commits[done] {
		if op.Kind == store.OpDelete && strings.HasPrefix(op.Key, "journal/") {
			dropped++
		}
	}
	if dropped == 0 {
		t.Errorf("the commit completing the snapshot dropped no journal segment: %v", opKeys(log.commits[done]))
	}
	want, _ := s.Status(ctx)
	got, err := refine.Inspect(ctx, log.Store)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the stored session reads differently (-live +stored):\n%s", diff)
	}
}

// A process that dies while a background snapshot is half written leaves
// an incomplete snapshot file: readers pass over it, the session reopens,
// rolls back through its backups and finishes, and the leftover is gone.
func TestBackgroundSnapshotCrash(t *testing.T) {
	ctx := context.Background()
	appends := 0
	mem := memory.New()
	log := &commitLog{Store: mem, crashAt: func(ops []store.Op) bool {
		for _, op := range ops {
			if strings.HasPrefix(op.Key, "snapshots/state_") && op.Kind == store.OpAppend {
				appends++
			}
		}
		return appends == 3 // the first chunk and two more are in
	}}
	cfg := longSession(t, log)
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(ctx); !errors.Is(err, errCrashed) {
		t.Fatalf("Run = %v, want the crash", err)
	}
	var partial string
	snaps, _ := mem.List(ctx, "snapshots/")
	for _, k := range snaps {
		if b, _ := mem.Get(ctx, k); !json.Valid(b) {
			partial = k
		}
	}
	if partial == "" {
		t.Fatalf("no incomplete snapshot after the crash: %v", snaps)
	}
	before, err := refine.Inspect(ctx, mem)
	if err != nil {
		t.Fatalf("Inspect beside an incomplete snapshot: %v", err)
	}
	cfg.Store = mem
	s2, err := refine.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("Open beside an incomplete snapshot: %v", err)
	}
	if _, err := s2.Rollback(ctx, refine.RollbackRequest{To: before.Round - 1, Reason: "after the crash", Adjustments: []string{"be concrete"}}); err != nil {
		t.Fatalf("rollback to round %d: %v", before.Round-1, err)
	}
	out, err := s2.Run(ctx)
	if err != nil || out.Status != refine.StatusComplete {
		t.Fatalf("Run after the crash = %+v, %v", out, err)
	}
	if _, err := mem.Get(ctx, partial); !errors.Is(err, refine.ErrNotFound) {
		t.Errorf("the incomplete %s is still there: %v", partial, err)
	}
}

func opKeys(ops []store.Op) []string {
	var ks []string
	for _, op := range ops {
		ks = append(ks, op.Key)
	}
	return ks
}
