package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/refine-spec/refine/internal/sqlkv/sqlkvtest"
	"github.com/refine-spec/refine/store/sqlite"
)

// A session on SQLite hands the Store appends and copies, the same ops
// as on store/memory, and the database holds the same session.
func TestSessionAppendsAndCopies(t *testing.T) {
	sqlkvtest.SessionAppendsAndCopies(t, open(t, filepath.Join(t.TempDir(), "refine.db"), sqlite.Config{}))
}
