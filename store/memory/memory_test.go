package memory_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/memory"
	"github.com/refine-spec/refine/storetest"
)

func TestConformance(t *testing.T) {
	storetest.TestStore(t, func(*testing.T) store.Store { return memory.New() })
}

func TestErrorsNameTheKey(t *testing.T) {
	s := memory.New()
	ctx := t.Context()
	if err := s.Commit(ctx, store.Put("round_003/engineer.md", []byte("x"))); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"get absent", func() error { _, err := s.Get(ctx, "round_003/reviewer.md"); return err }(), "memory: get round_003/reviewer.md: not found"},
		{"key under a key", s.Commit(ctx, store.Put("round_003/engineer.md/x", nil)), `memory: commit round_003/engineer.md/x: invalid store key: "round_003/engineer.md" is a key`},
		{"key over a folder", s.Commit(ctx, store.Put("round_003", nil)), `memory: commit round_003: invalid store key: "round_003/engineer.md" is stored below it`},
		{"bad prefix", func() error { _, err := s.List(ctx, "../"); return err }(), `memory: list prefix "../": invalid store key`},
		{"reserved prefix", func() error { _, err := s.List(ctx, ".refine-wal/"); return err }(), `memory: list prefix ".refine-wal/": invalid store key ".refine-wal": names starting with ".refine" are reserved`},
	}
	for _, tc := range tests {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: error = %v, want it to contain %q", tc.name, tc.err, tc.want)
		}
	}
}

// A Faulty-wrapped memory store shows the rollback contract: a failed
// commit leaves the previous state.
func TestFaultyCommitLeavesPreviousState(t *testing.T) {
	f := &storetest.Faulty{Store: memory.New(), FailAt: 2}
	ctx := t.Context()
	if err := f.Commit(ctx, store.Put("state.json", []byte("v1"))); err != nil {
		t.Fatal(err)
	}
	err := f.Commit(ctx, store.Put("state.json", []byte("v2")), store.Put("round_001/summary.md", []byte("s")))
	if !errors.Is(err, storetest.ErrInjected) {
		t.Fatalf("second commit error = %v, want ErrInjected", err)
	}
	if got, err := f.Get(ctx, "state.json"); err != nil || string(got) != "v1" {
		t.Errorf("after the failed commit, state.json = %q, %v; want v1", got, err)
	}
	if _, err := f.Get(ctx, "round_001/summary.md"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("after the failed commit, summary.md error = %v, want ErrNotFound", err)
	}
}

func BenchmarkCommit(b *testing.B) {
	s := memory.New()
	ctx := b.Context()
	ops := benchOps()
	b.SetBytes(int64(4 * len(ops[0].Value)))
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Commit(ctx, ops...); err != nil {
			b.Fatal(err)
		}
	}
}

// benchOps is one round's worth of writes: four 4 KB files.
func benchOps() []store.Op {
	v := []byte(strings.Repeat("x", 4096))
	return []store.Op{
		store.Put("round_003/engineer.md", v),
		store.Put("round_003/reviewer.md", v),
		store.Put("round_003/summary.md", v),
		store.Put("state.json", v),
	}
}
