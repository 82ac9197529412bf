package storetest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/memory"
	"github.com/refine-spec/refine/storetest"
)

// flawedBackend is store/memory's Backend with one deliberate flaw
// switched on; with none it passes (TestBackendReference).
type flawedBackend struct {
	*memory.Backend
	flaw string
}

func (b *flawedBackend) Session(ctx context.Context, id string) (store.Store, error) {
	if b.flaw == "no ID check" && store.ValidSessionID(id) != nil {
		return nil, fmt.Errorf("session %q: %w", id, store.ErrNotFound)
	}
	st, err := b.Backend.Session(ctx, id)
	switch {
	case b.flaw == "no lock" && errors.Is(err, store.ErrLocked):
		return b.Backend.View(ctx, id)
	case b.flaw == "lock names nobody" && errors.Is(err, store.ErrLocked):
		return nil, store.ErrLocked
	case b.flaw == "creates on open" && errors.Is(err, store.ErrNotFound):
		return b.Backend.CreateNamed(ctx, id)
	}
	return st, err
}

func (b *flawedBackend) Create(ctx context.Context) (string, store.Store, error) {
	id, st, err := b.Backend.Create(ctx)
	if err == nil && b.flaw == "append overwrites" {
		st = overwriter{st}
	}
	return id, st, err
}

// overwriter is a writer whose appends replace the value: the flaw
// "append overwrites".
type overwriter struct{ store.Store }

func (o overwriter) Commit(ctx context.Context, ops ...store.Op) error {
	ops = slices.Clone(ops)
	for i := range ops {
		if ops[i].Kind == store.OpAppend {
			ops[i].Kind = store.OpPut
		}
	}
	return o.Store.Commit(ctx, ops...)
}

func (o overwriter) Appends() bool { return true }
func (o overwriter) Copies() bool  { return true }
func (o overwriter) Close() error  { return o.Store.(io.Closer).Close() }

func (b *flawedBackend) Delete(ctx context.Context, id string) error {
	err := b.Backend.Delete(ctx, id)
	if b.flaw == "delete held is fine" && errors.Is(err, store.ErrLocked) {
		return nil
	}
	return err
}

func (b *flawedBackend) Sessions(ctx context.Context) ([]store.SessionInfo, error) {
	infos, err := b.Backend.Sessions(ctx)
	switch b.flaw {
	case "oldest first":
		slices.Reverse(infos)
	case "ignores summary":
		for i := range infos {
			infos[i].SessionSummary = store.SessionSummary{Created: infos[i].Created, Updated: infos[i].Updated}
		}
	}
	return infos, err
}

func openFlawedBackend(flaw string) func(t *testing.T) store.Backend {
	return func(t *testing.T) store.Backend {
		b := &flawedBackend{Backend: memory.NewBackend(), flaw: flaw}
		t.Cleanup(func() { b.Close() })
		return b
	}
}

func TestBackendReference(t *testing.T) {
	storetest.TestBackend(t, openFlawedBackend(""))
}

// TestFlawedBackendChild runs one subtest of the suite against a flawed
// backend, in a child process, for TestBackendSuiteCatchesFlaws.
func TestFlawedBackendChild(t *testing.T) {
	flaw := os.Getenv("STORETEST_BACKEND_FLAW")
	if flaw == "" {
		t.Skip("helper process for TestBackendSuiteCatchesFlaws")
	}
	storetest.TestBackend(t, openFlawedBackend(flaw))
}

// TestBackendSuiteCatchesFlaws proves each check can fail: the subtest
// aimed at a flaw fails on a backend that has it.
func TestBackendSuiteCatchesFlaws(t *testing.T) {
	tests := []struct{ flaw, subtest string }{
		{"no lock", "Lock"},
		{"no lock", "View"},
		{"lock names nobody", "Lock"},
		{"creates on open", "NotFound"},
		{"no ID check", "InvalidIDs"},
		{"delete held is fine", "Delete"},
		{"oldest first", "SessionsOrder"},
		{"ignores summary", "SessionInfo"},
		{"append overwrites", "AppendCopy"},
	}
	for _, tc := range tests {
		t.Run(strings.ReplaceAll(tc.flaw+" "+tc.subtest, " ", "_"), func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^TestFlawedBackendChild$/^"+tc.subtest+"$", "-test.count=1", "-test.timeout=2m")
			cmd.Env = append(os.Environ(), "STORETEST_BACKEND_FLAW="+tc.flaw)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) {
				t.Fatalf("the suite's %s subtest passed a backend whose flaw is %q (err %v):\n%s", tc.subtest, tc.flaw, err, out)
			}
			if !strings.Contains(string(out), "--- FAIL: TestFlawedBackendChild/"+tc.subtest+" ") {
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
