package postgres_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/refine-spec/refine/internal/pgtest"
	"github.com/refine-spec/refine/internal/sqlkv/sqlkvtest"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/postgres"
)

// Two connection pools stand for two processes on two machines: the
// second is refused and told who holds the session, takes it over once
// the lease expires, and the first can then no longer commit.
func TestTwoWritersLeaseAndFencing(t *testing.T) {
	sqlkvtest.LeaseTakeover(t, opener(pgtest.Database(t)))
}

// withAdmin opens a writer on a new session of a fresh database and a
// connection of its own to that database, to break the writer's.
func withAdmin(t *testing.T) (db *postgres.DB, admin *pgx.Conn, id string, st store.Store) {
	dsn := pgtest.Database(t)
	db = open(t, dsn, postgres.Config{})
	admin, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close(context.Background()) })
	id, st, err = db.Create(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return db, admin, id, st
}

// Processes opening a new database at once all succeed: the advisory lock
// serializes their migrations.
func TestConcurrentMigration(t *testing.T) {
	dsn := pgtest.Database(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := postgres.Open(t.Context(), dsn, postgres.Config{})
			if err == nil {
				db.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent Open: %v", err)
	}
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var v int
	if err := conn.QueryRow(t.Context(), `SELECT version FROM refine_schema`).Scan(&v); err != nil || v != postgres.SchemaVersion {
		t.Errorf("schema version = %d, %v; want %d", v, err, postgres.SchemaVersion)
	}
	var rows int
	conn.QueryRow(t.Context(), `SELECT count(*) FROM refine_schema`).Scan(&rows)
	if rows != 1 {
		t.Errorf("refine_schema has %d rows, want 1", rows)
	}
	if _, err := conn.Exec(t.Context(), `UPDATE refine_schema SET version = 99`); err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.Open(t.Context(), dsn, postgres.Config{}); err == nil || !strings.Contains(err.Error(), "upgrade refine") {
		t.Errorf("Open of a newer schema: error = %v, want one saying to upgrade refine", err)
	}
}

// The heartbeat keeps an idle writer's lease alive, also across a dropped
// connection, and Close ends it.
func TestHeartbeatRenewsTheLease(t *testing.T) {
	sqlkvtest.Heartbeat(t, opener(pgtest.Database(t)), func(b store.Backend, tick <-chan time.Time, beat func(error)) {
		postgres.SetHeartbeat(b.(*postgres.DB), tick, beat)
	})
}
