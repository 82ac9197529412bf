package postgres_test

import (
	"os"
	"testing"

	"github.com/refine-spec/refine/internal/pgtest"
	"github.com/refine-spec/refine/internal/sqlkv/sqlkvtest"
	"github.com/refine-spec/refine/store"
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

// opener opens connection pools on the database at dsn for sqlkvtest.
func opener(dsn string) sqlkvtest.Opener {
	return func(t testing.TB, o sqlkvtest.Options) store.Backend {
		return open(t, dsn, postgres.Config{Holder: o.Holder, LeaseTTL: o.LeaseTTL, Heartbeat: o.Heartbeat, Now: o.Now})
	}
}

func TestBackendConformance(t *testing.T) {
	storetest.TestBackend(t, func(t *testing.T) store.Backend {
		return open(t, pgtest.Database(t), postgres.Config{})
	})
}

func TestStoreConformance(t *testing.T) {
	sqlkvtest.Stores(t, open(t, pgtest.Database(t), postgres.Config{}))
}

// A session on Postgres hands the Store appends and copies, the same ops
// as on store/memory, and the database holds the same session.
func TestSessionAppendsAndCopies(t *testing.T) {
	sqlkvtest.SessionAppendsAndCopies(t, open(t, pgtest.Database(t), postgres.Config{}))
}
