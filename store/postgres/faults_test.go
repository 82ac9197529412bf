package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/pgtest"
	"github.com/refine-spec/refine/internal/sqlkv/sqlkvtest"
	"github.com/refine-spec/refine/llm"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/postgres"
)

// runSession runs a 5-round session over 5 gaps on st, calling beforeRole
// (if set) at the start of each role call, and returns its outcome and
// everything st holds afterwards.
func runSession(t *testing.T, st store.Store, beforeRole func()) (refine.Outcome, map[string]string) {
	t.Helper()
	ctx := t.Context()
	role := func(content func(llm.Request) string) llm.Role {
		return refinetest.Func(func(ctx context.Context, req llm.Request) (llm.Response, error) {
			if beforeRole != nil {
				beforeRole()
			}
			return llm.Response{Content: content(req)}, nil
		})
	}
	gaps := make([]gap.Gap, 5)
	for i := range gaps {
		gaps[i] = gap.Gap{ID: gap.ID(fmt.Sprintf("GAP-PG-%03d", i+1)), Title: "a gap", Severity: gap.Medium}
	}
	cfg := refinetest.Config(
		role(func(req llm.Request) string { return refinetest.EngineerOutput(req.Gaps...) }),
		role(func(req llm.Request) string { return refinetest.ReviewerOutput(req.Round, req.Gaps) }),
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
func dump(t *testing.T, st store.Store) map[string]string {
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

// equalStores reports whether two sessions' contents are the same, and
// logs how they differ.
func equalStores(t *testing.T, want, got map[string]string) bool {
	t.Helper()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Logf("session contents (-want +got):\n%s", diff)
		return false
	}
	return true
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
	sqlkvtest.MustCommit(t, st, store.Put("a", []byte("1")), store.Put("b", []byte("1")))
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
	if err := st.Commit(ctx, store.Put("a", []byte("2")), store.Put("b", []byte("2"))); err != nil {
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
	sqlkvtest.MustCommit(t, st, store.Put("a", []byte("3")), store.Put("b", []byte("3")))
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
	sqlkvtest.MustCommit(t, st, store.Put("a", []byte("1")))
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
	if err := st.Commit(ctx, store.Put("a", []byte("2")), store.Put("log/1", []byte("x"))); err != nil {
		t.Fatalf("commit whose reply was lost: %v; want it found applied", err)
	}
	postgres.SetAfterCommitHook(db, nil)
	if seq := leaseSeq(t, admin, id); seq != 2 {
		t.Errorf("lease commit counter = %d after 2 commits, want 2 (the lost reply's commit not applied twice)", seq)
	}
	sqlkvtest.MustCommit(t, st, store.Put("a", []byte("3")))
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
	sqlkvtest.MustCommit(t, st, store.Put("a", []byte("1")))
	for i, want := range []string{"2", "3"} {
		if n, err := terminateOthers(ctx, admin); err != nil || n == 0 {
			t.Fatalf("terminate: %d connections, %v", n, err)
		}
		if i == 1 { // a read first this time
			if got := sqlkvtest.MustGet(t, view, "a"); got != "2" {
				t.Errorf("read after the drop: a = %q, want 2", got)
			}
		}
		sqlkvtest.MustCommit(t, st, store.Put("a", []byte(want)))
	}
	if got := sqlkvtest.MustGet(t, view, "a"); got != "3" {
		t.Errorf("a = %q, want 3", got)
	}
	other, err := db.Session(ctx, id)
	if !errors.Is(err, store.ErrLocked) {
		t.Errorf("Session by another writer after the drop: error = %v, want ErrLocked", err)
	}
	if other != nil {
		other.(io.Closer).Close()
	}
}

// A writer stopped inside its commit (SIGSTOP, a frozen VM: here its
// commit hook blocks, and it renews nothing) holds the session and lease
// rows' locks in an idle transaction. The server ends that transaction
// after half a lease (idle_in_transaction_session_timeout), so a second
// writer takes the session over once the lease has expired, within two
// lease periods, instead of waiting on the locks; meanwhile opening the
// session answers ErrLocked promptly (lock_timeout) and reading works. The
// stopped writer's commit, once it goes on, is refused with ErrLocked, and
// nothing committed by either writer is lost.
func TestStoppedWriterLosesTheSession(t *testing.T) {
	const lease = 3 * time.Second
	dsn := pgtest.Database(t)
	ctx := t.Context()
	a := open(t, dsn, postgres.Config{Holder: "host-a", LeaseTTL: lease, Heartbeat: -1})
	b := open(t, dsn, postgres.Config{Holder: "host-b", LeaseTTL: lease, Heartbeat: -1})
	wa, err := a.CreateNamed(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	sqlkvtest.MustCommit(t, wa, store.Put("state.json", []byte("a1")), store.Put("a/1", []byte("x")))

	stopped, cont := make(chan struct{}), make(chan struct{})
	postgres.SetCommitHook(wa.(*postgres.Store), func(ctx context.Context, tx pgx.Tx) error {
		select {
		case <-stopped: // a retry after the stop: go on
		default:
			close(stopped)
			<-cont
		}
		return nil
	})
	errA := make(chan error, 1)
	go func() { errA <- wa.Commit(ctx, store.Put("state.json", []byte("a2")), store.Put("a/2", []byte("y"))) }()
	<-stopped
	start := time.Now()

	view, err := b.View(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if got := sqlkvtest.MustGet(t, view, "state.json"); got != "a1" {
		t.Errorf("reading while the writer is stopped: state.json = %q, want a1", got)
	}
	var wb store.Store
	for tries := 0; ; tries++ {
		// Bounded, so a call stuck on the stopped writer's locks fails the
		// test rather than hanging it.
		tctx, cancel := context.WithDeadline(ctx, start.Add(2*lease))
		wb, err = b.Session(tctx, "s")
		cancel()
		if err == nil {
			break
		}
		if !errors.Is(err, store.ErrLocked) || !strings.Contains(err.Error(), "host-a") {
			t.Fatalf("Session while host-a is stopped: %v; want ErrLocked naming host-a", err)
		}
		if time.Since(start) > 2*lease {
			t.Fatalf("after %v and %d tries the second writer has not taken the session over, want within 2 lease periods (%v): %v", time.Since(start), tries, 2*lease, err)
		}
		select { // the lease expires with time: poll
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Logf("taken over %v after the writer stopped (lease %v)", time.Since(start).Round(time.Millisecond), lease)
	defer wb.(io.Closer).Close()
	sqlkvtest.MustCommit(t, wb, store.Put("state.json", []byte("b1")), store.Put("b/1", []byte("z")))

	close(cont) // SIGCONT
	t0 := time.Now()
	err = <-errA
	t.Logf("refused after %v: %v", time.Since(t0), err)
	if !errors.Is(err, store.ErrLocked) || !strings.Contains(err.Error(), "host-b") {
		t.Errorf("the stopped writer's commit once it went on: %v; want ErrLocked naming host-b", err)
	}
	if err := wa.(io.Closer).Close(); err != nil {
		t.Errorf("closing the stopped writer: %v", err)
	}
	sqlkvtest.MustCommit(t, wb, store.Put("b/2", []byte("w"))) // still b's
	want := map[string]string{"state.json": "b1", "a/1": "x", "b/1": "z", "b/2": "w"}
	if !equalStores(t, want, dump(t, view)) {
		t.Error("after the takeover the session lost a commit or kept the refused one")
	}
}

// A run whose connections the server terminates again and again
// (pg_terminate_backend of every connection at each role call, one
// commit's connection before its COMMIT, another's right after it with
// the reply lost) finishes with the same outcome and the same session
// contents as an undisturbed run.
func TestRunSurvivesTerminatedConnections(t *testing.T) {
	ctx := t.Context()
	ref := open(t, pgtest.Database(t), postgres.Config{})
	wref, err := ref.CreateNamed(ctx, "run")
	if err != nil {
		t.Fatal(err)
	}
	defer wref.(io.Closer).Close()
	wantOut, want := runSession(t, wref, nil)

	db, admin, _, _ := withAdmin(t)
	st, err := db.CreateNamed(ctx, "run")
	if err != nil {
		t.Fatal(err)
	}
	defer st.(io.Closer).Close()
	var terminated, commits, lostReplies atomic.Int64
	terminate := func() {
		n, err := terminateOthers(ctx, admin)
		if err != nil {
			t.Error(err)
		}
		terminated.Add(int64(n))
	}
	postgres.SetCommitHook(st.(*postgres.Store), func(ctx context.Context, tx pgx.Tx) error {
		if commits.Add(1)%4 == 0 {
			terminate() // this commit's own connection among them
		}
		return nil
	})
	postgres.SetAfterCommitHook(db, func() error {
		if commits.Load()%5 != 0 || lostReplies.Load() >= commits.Load()/5 {
			return nil
		}
		lostReplies.Add(1)
		terminate()
		return &pgconn.PgError{Severity: "FATAL", Code: "57P01", Message: "terminating connection due to administrator command"}
	})
	gotOut, got := runSession(t, st, terminate)
	t.Logf("%d commits, %d connections terminated, %d replies lost", commits.Load(), terminated.Load(), lostReplies.Load())
	if terminated.Load() < 10 || lostReplies.Load() == 0 {
		t.Fatalf("the test terminated %d connections and lost %d replies; it needs more to mean something", terminated.Load(), lostReplies.Load())
	}
	if gotOut.Status != wantOut.Status || gotOut.Round != wantOut.Round || gotOut.Reason != wantOut.Reason {
		t.Errorf("outcome with terminated connections = %+v, undisturbed %+v", gotOut, wantOut)
	}
	if !equalStores(t, want, got) {
		t.Error("the run with terminated connections left another session than an undisturbed run")
	}
}

// A server restart in the middle of a run (pg_ctl restart -m fast: every
// connection ended, new ones refused until it is back) does not end the
// run: it finishes as an undisturbed one does.
func TestRunSurvivesServerRestart(t *testing.T) {
	ctx := t.Context()
	ref := open(t, pgtest.Database(t), postgres.Config{})
	wref, err := ref.CreateNamed(ctx, "run")
	if err != nil {
		t.Fatal(err)
	}
	defer wref.(io.Closer).Close()
	wantOut, want := runSession(t, wref, nil)

	db := open(t, pgtest.Database(t), postgres.Config{})
	st, err := db.CreateNamed(ctx, "run")
	if err != nil {
		t.Fatal(err)
	}
	defer st.(io.Closer).Close()
	calls := 0
	gotOut, got := runSession(t, st, func() {
		if calls++; calls == 4 {
			pgtest.Restart(t)
		}
	})
	if gotOut.Status != wantOut.Status || gotOut.Round != wantOut.Round || gotOut.Reason != wantOut.Reason {
		t.Errorf("outcome across a server restart = %+v, undisturbed %+v", gotOut, wantOut)
	}
	if !equalStores(t, want, got) {
		t.Error("the run across a server restart left another session than an undisturbed run")
	}
}

// Another process stopped inside a transaction that holds the lease row
// (a refine status or resume stopped while taking the lease; here a
// connection of the test's own, with the server's idle timeout a refine
// process sets) holds up a live writer's commit only until the server
// ends that transaction: the commit waits in lock_timeout steps and goes
// through.
func TestCommitOutlastsAStoppedLockHolder(t *testing.T) {
	const lease = 4 * time.Second
	dsn := pgtest.Database(t)
	ctx := t.Context()
	db := open(t, dsn, postgres.Config{Holder: "run", LeaseTTL: lease})
	st, err := db.CreateNamed(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	defer st.(io.Closer).Close()
	sqlkvtest.MustCommit(t, st, store.Put("a", []byte("1")))
	var aborted atomic.Int32
	postgres.SetFaultHook(db, func(code string, err error) {
		if code == "55P03" {
			aborted.Add(1)
		}
	})

	other, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(context.Background())
	if _, err := other.Exec(ctx, fmt.Sprintf(`SET idle_in_transaction_session_timeout = %d`, (lease/2).Milliseconds())); err != nil {
		t.Fatal(err)
	}
	tx, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT 1 FROM refine_sessions WHERE id = 's' FOR KEY SHARE`); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT 1 FROM refine_leases WHERE session_id = 's' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	// The holder stops here: it sends nothing more.
	sqlkvtest.MustCommit(t, st, store.Put("a", []byte("2")))
	if aborted.Load() == 0 {
		t.Error("the commit never waited on the stopped holder's lock; the test did not test anything")
	}
	if got := sqlkvtest.MustGet(t, st, "a"); got != "2" {
		t.Errorf("a = %q, want 2", got)
	}
	if err := tx.Commit(ctx); err == nil {
		t.Error("the stopped holder's transaction was still open; want it ended by the server")
	}
}

// Creating or opening a session whose COMMIT was applied but whose reply
// was lost succeeds on the retry: the session exists and the lease is
// already this writer's, which the retry recognises by its token, instead
// of refusing its own session as taken or locked.
func TestOpenWithLostReply(t *testing.T) {
	for _, tc := range []struct {
		name string
		open func(ctx context.Context, db *postgres.DB) (store.Store, error)
	}{
		{"CreateNamed", func(ctx context.Context, db *postgres.DB) (store.Store, error) { return db.CreateNamed(ctx, "s") }},
		{"Session", func(ctx context.Context, db *postgres.DB) (store.Store, error) { return db.Session(ctx, "s") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			dsn := pgtest.Database(t)
			db := open(t, dsn, postgres.Config{Holder: "me"})
			if tc.name == "Session" {
				w, err := db.CreateNamed(ctx, "s")
				if err != nil {
					t.Fatal(err)
				}
				sqlkvtest.MustCommit(t, w, store.Put("a", []byte("1")))
				w.(io.Closer).Close()
			}
			var lost atomic.Int32
			postgres.SetAfterCommitHook(db, func() error {
				if lost.Add(1) > 1 {
					return nil
				}
				return &pgconn.PgError{Severity: "FATAL", Code: "57P01", Message: "terminating connection due to administrator command"}
			})
			st, err := tc.open(ctx, db)
			if err != nil {
				t.Fatalf("%s with the first reply lost: %v", tc.name, err)
			}
			defer st.(io.Closer).Close()
			postgres.SetAfterCommitHook(db, nil)
			if lost.Load() == 0 {
				t.Fatal("no COMMIT lost its reply; the test did not test anything")
			}
			sqlkvtest.MustCommit(t, st, store.Put("b", []byte("2")))
			other := open(t, dsn, postgres.Config{Holder: "other"})
			if _, err := other.Session(ctx, "s"); !errors.Is(err, store.ErrLocked) || !strings.Contains(err.Error(), "held by me") {
				t.Errorf("Session by another writer: %v; want ErrLocked naming me", err)
			}
		})
	}
}
