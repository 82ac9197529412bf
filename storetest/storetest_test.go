package storetest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/storetest"
)

// flawed is a reference Store with one deliberate flaw switched on. With
// no flaw it is correct, which TestReference checks, so a failure with a
// flaw is the flaw's doing.
type flawed struct {
	flaw string
	mu   sync.RWMutex
	m    map[string][]byte
}

func newFlawed(flaw string) *flawed { return &flawed{flaw: flaw, m: map[string][]byte{}} }

func (s *flawed) has(flaw string) bool { return s.flaw == flaw }

func (s *flawed) Get(ctx context.Context, key string) ([]byte, error) {
	if err := ctx.Err(); err != nil && !s.has("ignores context") {
		return nil, err
	}
	if err := store.ValidKey(key); err != nil && !s.has("accepts any key") && !s.reservedAccepted(key) {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, ok := s.m[key]
	switch {
	case !ok && s.has("absent is empty"):
		return nil, nil
	case !ok:
		return nil, fmt.Errorf("get %s: %w", key, store.ErrNotFound)
	case s.has("aliases values"):
		return v, nil
	}
	return append([]byte{}, v...), nil
}

func (s *flawed) List(ctx context.Context, prefix string) ([]string, error) {
	if err := ctx.Err(); err != nil && !s.has("ignores context") {
		return nil, err
	}
	if !s.has("prefix unchecked") && !s.has("accepts any key") {
		if err := store.ValidPrefix(prefix); err != nil && !s.reservedAccepted(strings.TrimSuffix(prefix, "/")) {
			return nil, err
		}
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var keys []string
	for k := range s.m {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if s.has("unsorted list") {
		sort.Sort(sort.Reverse(sort.StringSlice(keys)))
	}
	return keys, nil
}

func (s *flawed) Commit(ctx context.Context, ops ...store.Op) error {
	if err := ctx.Err(); err != nil && !s.has("ignores context") {
		return err
	}
	switch {
	case s.has("partial commit"):
		// Validates each op only when it gets to it.
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, op := range ops {
			if err := store.ValidOps([]store.Op{op}); err != nil {
				return err
			}
			s.applyLocked(op)
		}
		return nil
	case s.has("torn commit"):
		// Applies each op under its own lock, yielding in between.
		if err := store.ValidOps(ops); err != nil {
			return err
		}
		for _, op := range ops {
			s.mu.Lock()
			s.applyLocked(op)
			s.mu.Unlock()
			for range 100 {
				runtime.Gosched()
			}
		}
		return nil
	}
	for _, op := range ops {
		if err := store.ValidOps([]store.Op{op}); err != nil && !s.has("accepts any key") && !s.reservedAccepted(op.Key) {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.has("no folder check") {
		if err := s.checkFolders(ops); err != nil {
			return err
		}
	}
	if s.has("first write wins") {
		seen := map[string]bool{}
		for _, op := range ops {
			if !seen[op.Key] {
				seen[op.Key] = true
				s.applyLocked(op)
			}
		}
		return nil
	}
	for _, op := range ops {
		if op.Kind == store.OpDelete && s.has("delete absent fails") {
			if _, ok := s.m[op.Key]; !ok {
				return fmt.Errorf("delete %s: %w", op.Key, store.ErrNotFound)
			}
		}
		s.applyLocked(op)
	}
	return nil
}

// reservedAccepted reports whether the "accepts reserved names" flaw lets
// key through: a key that would be valid but for its reserved first
// segment, as a Store written before names were reserved would have it.
func (s *flawed) reservedAccepted(key string) bool {
	if !s.has("accepts reserved names") || !strings.HasPrefix(strings.ToLower(key), ".refine") {
		return false
	}
	return store.ValidKey("x"+key) == nil
}

func (s *flawed) applyLocked(op store.Op) {
	if op.Kind == store.OpDelete {
		delete(s.m, op.Key)
		return
	}
	v := append([]byte{}, op.Value...)
	switch {
	case s.has("aliases values"):
		v = op.Value
	case s.has("truncates large") && len(v) > 1<<20:
		v = v[:1<<20]
	}
	s.m[op.Key] = v
}

// checkFolders is the reference key/folder rule, done the simple way: on a
// copy of the state the commit would leave.
func (s *flawed) checkFolders(ops []store.Op) error {
	next := map[string]bool{}
	for k := range s.m {
		next[k] = true
	}
	for _, op := range ops {
		next[op.Key] = op.Kind == store.OpPut
	}
	for k, ok := range next {
		for i := 0; ok && i < len(k); i++ {
			if k[i] == '/' && next[k[:i]] {
				return fmt.Errorf("%w: %q is below key %q", store.ErrInvalidKey, k, k[:i])
			}
		}
	}
	return nil
}

func TestReference(t *testing.T) {
	storetest.TestStore(t, func(*testing.T) store.Store { return newFlawed("") })
}

func TestFaultyPassesThrough(t *testing.T) {
	storetest.TestStore(t, func(*testing.T) store.Store {
		return &storetest.Faulty{Store: newFlawed(""), CountAll: true}
	})
}

// TestFlawedChild runs one subtest of the suite against a flawed store, in
// a child process, for TestSuiteCatchesFlaws.
func TestFlawedChild(t *testing.T) {
	flaw := os.Getenv("STORETEST_FLAW")
	if flaw == "" {
		t.Skip("helper process for TestSuiteCatchesFlaws")
	}
	storetest.TestStore(t, func(*testing.T) store.Store { return newFlawed(flaw) })
}

// TestSuiteCatchesFlaws proves each subtest can fail: the subtest aimed at
// a flaw must fail on a store that has it. A failing TestStore fails its
// caller's test, so each run happens in a child process.
func TestSuiteCatchesFlaws(t *testing.T) {
	tests := []struct{ flaw, subtest string }{
		{"absent is empty", "Empty"},
		{"delete absent fails", "Delete"},
		{"first write wins", "CommitOrder"},
		{"aliases values", "ValuesCopied"},
		{"truncates large", "LargeValue"},
		{"unsorted list", "List"},
		{"accepts any key", "InvalidKeys"},
		{"prefix unchecked", "InvalidPrefixes"},
		{"accepts reserved names", "InvalidKeys"},
		{"accepts reserved names", "InvalidPrefixes"},
		{"partial commit", "Atomicity"},
		{"no folder check", "KeyFolderConflict"},
		{"ignores context", "ContextCancelled"},
		{"torn commit", "ConcurrentReaders"},
	}
	for _, tc := range tests {
		t.Run(strings.ReplaceAll(tc.flaw+" "+tc.subtest, " ", "_"), func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^TestFlawedChild$/^"+tc.subtest+"$", "-test.count=1", "-test.timeout=2m")
			cmd.Env = append(os.Environ(), "STORETEST_FLAW="+tc.flaw)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) {
				t.Fatalf("the suite's %s subtest passed a store whose flaw is %q (err %v):\n%s", tc.subtest, tc.flaw, err, out)
			}
			if !strings.Contains(string(out), "--- FAIL: TestFlawedChild/"+tc.subtest+" ") {
				t.Errorf("the child failed, but not in subtest %s:\n%s", tc.subtest, out)
			}
			for _, bad := range []string{"panic:", "DATA RACE", "test timed out"} {
				if strings.Contains(string(out), bad) {
					t.Errorf("the child failed with %q rather than a test failure:\n%s", bad, out)
				}
			}
		})
	}
}

func TestFaulty(t *testing.T) {
	tests := []struct {
		name     string
		failAt   int
		countAll bool
		// calls is a script: "c" commit, "g" get, "l" list. want marks
		// the call that must fail.
		calls string
		want  int // 0-based index of the failing call, -1 for none
	}{
		{"never", 0, false, "cgcglc", -1},
		{"first commit", 1, false, "gcgc", 1},
		{"third commit, gets not counted", 3, false, "cgcgglc", 6},
		{"count all: third call", 3, true, "cgcgc", 2},
		{"count all: a get", 2, true, "cgc", 1},
		{"beyond the calls made", 9, false, "ccc", -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inner := newFlawed("")
			f := &storetest.Faulty{Store: inner, FailAt: tc.failAt, CountAll: tc.countAll}
			ctx := t.Context()
			for i, c := range tc.calls {
				key := fmt.Sprintf("k%d", i)
				var err error
				switch c {
				case 'c':
					err = f.Commit(ctx, store.Put(key, []byte("v")))
					// A failed commit applies nothing.
					_, getErr := inner.Get(ctx, key)
					if applied := getErr == nil; applied == (err != nil) {
						t.Errorf("call %d: Commit error %v, but applied = %v", i, err, applied)
					}
				case 'g':
					_, err = f.Get(ctx, "k0")
				case 'l':
					_, err = f.List(ctx, "")
				}
				if i == tc.want {
					if !errors.Is(err, storetest.ErrInjected) {
						t.Errorf("call %d (%c): error = %v, want ErrInjected", i, c, err)
					}
				} else if errors.Is(err, storetest.ErrInjected) {
					t.Errorf("call %d (%c): unexpected injected fault: %v", i, c, err)
				}
			}
			wantCalls := strings.Count(tc.calls, "c")
			if tc.countAll {
				wantCalls = len(tc.calls)
			}
			if got := f.Calls(); got != wantCalls {
				t.Errorf("Calls() = %d, want %d", got, wantCalls)
			}
		})
	}
}

func TestFaultyClose(t *testing.T) {
	if err := (&storetest.Faulty{Store: newFlawed("")}).Close(); err != nil {
		t.Errorf("Close of a Store that is not a Closer = %v, want nil", err)
	}
	c := &closer{Store: newFlawed("")}
	if err := (&storetest.Faulty{Store: c}).Close(); err != nil || !c.closed {
		t.Errorf("Close = %v, closed = %v; want it passed through", err, c.closed)
	}
}

type closer struct {
	store.Store
	closed bool
}

func (c *closer) Close() error { c.closed = true; return nil }
