package sqlkvtest

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/memory"
)

// recorder is a Store that records what each commit hands over (kind,
// key, source, bytes) and forwards the capabilities of the Store it wraps,
// as a host's wrapper does.
type recorder struct {
	store.Store
	mu  sync.Mutex
	ops []string
}

func (r *recorder) Commit(ctx context.Context, ops ...store.Op) error {
	r.mu.Lock()
	for _, op := range ops {
		r.ops = append(r.ops, fmt.Sprintf("%d %s<%s %d", op.Kind, op.Key, op.From, len(op.Value)))
	}
	r.mu.Unlock()
	return r.Store.Commit(ctx, ops...)
}

func (r *recorder) Appends() bool { a, ok := r.Store.(store.Appender); return ok && a.Appends() }
func (r *recorder) Copies() bool  { c, ok := r.Store.(store.Copier); return ok && c.Copies() }
func (r *recorder) SessionID() string {
	i, _ := r.Store.(store.Identified)
	return i.SessionID()
}

func (r *recorder) count(kind store.OpKind) int {
	n := 0
	for _, op := range r.ops {
		if op[0] == byte('0'+kind) {
			n++
		}
	}
	return n
}

// runSession runs a 5-round session of one gap a round on st.
func runSession(t *testing.T, st store.Store) {
	t.Helper()
	gaps := make([]gap.Gap, 5)
	for i := range gaps {
		gaps[i] = gap.Gap{ID: gap.ID(fmt.Sprintf("GAP-SQL-%03d", i+1)), Title: "a gap", Severity: gap.Medium}
	}
	eng := refinetest.Func(func(ctx context.Context, req llm.Request) (llm.Response, error) {
		return llm.Response{Content: refinetest.EngineerOutput(req.Gaps...)}, nil
	})
	rev := refinetest.Func(func(ctx context.Context, req llm.Request) (llm.Response, error) {
		return llm.Response{Content: refinetest.ReviewerOutput(req.Round, req.Gaps)}, nil
	})
	cfg := refinetest.Config(eng, rev, refine.DefaultAsker{}, gaps...)
	cfg.GapsPerRound, cfg.Store = 1, st
	s, err := refine.New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := s.Run(t.Context()); err != nil || out.Round != 5 {
		t.Fatalf("Run = %+v, %v; want 5 rounds", out, err)
	}
}

// SessionAppendsAndCopies runs a session on a writer of b and the same
// session on store/memory, a Store that has always appended and copied:
// the session hands b's writer appends and copies, the same ops with the
// same bytes as memory gets, and b then holds what memory does, read back
// through a View (no writer's cache).
func SessionAppendsAndCopies(t *testing.T, b store.Backend) {
	ctx := t.Context()
	id, st, err := b.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	onSQL := &recorder{Store: st}
	runSession(t, onSQL)
	st.(io.Closer).Close()

	mb := memory.NewBackend()
	defer mb.Close()
	mst, err := mb.CreateNamed(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	inMemory := &recorder{Store: mst}
	runSession(t, inMemory)

	if onSQL.count(store.OpAppend) == 0 || onSQL.count(store.OpCopy) == 0 {
		t.Errorf("the session handed over %d appends and %d copies; want both used", onSQL.count(store.OpAppend), onSQL.count(store.OpCopy))
	}
	if diff := cmp.Diff(inMemory.ops, onSQL.ops); diff != "" {
		t.Errorf("ops handed over differ from those handed to memory (-memory +sql):\n%s", diff)
	}
	view, err := b.View(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	defer view.(io.Closer).Close()
	if diff := cmp.Diff(dumpStore(t, mst), dumpStore(t, view)); diff != "" {
		t.Errorf("the session in the database differs from the one in memory (-memory +sql):\n%s", diff)
	}
}

func dumpStore(t *testing.T, st store.Store) map[string]string {
	t.Helper()
	keys, err := st.List(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]string{}
	for _, k := range keys {
		all[k] = MustGet(t, st, k)
	}
	return all
}
