package refine_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/store"
)

// hostileArchive is a gzipped tar whose one entry climbs out of its folder.
func hostileArchive(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	body := []byte("planted")
	if err := tw.WriteHeader(&tar.Header{Name: "../escape.md", Mode: 0o600, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	tw.Write(body)
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

// The end-of-session cleanup ("Delete all archives") never deletes an
// archive that does not read back safely: it stays for a person to look at.
func TestSessionEndCleanupKeepsUnsafeArchives(t *testing.T) {
	ctx := context.Background()
	eng := refinetest.Script(engineerDoc("GAP-TEST-001"))
	rev := refinetest.Script(reviewerDoc(1, "GAP-TEST-001"))
	asker := refinetest.Keys("2") // the cleanup question: Delete all archives
	cfg := refinetest.Config(eng, rev, asker)
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Store.Commit(ctx, store.Put("round_001_rolled_back_1.tar.gz", hostileArchive(t))); err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil || out.Status != refine.StatusComplete {
		t.Fatalf("Run = %+v, %v", out, err)
	}
	asked := asker.Asked()
	if len(asked) == 0 || asked[len(asked)-1].Kind != refine.KindRollback {
		t.Fatalf("the cleanup question was not asked: %+v", asked)
	}
	if _, err := cfg.Store.Get(ctx, "round_001_rolled_back_1.tar.gz"); err != nil {
		t.Errorf("the unsafe archive was deleted by the cleanup: %v", err)
	}
}

// finishCounter counts the commits a session makes after it reports its
// end.
type finishCounter struct {
	refine.Store
	// finished is set at the session's end, durable is set once the
	// commit that records it is made.
	finished, durable bool
	after             int
}

func (f *finishCounter) Commit(ctx context.Context, ops ...store.Op) error {
	if f.durable {
		f.after++
	}
	return f.Store.Commit(ctx, ops...)
}

func (f *finishCounter) Observe(e refine.Event) {
	switch {
	case e.Kind == refine.EventSessionFinished:
		f.finished = true
	case e.Kind == refine.EventCommitted && f.finished:
		f.durable = true
	}
}

// A session with no rollback archive settles the session-end cleanup in
// the commit that finishes it: nothing to ask, no commit of its own.
func TestSessionEndWithoutArchivesCommitsNothingMore(t *testing.T) {
	ctx := context.Background()
	eng := refinetest.Script(engineerDoc("GAP-TEST-001"))
	rev := refinetest.Script(reviewerDoc(1, "GAP-TEST-001"))
	asker := refinetest.Keys()
	cfg := refinetest.Config(eng, rev, asker)
	fc := &finishCounter{Store: cfg.Store}
	cfg.Store, cfg.Observer = fc, fc
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil || out.Status != refine.StatusComplete {
		t.Fatalf("Run = %+v, %v", out, err)
	}
	if fc.after != 0 {
		t.Errorf("%d commits after the session finished, want 0", fc.after)
	}
	for _, q := range asker.Asked() {
		if q.Kind == refine.KindRollback {
			t.Errorf("asked %q with no archive", q.Title)
		}
	}
}
