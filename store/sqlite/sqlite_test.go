package sqlite_test

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/refine-spec/refine"
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

func TestBackendConformance(t *testing.T) {
	storetest.TestBackend(t, func(t *testing.T) refine.Backend {
		return open(t, filepath.Join(t.TempDir(), "refine.db"), sqlite.Config{})
	})
}

func TestStoreConformance(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "refine.db"), sqlite.Config{})
	storetest.TestStore(t, func(t *testing.T) refine.Store {
		_, st, err := db.Create(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.(io.Closer).Close() })
		return st
	})
}
