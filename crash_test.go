package refine_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/memory"
)

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
