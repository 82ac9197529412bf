package fs_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/fs"
	"github.com/refine-spec/refine/storetest"
)

func openBackend(t *testing.T, root string) *fs.Backend {
	t.Helper()
	b, err := fs.OpenBackend(root, fs.WithStoreOptions(fs.NoSync()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func TestBackendConformance(t *testing.T) {
	storetest.TestBackend(t, func(t *testing.T) store.Backend {
		return openBackend(t, t.TempDir())
	})
}

func TestBackendStoreConformance(t *testing.T) {
	b := openBackend(t, t.TempDir())
	storetest.TestStore(t, func(t *testing.T) store.Store {
		_, st, err := b.Create(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.(io.Closer).Close() })
		return st
	})
}

// A session folder is the folder fs.Open keeps: a writer's keys are files
// under root/ID, and a folder made by hand is a session too, listed from
// its modification time when it has no session.json.
func TestBackendFolderLayout(t *testing.T) {
	root := t.TempDir()
	b := openBackend(t, root)
	ctx := t.Context()
	id, st, err := b.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(ctx, store.Put("round_001/engineer.md", []byte("e"))); err != nil {
		t.Fatal(err)
	}
	st.(io.Closer).Close()
	if got, err := os.ReadFile(filepath.Join(root, id, "round_001", "engineer.md")); err != nil || string(got) != "e" {
		t.Errorf("root/%s/round_001/engineer.md = %q, %v; want e", id, got, err)
	}

	hand := filepath.Join(root, "by-hand")
	if err := os.Mkdir(hand, 0o700); err != nil {
		t.Fatal(err)
	}
	mtime := time.Date(2020, 5, 6, 7, 8, 9, 0, time.UTC)
	if err := os.Chtimes(hand, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	// Not sessions: a file, a folder whose name is not an ID, and what a
	// crashed Delete leaves.
	os.WriteFile(filepath.Join(root, "notes.txt"), nil, 0o600)
	os.Mkdir(filepath.Join(root, "has space"), 0o700)
	os.Mkdir(filepath.Join(root, ".refine-deleting-x-1"), 0o700)

	infos, err := b.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 2 || infos[1].ID != "by-hand" {
		t.Fatalf("Sessions = %+v, want the created session and by-hand", infos)
	}
	want := store.SessionInfo{ID: "by-hand", SessionSummary: store.SessionSummary{Created: mtime, Updated: mtime}}
	if diff := cmp.Diff(want, infos[1], cmp.Comparer(time.Time.Equal)); diff != "" {
		t.Errorf("session without session.json (-want +got):\n%s", diff)
	}
}

// A writer in another process is refused by the folder lock; the error
// names that process. The second opener here is fs.Open itself, which
// holds the same lock the Backend takes.
func TestBackendRefusesOutsideWriter(t *testing.T) {
	root := t.TempDir()
	b := openBackend(t, root)
	ctx := t.Context()
	id, st, err := b.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st.(io.Closer).Close()
	outside, err := fs.Open(filepath.Join(root, id))
	if err != nil {
		t.Fatal(err)
	}
	defer outside.Close()
	if _, err := b.Session(ctx, id); !errors.Is(err, store.ErrLocked) {
		t.Errorf("Session while fs.Open holds the folder: error = %v, want ErrLocked", err)
	}
	if err := b.Delete(ctx, id); !errors.Is(err, store.ErrLocked) {
		t.Errorf("Delete while fs.Open holds the folder: error = %v, want ErrLocked", err)
	}
}

func ExampleOpenBackend() {
	root, _ := os.MkdirTemp("", "refine-sessions-")
	defer os.RemoveAll(root)
	ctx := context.Background()

	// Each session is a folder under root, named by its ID.
	b, err := fs.OpenBackend(root, fs.WithIDs(func() string { return "orders-api" }))
	if err != nil {
		panic(err)
	}
	defer b.Close()
	id, st, err := b.Create(ctx)
	if err != nil {
		panic(err)
	}
	st.Commit(ctx, store.Put("round_001/engineer.md", []byte("# Engineer\n")))
	st.(io.Closer).Close()

	_, err = os.Stat(filepath.Join(root, id, "round_001", "engineer.md"))
	fmt.Println(id, err == nil)
	// Output: orders-api true
}

// BenchmarkSessions1000 lists a root of 1,000 session folders, each with a
// session.json; the target is under 50 ms per call.
func BenchmarkSessions1000(b *testing.B) {
	root := b.TempDir()
	for i := range 1000 {
		dir := filepath.Join(root, fmt.Sprintf("s-%04d", i))
		if err := os.Mkdir(dir, 0o700); err != nil {
			b.Fatal(err)
		}
		sum := fmt.Sprintf(`{"round":%d,"outcome":"PAUSED","open_gaps":{"HIGH":1},"created_at":"2025-03-01T00:00:00Z","updated_at":"2025-03-01T%02d:%02d:00Z"}`, i%7, i/60%24, i%60)
		if err := os.WriteFile(filepath.Join(dir, store.SummaryKey), []byte(sum), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	bk, err := fs.OpenBackend(root)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		infos, err := bk.Sessions(b.Context())
		if err != nil || len(infos) != 1000 {
			b.Fatalf("Sessions: %d, %v", len(infos), err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()*1000/float64(b.N), "ms/Sessions")
}
