package fs_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/fs"
)

func Example() {
	dir, err := os.MkdirTemp("", "refine-session-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	s, err := fs.Open(dir)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	// One atomic commit: after a crash, both files are there or neither.
	err = s.Commit(ctx,
		store.Put("round_003/engineer.md", []byte("## Gap Resolution: GAP-FLOW-001\n")),
		store.Put("state.json", []byte(`{"schema": 1, "round": 3}`+"\n")),
	)
	if err != nil {
		log.Fatal(err)
	}

	// The store reads its own writes at once; the files catch up in the
	// background. The store's own files (.refine.lock, ...) are never
	// listed.
	keys, err := s.List(ctx, "")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(keys)

	// Once Close returns, the files hold every commit: a key is the
	// file's path in the session folder.
	if err := s.Close(); err != nil {
		log.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "round_003", "engineer.md"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(string(b))
	// Output:
	// [round_003/engineer.md state.json]
	// ## Gap Resolution: GAP-FLOW-001
}

func ExampleOpenReadOnly() {
	dir, err := os.MkdirTemp("", "refine-session-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()

	// An earlier run left its status. (A live run's commits show in the
	// files a few milliseconds after Commit returns, all of them by Close.)
	earlier, err := fs.Open(dir)
	if err != nil {
		log.Fatal(err)
	}
	if err := earlier.Commit(ctx, store.Put("status.md", []byte("round 3 of 10\n"))); err != nil {
		log.Fatal(err)
	}
	if err := earlier.Close(); err != nil {
		log.Fatal(err)
	}

	// A run holds the folder's lock...
	run, err := fs.Open(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer run.Close()
	_, err = fs.Open(dir)
	fmt.Println("second Open locked:", errors.Is(err, store.ErrLocked))

	// ...while a status command reads it without the lock.
	view, err := fs.OpenReadOnly(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer view.Close()
	status, err := view.Get(ctx, "status.md")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(string(status))
	err = view.Commit(ctx, store.Put("status.md", nil))
	fmt.Println("read-only Commit:", errors.Is(err, fs.ErrReadOnly))
	// Output:
	// second Open locked: true
	// round 3 of 10
	// read-only Commit: true
}
