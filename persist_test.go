package refine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/fs"
	"github.com/refine-spec/refine/store/memory"
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

// damagedSessions returns two long sessions in memory: one that ended
// (state.json is the newest snapshot, older ones are kept for backups)
// and one whose process died just after a background snapshot completed
// (a snapshot under snapshots/ is the newest, state.json older).
func damagedSessions(t *testing.T) map[string]*memory.Store {
	t.Helper()
	ctx := context.Background()
	out := map[string]*memory.Store{}

	ended := memory.New()
	s, err := refine.New(ctx, longSession(t, &commitLog{Store: ended}))
	if err != nil {
		t.Fatal(err)
	}
	if o, err := s.Run(ctx); err != nil || o.Status != refine.StatusComplete {
		t.Fatalf("Run = %+v, %v", o, err)
	}
	out["ended"] = ended

	died := memory.New()
	completed := false
	log := &commitLog{Store: died, crashAt: func(ops []store.Op) bool {
		if completed {
			return true
		}
		var chunk, drop bool
		for _, op := range ops {
			chunk = chunk || op.Kind == store.OpAppend && strings.HasPrefix(op.Key, "snapshots/")
			drop = drop || op.Kind == store.OpDelete && strings.HasPrefix(op.Key, "journal/")
		}
		completed = chunk && drop // the last chunk drops the records it holds
		return false
	}}
	s, err = refine.New(ctx, longSession(t, log))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(ctx); !errors.Is(err, errCrashed) {
		t.Fatalf("Run = %v, want the crash after a background snapshot", err)
	}
	out["died after a snapshot"] = died
	return out
}

// flipOffsets returns the offsets of a file of n bytes to flip a bit at:
// all of its first 80 (the checksum header and the first members), then
// about 60 spread over the rest, and the last 3.
func flipOffsets(n int) []int {
	var offs []int
	for i := 0; i < n && i < 80; i++ {
		offs = append(offs, i)
	}
	for i := 80; i < n-3; i += max(1, (n-83)/60) {
		offs = append(offs, i)
	}
	for i := max(80, n-3); i < n; i++ {
		offs = append(offs, i)
	}
	return offs
}

// stateFiles are the keys of the whole state documents in st: state.json
// and the snapshots.
func stateFiles(t *testing.T, st refine.Store) []string {
	t.Helper()
	keys, err := st.List(context.Background(), "snapshots/")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"state.json"}, keys...)
}

// A flipped bit, or garbage, in state.json, a snapshot or a journal
// record is refused as corrupt, naming the file, or changes nothing the
// session reads: it never makes a reader start from an older snapshot and
// report an older state (issue #24: 8 of 30 flips of state.json did), nor
// applies a damaged record.
func TestDamagedStateNeverRollsBack(t *testing.T) {
	ctx := context.Background()
	for name, mem := range damagedSessions(t) {
		want, err := refine.Inspect(ctx, mem)
		if err != nil {
			t.Fatal(err)
		}
		files := stateFiles(t, mem)
		if name == "died after a snapshot" && len(files) < 2 {
			t.Fatalf("%s: no snapshot under snapshots/: %v", name, files)
		}
		check := func(t *testing.T, what, key string, got refine.Status, err error) {
			t.Helper()
			switch {
			case err != nil && !errors.Is(err, refine.ErrCorrupt):
				t.Errorf("%s: %v, want ErrCorrupt", what, err)
			case err != nil && !strings.Contains(err.Error(), key):
				t.Errorf("%s: the error does not name %s: %v", what, key, err)
			case err == nil:
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s: read a different state (-want +got):\n%s", what, diff)
				}
			}
		}
		t.Run(name+"/memory", func(t *testing.T) {
			segments, err := mem.List(ctx, "journal/")
			if err != nil || len(segments) == 0 {
				t.Fatalf("no journal segments: %v", err)
			}
			// The journal's records carry a checksum too: the last segment
			// (the records a reader applies) is flipped as well.
			for _, key := range append(slices.Clone(files), segments[len(segments)-1]) {
				orig, err := mem.Get(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				damaged := map[string][]byte{"garbage": []byte("garbage\n"), "empty": {}}
				for _, i := range flipOffsets(len(orig)) {
					b := []byte(string(orig))
					b[i] ^= 1 << (i % 8)
					damaged[fmt.Sprintf("bit %d of byte %d", i%8, i)] = b
				}
				for what, b := range damaged {
					if err := mem.Commit(ctx, store.Put(key, b)); err != nil {
						t.Fatal(err)
					}
					got, err := refine.Inspect(ctx, mem)
					check(t, key+": "+what, key, got, err)
				}
				if err := mem.Commit(ctx, store.Put(key, orig)); err != nil {
					t.Fatal(err)
				}
			}
		})
		t.Run(name+"/folder", func(t *testing.T) {
			dir := t.TempDir()
			keys, _ := mem.List(ctx, "")
			for _, k := range keys {
				b, _ := mem.Get(ctx, k)
				p := filepath.Join(dir, filepath.FromSlash(k))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			inspect := func() (refine.Status, error) {
				st, err := fs.OpenReadOnly(dir)
				if err != nil {
					t.Fatal(err)
				}
				defer st.Close()
				return refine.Inspect(ctx, st)
			}
			if got, err := inspect(); err != nil || !cmp.Equal(want, got) {
				t.Fatalf("the folder copy reads differently: %v", err)
			}
			for _, key := range files {
				p := filepath.Join(dir, filepath.FromSlash(key))
				orig, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				offs := []int{-1}
				for n, i := range flipOffsets(len(orig)) {
					if n%4 == 0 {
						offs = append(offs, i)
					}
				}
				for _, i := range offs {
					b := []byte("garbage\n") // `echo garbage > state.json`
					if i >= 0 {
						b = []byte(string(orig))
						b[i] ^= 1 << (i % 8)
					}
					if err := os.WriteFile(p, b, 0o644); err != nil {
						t.Fatal(err)
					}
					got, err := inspect()
					check(t, fmt.Sprintf("%s: byte %d flipped (-1: garbage)", key, i), key, got, err)
				}
				if err := os.WriteFile(p, orig, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// crashingStore fails every Commit from the n-th on, as if the process died
// there: nothing of that commit is applied.
type crashingStore struct {
	refine.Store
	mu      sync.Mutex
	commits int
	failAt  int
}

var errCrash = errors.New("simulated crash")

func (c *crashingStore) Commit(ctx context.Context, ops ...store.Op) error {
	c.mu.Lock()
	c.commits++
	n := c.commits
	c.mu.Unlock()
	if c.failAt > 0 && n >= c.failAt {
		return errCrash
	}
	return c.Store.Commit(ctx, ops...)
}

// TestNoRoleCallRepeatedAfterCrash crashes a two-round session at every
// commit in turn, resumes it on the surviving store, and checks each role
// call was paid at most once more than in a clean run — and only when the
// crash hit before that call's response was journaled.
func TestNoRoleCallRepeatedAfterCrash(t *testing.T) {
	ctx := context.Background()
	// Roles answer by situation, like a real backend: a call repeated
	// because its response was not journaled gets an equivalent answer.
	script := func() (*refinetest.Role, *refinetest.Role) {
		eng := refinetest.Func(func(ctx context.Context, req refine.Request) (refine.Response, error) {
			switch {
			case req.Round == 1 && req.Attempt == 1:
				return refine.Response{Content: "bad format"}, nil
			case req.Round == 1:
				return refine.Response{Content: engineerDoc("GAP-TEST-001")}, nil
			}
			return refine.Response{Content: revisedDoc("GAP-TEST-001", "ISSUE-R1-001")}, nil
		})
		rev := refinetest.Func(func(ctx context.Context, req refine.Request) (refine.Response, error) {
			if req.Round == 1 {
				return refine.Response{Content: reviewerDoc(1, "GAP-TEST-001", "HIGH: unclear")}, nil
			}
			return refine.Response{Content: reviewerDoc(req.Round, "GAP-TEST-001")}, nil
		})
		return eng, rev
	}
	// A clean run gives the call and commit counts.
	eng, rev := script()
	clean := &crashingStore{Store: memory.New()}
	cfg := refinetest.Config(eng, rev, auto())
	cfg.Store = clean
	if _, out := run(t, cfg); out.Status != refine.StatusComplete {
		t.Fatalf("clean run: %+v", out)
	}
	wantCalls := eng.CallCount() + rev.CallCount()
	if wantCalls != 5 {
		t.Fatalf("clean run made %d calls, want 5", wantCalls)
	}
	total := clean.commits

	for failAt := 2; failAt <= total; failAt++ {
		eng, rev := script()
		mem := memory.New()
		cfg := refinetest.Config(eng, rev, auto())
		cfg.Store = &crashingStore{Store: mem, failAt: failAt}
		s, err := refine.New(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Run(ctx); !errors.Is(err, errCrash) {
			t.Fatalf("failAt %d: Run = %v, want the crash", failAt, err)
		}
		// "Restart": a new Session on what the store kept, same roles (their
		// scripts continue where they stopped, like a real backend would).
		cfg.Store = mem
		s2, err := refine.Open(ctx, cfg)
		if err != nil {
			t.Fatalf("failAt %d: Open: %v", failAt, err)
		}
		out, err := s2.Run(ctx)
		if err != nil || out.Status != refine.StatusComplete {
			t.Fatalf("failAt %d: resumed Run = %+v, %v", failAt, out, err)
		}
		got := eng.CallCount() + rev.CallCount()
		if got > wantCalls+1 {
			t.Errorf("failAt %d: %d role calls, want at most %d (a journaled response was paid twice)", failAt, got, wantCalls+1)
		}
	}
}

// TestNoRepeatAcrossDeferredPause: a question deferred mid-round, answered
// in a new Session, must not cause any role call to be repeated.
func TestNoRepeatAcrossDeferredPause(t *testing.T) {
	ctx := context.Background()
	eng := refinetest.Script("bad 1", "bad 2", "bad 3", engineerDoc("GAP-TEST-001"))
	rev := refinetest.Script(reviewerDoc(1, "GAP-TEST-001"))
	cfg := refinetest.Config(eng, rev, refine.DeferAsker{})
	s, _ := refine.New(ctx, cfg)
	out, err := s.Run(ctx)
	if err != nil || out.Status != refine.StatusPaused {
		t.Fatalf("run = %+v, %v", out, err)
	}
	for i := 0; i < 2; i++ { // running again without an answer stays paused, calls nothing
		out, err = s.Run(ctx)
		if err != nil || out.Status != refine.StatusPaused || eng.CallCount() != 3 {
			t.Fatalf("re-run %d = %+v, %v, calls %d", i, out, err, eng.CallCount())
		}
	}
	s2, err := refine.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Answer(ctx, out.Pending[0].ID, refine.Answer{Key: "3", Text: "use headers"}); err != nil {
		t.Fatal(err)
	}
	out, err = s2.Run(ctx)
	if err != nil || out.Status != refine.StatusComplete {
		t.Fatalf("resumed = %+v, %v", out, err)
	}
	if eng.CallCount() != 4 || rev.CallCount() != 1 {
		t.Errorf("calls engineer %d reviewer %d, want 4 and 1", eng.CallCount(), rev.CallCount())
	}
}
