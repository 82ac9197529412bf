package fs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/store"
)

// gate holds the applier before it applies a commit, from the holdAt-th
// on, so a test can look at a Store whose commits are logged but not in
// the files. Its hook is called from the test's goroutine and the
// applier's; applying is only touched by the applier's.
type gate struct {
	holdAt   int
	applying int
	open     chan struct{} // closed to let the applier go on
	held     chan struct{} // a signal each time the applier stops at the gate
	fail     string        // a hook point that fails, like a crash there
	reached  chan string   // hook points other than the applier's, as they happen
	once     sync.Once
}

func newGate(holdAt int, fail string) *gate {
	return &gate{holdAt: holdAt, open: make(chan struct{}), held: make(chan struct{}, 64), fail: fail, reached: make(chan string, 64)}
}

func (g *gate) hook(point string) error {
	switch point {
	case "applying":
		if g.applying++; g.applying < g.holdAt {
			return nil
		}
		g.held <- struct{}{}
		<-g.open
	case "backlog full", "wait for the files":
		g.reached <- point
	}
	if point == g.fail {
		return errCrash
	}
	return nil
}

func (g *gate) release() { g.once.Do(func() { close(g.open) }) }

// waitHeld waits until the applier is held at the gate.
func (g *gate) waitHeld(t *testing.T) {
	t.Helper()
	<-g.held
}

// rawFiles reads the session's files straight from disk, without the
// overlay: what the applier has written so far.
func rawFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for p, v := range rawTree(t, dir) {
		if !strings.HasPrefix(p, ".refine") && !strings.HasSuffix(p, "/") {
			m[p] = v
		}
	}
	return m
}

// TestReadsSeePendingCommits holds the applier before a commit and checks
// that every read of the Store (Get, List, an append's base value, the
// layout check of a later commit) sees that commit, while the files do not
// hold it yet.
func TestReadsSeePendingCommits(t *testing.T) {
	dir := t.TempDir()
	g := newGate(2, "")
	s := mustOpen(t, dir, withHook(g.hook))
	defer s.Close()
	defer g.release()
	ctx := context.Background()
	first := map[string]string{"a.md": "1", "dir/b.md": "1", "f/g.md": "1", "log.md": "x", "keep.md": "k"}
	var ops []store.Op
	for k, v := range first {
		ops = append(ops, store.Put(k, []byte(v)))
	}
	if err := s.Commit(ctx, ops...); err != nil {
		t.Fatal(err)
	}
	if err := s.flush(); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx,
		store.Put("a.md", []byte("2")),
		store.Delete("dir/b.md"),
		store.Put("dir/c.md", []byte("2")),
		store.Delete("f/g.md"),
		store.Put("f", []byte("2")), // a folder of commit 1 turned into a key
		store.Append("log.md", []byte("y")),
	); err != nil {
		t.Fatal(err)
	}
	// The caller's values may change once Commit returns.
	v := []byte("3")
	if err := s.Commit(ctx, store.Put("e.md", v), store.Append("log.md", []byte("z")), store.Put("f", []byte("3"))); err != nil {
		t.Fatal(err)
	}
	v[0] = 'X'
	g.waitHeld(t) // at commit 2

	want := map[string]string{"a.md": "2", "dir/c.md": "2", "e.md": "3", "f": "3", "log.md": "xyz", "keep.md": "k"}
	if diff := cmp.Diff(want, readKeys(t, s)); diff != "" {
		t.Errorf("reads with commits 1-3 pending (-want +got):\n%s", diff)
	}
	if keys, err := s.List(ctx, "dir/"); err != nil || !slices.Equal(keys, []string{"dir/c.md"}) {
		t.Errorf("List(dir/) = %q, %v; want [dir/c.md]", keys, err)
	}
	for _, key := range []string{"dir/b.md", "f/g.md", "nothing.md"} {
		if _, err := s.Get(ctx, key); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Get(%s) error = %v, want ErrNotFound", key, err)
		}
	}
	// Commit 3 put f again, a key in the overlay while the files still
	// hold the folder f/ with f/g.md: judged by the overlay, and accepted.
	// A key below a key no pending commit touches is refused without
	// waiting for the files.
	if err := s.Commit(ctx, store.Put("keep.md/x", nil)); !errors.Is(err, store.ErrInvalidKey) {
		t.Errorf("Commit(put keep.md/x): error = %v, want ErrInvalidKey", err)
	}
	if diff := cmp.Diff(first, rawFiles(t, dir)); diff != "" {
		t.Errorf("files while the applier is held (-want +got):\n%s", diff)
	}

	// A put whose layout depends on pending keys (f/h.md: f is a pending
	// key, so f/h.md needs f deleted in the same commit, and the files
	// still hold f as a folder) waits for the files, then is judged.
	done := make(chan error, 1)
	go func() { done <- s.Commit(ctx, store.Put("f/h.md", nil)) }()
	if p := <-g.reached; p != "wait for the files" {
		t.Fatalf("hook point %q, want the commit to wait for the files", p)
	}
	g.release()
	if err := <-done; !errors.Is(err, store.ErrInvalidKey) || !strings.Contains(err.Error(), `"f" is a key`) {
		t.Errorf("Commit(put f/h.md) with f a pending key: error = %v, want ErrInvalidKey naming f", err)
	}
	if err := s.flush(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, rawFiles(t, dir)); diff != "" {
		t.Errorf("files once applied (-want +got):\n%s", diff)
	}
	if n := s.overlay.len(); n != 0 {
		t.Errorf("overlay holds %d keys once every commit is applied, want none", n)
	}
}

// TestBacklogIsBounded holds the applier: a Commit past the bound waits
// for it, and goes on once it moves.
func TestBacklogIsBounded(t *testing.T) {
	dir := t.TempDir()
	g := newGate(1, "")
	s := mustOpen(t, dir, withHook(g.hook))
	defer s.Close()
	defer g.release()
	ctx := context.Background()
	put := func(i int) error {
		return s.Commit(ctx, store.Put("state.json", []byte(fmt.Sprint(i))), store.Put(fmt.Sprintf("r/%d.md", i), nil))
	}
	for i := 1; i <= maxBacklogCommits; i++ {
		if err := put(i); err != nil {
			t.Fatal(err)
		}
	}
	g.waitHeld(t)
	select {
	case p := <-g.reached:
		t.Fatalf("hook point %q before the backlog was full", p)
	default:
	}
	done := make(chan error, 1)
	go func() { done <- put(maxBacklogCommits + 1) }()
	if p := <-g.reached; p != "backlog full" {
		t.Fatalf("hook point %q, want the commit to wait for room", p)
	}
	g.release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := s.flush(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "state.json")); string(b) != fmt.Sprint(maxBacklogCommits+1) {
		t.Errorf("state.json on disk = %q, want the last commit's", b)
	}

	// The byte bound: one commit may exceed it, a second one waits.
	a := newApplier()
	a.queue, a.bytes = []queued{{size: maxBacklogBytes}}, maxBacklogBytes
	if !a.full() {
		t.Error("a backlog of maxBacklogBytes is not full")
	}
	a.queue, a.bytes = nil, 0
	if a.full() {
		t.Error("an empty backlog is full")
	}
}

// TestApplyFailureBreaksTheStore fails an apply in the background: the
// Commit had returned nil (the commit is durable), later calls refuse to
// work, Close reports the failure without checkpointing, and the next
// Open replays the failed commit and the ones queued behind it.
func TestApplyFailureBreaksTheStore(t *testing.T) {
	dir := t.TempDir()
	seed(t, dir)
	g := newGate(1, "put round_002/summary.md")
	s := mustOpen(t, dir, withHook(g.hook))
	ctx := context.Background()
	if err := s.Commit(ctx, secondCommit...); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	g.waitHeld(t)
	if err := s.Commit(ctx, store.Put("third.md", []byte("3"))); err != nil {
		t.Fatalf("Commit queued behind: %v", err)
	}
	g.release()
	if err := s.flush(); !errors.Is(err, errCrash) {
		t.Fatalf("flush error = %v, want the simulated crash", err)
	}
	for name, err := range map[string]error{
		"Get":    func() error { _, err := s.Get(ctx, "state.json"); return err }(),
		"List":   func() error { _, err := s.List(ctx, ""); return err }(),
		"Commit": s.Commit(ctx, store.Put("later.md", nil)),
	} {
		if err == nil || !strings.Contains(err.Error(), "open the folder again") {
			t.Errorf("%s after a failed apply: error = %v, want one asking to reopen", name, err)
		}
	}
	if err := s.Close(); !errors.Is(err, errCrash) {
		t.Errorf("Close error = %v, want the failed apply", err)
	}
	select {
	case <-s.apl.done:
	default:
		t.Error("the applier is still running after Close")
	}
	if recs := records(t, dir); !slices.Equal(recs, []string{recordName(2), recordName(3)}) {
		t.Errorf("log after Close = %q, want records 2 and 3 kept", recs)
	}
	want := map[string]string{"third.md": "3"}
	for k, v := range after {
		want[k] = v
	}
	if diff := cmp.Diff(want, snapshot(t, dir)); diff != "" {
		t.Errorf("after reopening (-want +got):\n%s", diff)
	}
}

// TestCloseAppliesTheBacklog closes a Store whose applier is held with
// commits queued: Close waits for them and stops the applier; the next
// Open checkpoints them.
func TestCloseAppliesTheBacklog(t *testing.T) {
	dir := t.TempDir()
	g := newGate(1, "")
	s := mustOpen(t, dir, withHook(g.hook))
	ctx := context.Background()
	for i := 1; i <= 3; i++ {
		if err := s.Commit(ctx, store.Put("state.json", []byte(fmt.Sprint(i)))); err != nil {
			t.Fatal(err)
		}
	}
	g.waitHeld(t)
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	g.release()
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.apl.done:
	default:
		t.Error("the applier is still running after Close")
	}
	if diff := cmp.Diff(map[string]string{"state.json": "3"}, rawFiles(t, dir)); diff != "" {
		t.Errorf("files after Close (-want +got):\n%s", diff)
	}
	// The records stay in the log, durable, for the checkpoint the
	// thresholds call for; the next Open finds the files holding them.
	if err := mustOpen(t, dir).Close(); err != nil {
		t.Fatal(err)
	}
	if got := logFiles(t, dir); !slices.Equal(got, []string{logName}) {
		t.Errorf("log after the next Open = %q, want only the log file", got)
	}
	if recs, m := records(t, dir), markerOf(t, dir); len(recs) != 3 || m != 0 {
		t.Errorf("log after the next Open = %q, marker %d; want the 3 records, marker 0", recs, m)
	}
	if diff := cmp.Diff(map[string]string{"state.json": "3"}, rawFiles(t, dir)); diff != "" {
		t.Errorf("files after the next Open (-want +got):\n%s", diff)
	}
}

// TestCheckpointCoversAppliedCommitsOnly reaches the checkpoint threshold
// and then logs later commits that are not applied: the marker names the
// last applied commit and the later records stay for the next Open.
func TestCheckpointCoversAppliedCommitsOnly(t *testing.T) {
	dir := t.TempDir()
	// The applier checkpoints commits 1 and 2 once commit 2 is applied
	// (nothing else is queued), stops at commit 3, and fails there once
	// released, like a crash.
	g := newGate(3, "applying")
	s := mustOpen(t, dir, withCheckpointThresholds(2, 1<<30), withHook(g.hook))
	ctx := context.Background()
	for i := 1; i <= 4; i++ {
		ops := []store.Op{store.Put("state.json", []byte(fmt.Sprint(i)))}
		var err error
		if i == 2 {
			err = commitApplied(s, ops...) // flush waits for the checkpoint too
		} else {
			err = s.Commit(ctx, ops...)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	g.waitHeld(t)
	if m := markerOf(t, dir); m != 2 {
		t.Errorf("marker with commits 3 and 4 not applied = %d, want 2", m)
	}
	if recs := records(t, dir); !slices.Equal(recs, []string{recordName(3), recordName(4)}) {
		t.Errorf("log = %q, want records 3 and 4 kept", recs)
	}
	g.release()
	if err := s.flush(); !errors.Is(err, errCrash) {
		t.Fatalf("flush error = %v, want the simulated crash", err)
	}
	s.abandon() // commits 3 and 4 are in the log only
	if got := snapshot(t, dir); !cmp.Equal(got, map[string]string{"state.json": "4"}) {
		t.Errorf("after reopening: %v, want commit 4's state", got)
	}
}

// TestCheckpointWaitsForTheQueue: a checkpoint due while commits are
// queued waits until the queue is empty, so that it covers every frame
// and the log file starts again from its start, unless the log reaches
// twice the thresholds first.
func TestCheckpointWaitsForTheQueue(t *testing.T) {
	dir := t.TempDir()
	hold := make(chan struct{})
	var s *Store
	var marked []uint64 // the applier's only
	applying := 0
	s = mustOpen(t, dir, withCheckpointThresholds(1, 1<<30), withHook(func(p string) error {
		switch p {
		case "applying":
			if applying++; applying == 1 {
				<-hold // until commits 2 and 3 are queued behind commit 1
			}
		case "marked":
			marked = append(marked, s.wal.last)
		}
		return nil
	}))
	ctx := context.Background()
	for i := 1; i <= 3; i++ {
		if err := s.Commit(ctx, store.Put("state.json", []byte(fmt.Sprint(i)))); err != nil {
			t.Fatal(err)
		}
	}
	close(hold)
	if err := s.flush(); err != nil {
		t.Fatal(err)
	}
	// Commit 1 applied: due, but 2 and 3 are queued; commit 2: twice the
	// threshold, so it checkpoints anyway; commit 3: due, nothing queued.
	if !slices.Equal(marked, []uint64{2, 3}) {
		t.Errorf("checkpoints at records %v, want [2 3]", marked)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if recs, m := records(t, dir), markerOf(t, dir); len(recs) != 0 || m != 3 {
		t.Errorf("after Close: records %q, marker %d; want none and 3", recs, m)
	}
}

// TestBackendSeesPendingCommits holds a Backend writer's applier: the
// Backend's listing and its views, in the same process, read the commits
// not yet in the files through the writer.
func TestBackendSeesPendingCommits(t *testing.T) {
	g := newGate(2, "")
	b, err := OpenBackend(t.TempDir(), WithStoreOptions(NoSync(), withHook(g.hook)), WithIDs(func() string { return "s1" }))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	id, st, err := b.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer st.(interface{ Close() error }).Close()
	defer g.release() // before Close, which waits for the applier
	if err := st.Commit(ctx, store.Put(store.SummaryKey, []byte(`{"round":1}`)), store.Put("old.md", nil)); err != nil {
		t.Fatal(err)
	}
	if err := st.(*backendStore).flush(); err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(ctx, store.Put(store.SummaryKey, []byte(`{"round":3}`)), store.Delete("old.md"), store.Put("new.md", nil)); err != nil {
		t.Fatal(err)
	}
	g.waitHeld(t) // commit 2 is in the log only
	infos, err := b.Sessions(ctx)
	if err != nil || len(infos) != 1 || infos[0].Round != 3 {
		t.Errorf("Sessions = %+v, %v; want session %s at round 3", infos, err, id)
	}
	v, err := b.View(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	defer v.(interface{ Close() error }).Close()
	if got, err := v.Get(ctx, store.SummaryKey); err != nil || string(got) != `{"round":3}` {
		t.Errorf("View Get = %q, %v; want round 3", got, err)
	}
	if keys, err := v.List(ctx, ""); err != nil || !slices.Equal(keys, []string{"new.md", store.SummaryKey}) {
		t.Errorf("View List = %q, %v; want [new.md %s]", keys, err, store.SummaryKey)
	}
	// An outside reader sees the files, a commit behind.
	ro, err := OpenReadOnly(b.Dir(id))
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if keys, err := ro.List(ctx, ""); err != nil || !slices.Equal(keys, []string{"old.md", store.SummaryKey}) {
		t.Errorf("OpenReadOnly List = %q, %v; want the files as commit 1 left them", keys, err)
	}
}
