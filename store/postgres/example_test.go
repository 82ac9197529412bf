package postgres_test

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/postgres"
)

// Open a database (the schema is created on first use), start a session
// and list the sessions. Needs a server: the DSN comes from the
// environment here.
func Example() {
	ctx := context.Background()
	db, err := postgres.Open(ctx, os.Getenv("REFINE_POSTGRES_DSN"), postgres.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	id, st, err := db.Create(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.(io.Closer).Close()
	if err := st.Commit(ctx, store.Put("state.json", []byte(`{"round": 0}`))); err != nil {
		fmt.Println(err)
		return
	}
	infos, _ := db.Sessions(ctx)
	fmt.Println("created", id, "of", len(infos))
}
