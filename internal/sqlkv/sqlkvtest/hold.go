package sqlkvtest

import (
	"database/sql"
	"testing"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// HoldSQLiteWriteLock holds the write lock of the SQLite database at path
// on a connection of its own, in a write transaction left open, as a
// writer stopped inside a commit does, until the test ends.
func HoldSQLiteWriteLock(t testing.TB, path string) {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+path+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	tx, err := raw.Begin()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback() })
	if _, err := tx.Exec(`UPDATE refine_sessions SET round = round`); err != nil {
		t.Fatal(err)
	}
}
