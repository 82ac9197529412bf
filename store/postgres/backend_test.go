package postgres_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/internal/pgtest"
	"github.com/refine-spec/refine/internal/sqlkv/sqlkvtest"
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
func withAdmin(t *testing.T) (dsn string, admin *pgx.Conn, id string, st refine.Store) {
	dsn = pgtest.Database(t)
	db := open(t, dsn, postgres.Config{})
	admin, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close(context.Background()) })
	id, st, err = db.Create(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return dsn, admin, id, st
}

// A connection terminated by the server in the middle of a commit
// (pg_terminate_backend, as when a network drops or a DBA kills it) fails
// that commit clearly and applies none of it; the next commit runs on a
// new connection and the session goes on.
func TestConnectionDroppedMidCommit(t *testing.T) {
	_, admin, id, st := withAdmin(t)
	ctx := t.Context()
	sqlkvtest.MustCommit(t, st, refine.Put("a", []byte("1")), refine.Put("b", []byte("1")))
	postgres.SetCommitHook(st.(*postgres.Store), func(ctx context.Context, tx pgx.Tx) error {
		var pid int
		if err := tx.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
			return err
		}
		_, err := admin.Exec(ctx, `SELECT pg_terminate_backend($1)`, pid)
		return err
	})
	err := st.Commit(ctx, refine.Put("a", []byte("2")), refine.Put("b", []byte("2")))
	if err == nil || !strings.Contains(err.Error(), "commit to session "+id) {
		t.Fatalf("commit on a terminated connection: error = %v, want one naming the session", err)
	}
	postgres.SetCommitHook(st.(*postgres.Store), nil)
	if got := sqlkvtest.MustGet(t, st, "a") + sqlkvtest.MustGet(t, st, "b"); got != "11" {
		t.Errorf("after the dropped commit a+b = %q, want 11 (nothing applied)", got)
	}
	sqlkvtest.MustCommit(t, st, refine.Put("a", []byte("3")), refine.Put("b", []byte("3")))
	if got := sqlkvtest.MustGet(t, st, "a") + sqlkvtest.MustGet(t, st, "b"); got != "33" {
		t.Errorf("after resuming a+b = %q, want 33", got)
	}
}

// Every connection of the pool dropped between commits: the lease row
// outlives connections, so the writer keeps the session.
func TestAllConnectionsDroppedBetweenCommits(t *testing.T) {
	dsn, admin, id, st := withAdmin(t)
	ctx := t.Context()
	sqlkvtest.MustCommit(t, st, refine.Put("a", []byte("1")))
	if _, err := admin.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`); err != nil {
		t.Fatal(err)
	}
	// The first call may land on a dead connection and fail; pgxpool then
	// drops it, so a retry must work.
	if err := st.Commit(ctx, refine.Put("a", []byte("2"))); err != nil {
		if !strings.Contains(err.Error(), "commit to session "+id) {
			t.Errorf("first commit after the drop: error = %v, want one naming the session", err)
		}
		sqlkvtest.MustCommit(t, st, refine.Put("a", []byte("2")))
	}
	if got := sqlkvtest.MustGet(t, st, "a"); got != "2" {
		t.Errorf("a = %q, want 2", got)
	}
	other := open(t, dsn, postgres.Config{Holder: "other"})
	if _, err := other.Session(ctx, id); !errors.Is(err, refine.ErrLocked) {
		t.Errorf("Session by another writer after the drop: error = %v, want ErrLocked", err)
	}
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
	sqlkvtest.Heartbeat(t, opener(pgtest.Database(t)), func(b refine.Backend, tick <-chan time.Time, beat func(error)) {
		postgres.SetHeartbeat(b.(*postgres.DB), tick, beat)
	})
}
