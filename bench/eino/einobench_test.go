package einobench

import (
	"bytes"
	"testing"
)

func TestFileStore(t *testing.T) {
	ctx := t.Context()
	s := &FileStore{Dir: t.TempDir()}
	if _, ok, err := s.Get(ctx, "a"); ok || err != nil {
		t.Fatalf("Get of a missing checkpoint = %t, %v; want false, nil", ok, err)
	}
	for _, v := range []string{"first, longer", "second"} {
		if err := s.Set(ctx, "a", []byte(v)); err != nil {
			t.Fatal(err)
		}
		got, ok, err := s.Get(ctx, "a")
		if !ok || err != nil || !bytes.Equal(got, []byte(v)) {
			t.Fatalf("Get = %q, %t, %v; want %q", got, ok, err, v)
		}
	}
	if n := s.Sets.Load(); n != 2 {
		t.Errorf("Sets = %d, want 2", n)
	}
	for _, bad := range []string{"", "..", "x/y"} {
		if err := s.Set(ctx, bad, nil); err == nil {
			t.Errorf("Set(%q) succeeded, want an error", bad)
		}
	}
}

// Both sessions play Rounds rounds of two calls; eino checkpoints after
// each call that another follows, and resumes from the file each time.
func TestSessions(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	r, err := RunRefine(ctx, dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.Wall <= 0 || r.InCalls <= 0 || r.InCalls > r.Wall {
		t.Errorf("refine: wall %v, in calls %v", r.Wall, r.InCalls)
	}
	e, err := RunEino(ctx, dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	// After each call but the last, whose result ends the run.
	if e.Checkpoints != 2*Rounds-1 {
		t.Errorf("eino wrote %d checkpoints, want one after each of the first %d calls", e.Checkpoints, 2*Rounds-1)
	}
	if e.Wall <= 0 || e.InCalls <= 0 || e.InCalls > e.Wall {
		t.Errorf("eino: wall %v, in calls %v", e.Wall, e.InCalls)
	}
}
