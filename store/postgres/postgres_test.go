package postgres_test

import (
	"io"
	"os"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/internal/pgtest"
	"github.com/refine-spec/refine/store/postgres"
	"github.com/refine-spec/refine/storetest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func open(t testing.TB, dsn string, cfg postgres.Config) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(t.Context(), dsn, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestBackendConformance(t *testing.T) {
	storetest.TestBackend(t, func(t *testing.T) refine.Backend {
		return open(t, pgtest.Database(t), postgres.Config{})
	})
}

func TestStoreConformance(t *testing.T) {
	db := open(t, pgtest.Database(t), postgres.Config{})
	storetest.TestStore(t, func(t *testing.T) refine.Store {
		_, st, err := db.Create(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.(io.Closer).Close() })
		return st
	})
}
