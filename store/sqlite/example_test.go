package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/sqlite"
)

func Example() {
	dir, _ := os.MkdirTemp("", "refine-sqlite-")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	// One database file holds many sessions.
	db, err := sqlite.Open(ctx, filepath.Join(dir, "sessions.db"), sqlite.Config{
		Holder: "worker-1",
		NewID:  func() string { return "orders-api" },
	})
	if err != nil {
		panic(err)
	}
	defer db.Close()

	id, st, err := db.Create(ctx)
	if err != nil {
		panic(err)
	}
	// The engine commits its summary record with every durable point;
	// Sessions lists it without reading the session's state.
	err = st.Commit(ctx,
		store.Put("state.json", []byte(`{"round": 1}`)),
		store.Put(store.SummaryKey, []byte(`{"round": 1, "outcome": "RUNNING", "open_gaps": {"HIGH": 2}}`)),
	)
	if err != nil {
		panic(err)
	}

	// The session has one writer, in this process or any other.
	if _, err := db.Session(ctx, id); errors.Is(err, store.ErrLocked) {
		fmt.Println("refused: held by worker-1")
	}
	st.(io.Closer).Close() // releases the lease

	infos, err := db.Sessions(ctx)
	if err != nil {
		panic(err)
	}
	for _, in := range infos {
		fmt.Println(in.ID, in.Round, in.Outcome, in.OpenGaps["HIGH"])
	}
	// Output:
	// refused: held by worker-1
	// orders-api 1 RUNNING 2
}
