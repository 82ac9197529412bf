package postgres_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/refine-spec/refine/internal/pgtest"
	"github.com/refine-spec/refine/internal/sqlkv/sqlkvtest"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/postgres"
)

// A reader checks the schema instead of migrating it (a database no
// writer opened is refused, and left without tables), reads sessions, and
// opens none for writing.
func TestReaderNeitherMigratesNorWrites(t *testing.T) {
	dsn := pgtest.Database(t)
	if _, err := postgres.Open(t.Context(), dsn, postgres.Config{ReadOnly: true}); err == nil || !strings.Contains(err.Error(), "a reader does not create the schema") {
		t.Fatalf("reader of a database without a schema: %v", err)
	}
	w := open(t, dsn, postgres.Config{})
	id, st, err := w.Create(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	sqlkvtest.MustCommit(t, st, store.Put("state.json", []byte("{}")))
	st.(io.Closer).Close()

	r := open(t, dsn, postgres.Config{ReadOnly: true})
	if infos, err := r.Sessions(t.Context()); err != nil || len(infos) != 1 {
		t.Errorf("Sessions = %v, %v", infos, err)
	}
	v, err := r.View(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if got := sqlkvtest.MustGet(t, v, "state.json"); got != "{}" {
		t.Errorf("View: %q", got)
	}
	for name, err := range map[string]error{
		"Session": func() error { _, err := r.Session(t.Context(), id); return err }(),
		"Delete":  r.Delete(t.Context(), id),
	} {
		if !errors.Is(err, store.ErrReadOnly) {
			t.Errorf("%s on a reader: %v, want ErrReadOnly", name, err)
		}
	}
}
