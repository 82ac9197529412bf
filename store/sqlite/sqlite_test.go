package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/refine-spec/refine/internal/sqlkv/sqlkvtest"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/sqlite"
	"github.com/refine-spec/refine/storetest"
)

func open(t testing.TB, path string, cfg sqlite.Config) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(t.Context(), path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// opener opens handles on the database file at path for sqlkvtest.
func opener(path string) sqlkvtest.Opener {
	return func(t testing.TB, o sqlkvtest.Options) store.Backend {
		return open(t, path, sqlite.Config{Holder: o.Holder, LeaseTTL: o.LeaseTTL, Heartbeat: o.Heartbeat, Now: o.Now})
	}
}

func TestBackendConformance(t *testing.T) {
	storetest.TestBackend(t, func(t *testing.T) store.Backend {
		return open(t, filepath.Join(t.TempDir(), "refine.db"), sqlite.Config{})
	})
}

func TestStoreConformance(t *testing.T) {
	sqlkvtest.Stores(t, open(t, filepath.Join(t.TempDir(), "refine.db"), sqlite.Config{}))
}
