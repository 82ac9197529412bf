package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/pgtest"
	"github.com/refine-spec/refine/internal/sqlkv/sqlkvtest"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/store/postgres"
)

// runSession runs a 5-round session over 5 gaps on st, calling beforeRole
// (if set) at the start of each role call, and returns its outcome and
// everything st holds afterwards.
func runSession(t *testing.T, st refine.Store, beforeRole func()) (refine.Outcome, map[string]string) {
	t.Helper()
	ctx := t.Context()
	role := func(content func(refine.Request) string) refine.Role {
		return refinetest.Func(func(ctx context.Context, req refine.Request) (refine.Response, error) {
			if beforeRole != nil {
				beforeRole()
			}
			return refine.Response{Content: content(req)}, nil
		})
	}
	gaps := make([]gap.Gap, 5)
	for i := range gaps {
		gaps[i] = gap.Gap{ID: gap.ID(fmt.Sprintf("GAP-PG-%03d", i+1)), Title: "a gap", Severity: gap.Medium}
	}
	cfg := refinetest.Config(
		role(func(req refine.Request) string { return refinetest.EngineerOutput(req.Gaps...) }),
		role(func(req refine.Request) string { return refinetest.ReviewerOutput(req.Round, req.Gaps) }),
		refine.DefaultAsker{}, gaps...)
	cfg.GapsPerRound = 1
	cfg.Store = st
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil {
		t.Fatalf("Run: %v (outcome %+v)", err, out)
	}
	return out, dump(t, st)
}

// dump returns every key and value st holds.
func dump(t *testing.T, st refine.Store) map[string]string {
	t.Helper()
	keys, err := st.List(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]string{}
	for _, k := range keys {
		all[k] = sqlkvtest.MustGet(t, st, k)
	}
	return all
}

// terminateOthers ends every connection to admin's database but admin's
// own, as a DBA's pg_terminate_backend or a dropped network does, and
// returns how many it ended.
func terminateOthers(ctx context.Context, admin *pgx.Conn) (int, error) {
	var n int
	err := admin.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&n)
	return n, err
}

// leaseSeq reads the commit counter of session id's lease.
func leaseSeq(t *testing.T, admin *pgx.Conn, id string) int64 {
	t.Helper()
	var seq int64
	if err := admin.QueryRow(t.Context(), `SELECT seq FROM refine_leases WHERE session_id = $1`, id).Scan(&seq); err != nil {
		t.Fatal(err)
	}
	return seq
}

// A connection terminated by the server in the middle of a commit
// (pg_terminate_backend, as when a network drops or a DBA kills it) does
// not fail the commit: it runs again on a new connection, once.
func TestConnectionDroppedMidCommit(t *testing.T) {
	_, admin, id, st := withAdmin(t)
	ctx := t.Context()
	sqlkvtest.MustCommit(t, st, refine.Put("a", []byte("1")), refine.Put("b", []byte("1")))
	var kills atomic.Int32
	postgres.SetCommitHook(st.(*postgres.Store), func(ctx context.Context, tx pgx.Tx) error {
		if kills.Add(1) > 1 {
			return nil
		}
		var pid int
		if err := tx.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
			return err
		}
		_, err := admin.Exec(ctx, `SELECT pg_terminate_backend($1)`, pid)
		return err
	})
	if err := st.Commit(ctx, refine.Put("a", []byte("2")), refine.Put("b", []byte("2"))); err != nil {
		t.Fatalf("commit on a connection terminated before COMMIT: %v; want it retried on a new connection", err)
	}
	if kills.Load() != 2 {
		t.Errorf("the commit's transaction ran %d times, want 2 (the terminated one and the retry)", kills.Load())
	}
	postgres.SetCommitHook(st.(*postgres.Store), nil)
	if got := sqlkvtest.MustGet(t, st, "a") + sqlkvtest.MustGet(t, st, "b"); got != "22" {
		t.Errorf("after the retried commit a+b = %q, want 22", got)
	}
	if seq := leaseSeq(t, admin, id); seq != 2 {
		t.Errorf("lease commit counter = %d after 2 commits, want 2 (applied once)", seq)
	}
	sqlkvtest.MustCommit(t, st, refine.Put("a", []byte("3")), refine.Put("b", []byte("3")))
	if got := sqlkvtest.MustGet(t, st, "a") + sqlkvtest.MustGet(t, st, "b"); got != "33" {
		t.Errorf("after resuming a+b = %q, want 33", got)
	}
}

// A COMMIT the server applied but whose reply was lost with the
// connection is not applied twice: the retry sees the lease's commit
// counter already moved on and reports the commit done.
func TestCommitReplyLost(t *testing.T) {
	dsn := pgtest.Database(t)
	db := open(t, dsn, postgres.Config{})
	admin, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close(context.Background()) })
	ctx := t.Context()
	id, st, err := db.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sqlkvtest.MustCommit(t, st, refine.Put("a", []byte("1")))
	var lost atomic.Int32
	postgres.SetAfterCommitHook(db, func() error {
		if lost.Add(1) > 1 {
			return nil
		}
		// The reply never arrived: the connection is gone as well.
		if _, err := terminateOthers(ctx, admin); err != nil {
			return err
		}
		return &pgconn.PgError{Severity: "FATAL", Code: "57P01", Message: "terminating connection due to administrator command"}
	})
	if err := st.Commit(ctx, refine.Put("a", []byte("2")), refine.Put("log/1", []byte("x"))); err != nil {
		t.Fatalf("commit whose reply was lost: %v; want it found applied", err)
	}
	postgres.SetAfterCommitHook(db, nil)
	if seq := leaseSeq(t, admin, id); seq != 2 {
		t.Errorf("lease commit counter = %d after 2 commits, want 2 (the lost reply's commit not applied twice)", seq)
	}
	sqlkvtest.MustCommit(t, st, refine.Put("a", []byte("3")))
	got := dump(t, st)
	if diff := cmp.Diff(map[string]string{"a": "3", "log/1": "x"}, got); diff != "" {
		t.Errorf("session after the lost reply (-want +got):\n%s", diff)
	}
}

// Every connection of the pool dropped between commits: the pool
// reconnects, commits and reads go through, and the lease row outlives the
// connections, so the writer keeps the session.
func TestAllConnectionsDroppedBetweenCommits(t *testing.T) {
	db, admin, id, st := withAdmin(t)
	ctx := t.Context()
	view, err := db.View(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	sqlkvtest.MustCommit(t, st, refine.Put("a", []byte("1")))
	for i, want := range []string{"2", "3"} {
		if n, err := terminateOthers(ctx, admin); err != nil || n == 0 {
			t.Fatalf("terminate: %d connections, %v", n, err)
		}
		if i == 1 { // a read first this time
			if got := sqlkvtest.MustGet(t, view, "a"); got != "2" {
				t.Errorf("read after the drop: a = %q, want 2", got)
			}
		}
		sqlkvtest.MustCommit(t, st, refine.Put("a", []byte(want)))
	}
	if got := sqlkvtest.MustGet(t, view, "a"); got != "3" {
		t.Errorf("a = %q, want 3", got)
	}
	other, err := db.Session(ctx, id)
	if !errors.Is(err, refine.ErrLocked) {
		t.Errorf("Session by another writer after the drop: error = %v, want ErrLocked", err)
	}
	if other != nil {
		other.(io.Closer).Close()
	}
}
