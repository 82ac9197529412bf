package memory_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/memory"
	"github.com/refine-spec/refine/storetest"
)

func TestBackendConformance(t *testing.T) {
	storetest.TestBackend(t, func(t *testing.T) store.Backend {
		b := memory.NewBackend()
		t.Cleanup(func() { b.Close() })
		return b
	})
}

func TestBackendStoreConformance(t *testing.T) {
	b := memory.NewBackend()
	t.Cleanup(func() { b.Close() })
	storetest.TestStore(t, func(t *testing.T) store.Store {
		_, st, err := b.Create(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.(io.Closer).Close() })
		return st
	})
}

// Without a summary record a session is listed from the backend's own
// clock: created when Create ran, updated at its last commit.
func TestBackendTimesWithoutSummary(t *testing.T) {
	now := time.Date(2025, 3, 1, 14, 15, 2, 0, time.UTC)
	b := memory.NewBackend(
		memory.WithClock(func() time.Time { return now }),
		memory.WithIDs(func() string { return "s-" + now.Format("150405") }),
	)
	ctx := t.Context()
	id, st, err := b.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	created := now
	now = now.Add(time.Minute)
	if err := st.Commit(ctx, store.Put("state.json", []byte("{}"))); err != nil {
		t.Fatal(err)
	}
	got, err := b.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.SessionInfo{{ID: "s-141502", SessionSummary: store.SessionSummary{Created: created, Updated: now}}}
	if diff := cmp.Diff(want, got); diff != "" || id != "s-141502" {
		t.Errorf("Create ID %q; Sessions (-want +got):\n%s", id, diff)
	}
}

func TestBackendClosedStoreRefuses(t *testing.T) {
	b := memory.NewBackend()
	ctx := t.Context()
	_, st, err := b.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st.(io.Closer).Close()
	if err := st.Commit(ctx, store.Put("a", nil)); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Commit after Close error = %v, want one saying the store is closed", err)
	}
	b.Close()
	if _, _, err := b.Create(ctx); err == nil {
		t.Error("Create after the backend closed succeeded, want an error")
	}
	if _, err := b.Sessions(ctx); err == nil || errors.Is(err, store.ErrNotFound) {
		t.Errorf("Sessions after the backend closed: error = %v, want a closed error", err)
	}
}

func ExampleNewBackend() {
	ctx := context.Background()
	b := memory.NewBackend(memory.WithIDs(func() string { return "session-1" }))
	defer b.Close()

	id, st, err := b.Create(ctx)
	if err != nil {
		panic(err)
	}
	st.Commit(ctx, store.Put(store.SummaryKey, []byte(`{"round": 2, "outcome": "PAUSED"}`)))

	// One writer per session: a second one is refused, naming the first.
	if _, err := b.Session(ctx, id); errors.Is(err, store.ErrLocked) {
		fmt.Println("second writer refused")
	}
	st.(io.Closer).Close()

	infos, _ := b.Sessions(ctx)
	for _, in := range infos {
		fmt.Println(in.ID, in.Round, in.Outcome)
	}
	// Output:
	// second writer refused
	// session-1 2 PAUSED
}
