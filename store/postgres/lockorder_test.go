package postgres_test

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/refine-spec/refine/internal/pgtest"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/postgres"
)

// statusCalls is how many refine status calls the lock-order test makes
// while the run is live, at least.
const statusCalls = 600

// deadlockCount reads the server's count of deadlocks in admin's database
// once every other connection to it has ended (a backend reports its
// counts when it exits).
func deadlockCount(t *testing.T, admin *pgx.Conn) int64 {
	t.Helper()
	ctx := t.Context()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var others int
		if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&others); err != nil {
			t.Fatal(err)
		}
		if others == 0 || time.Now().After(deadline) {
			break
		}
		select { // polling for the backends to exit; no event tells
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if _, err := admin.Exec(ctx, `SELECT pg_stat_clear_snapshot()`); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := admin.QueryRow(ctx, `SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A live run next to hundreds of refine status calls, each opening the
// database as the CLI does (or reusing a handle), trying the session's
// lease and falling back to a read-only view: no deadlock anywhere (none
// reported to a client, none counted by the server), every call answers
// ErrLocked then reads, and the run ends as an undisturbed one does.
// Opening locks the session row then the lease row, and so does every
// commit: before issue #24 commits took them the other way round.
func TestLiveRunNextToStatusHasNoDeadlock(t *testing.T) {
	dsn := pgtest.Database(t)
	ctx := t.Context()
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	before := deadlockCount(t, admin)

	var (
		mu        sync.Mutex
		deadlocks []error // what clients were told, retried or not
		failures  []error // status calls that did not answer
	)
	onFault := func(code string, err error) {
		if code == "40P01" {
			mu.Lock()
			deadlocks = append(deadlocks, err)
			mu.Unlock()
		}
	}
	openDB := func(holder string) (*postgres.DB, error) {
		db, err := postgres.Open(ctx, dsn, postgres.Config{Holder: holder})
		if err == nil {
			postgres.SetFaultHook(db, onFault)
		}
		return db, err
	}
	runDB, err := openDB("the run")
	if err != nil {
		t.Fatal(err)
	}
	st, err := runDB.CreateNamed(ctx, "live")
	if err != nil {
		t.Fatal(err)
	}
	shared, err := openDB("status, shared handle")
	if err != nil {
		t.Fatal(err)
	}

	// status is refine status on db: the lease first, a view when a run
	// holds it.
	status := func(db *postgres.DB) error {
		w, err := db.Session(ctx, "live")
		if err == nil {
			w.(io.Closer).Close()
			return errors.New("Session succeeded while the run holds the lease")
		}
		if !errors.Is(err, store.ErrLocked) {
			return err
		}
		v, err := db.View(ctx, "live")
		if err != nil {
			return err
		}
		defer v.(io.Closer).Close()
		if _, err := v.List(ctx, ""); err != nil {
			return err
		}
		_, err = db.Sessions(ctx)
		return err
	}
	progress := make(chan struct{}, 1)
	var calls atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				var err error
				if w%2 == 0 { // a new process each time, as the CLI is
					var db *postgres.DB
					if db, err = openDB("status"); err == nil {
						err = status(db)
						db.Close()
					}
				} else {
					err = status(shared)
				}
				if err != nil {
					mu.Lock()
					failures = append(failures, err)
					mu.Unlock()
				}
				calls.Add(1)
				select {
				case progress <- struct{}{}:
				default:
				}
			}
		}()
	}
	// Each role call waits for status calls to happen meanwhile, so they
	// overlap the run's commits.
	var roleCalls atomic.Int64
	out, got := runSession(t, st, func() {
		roleCalls.Add(1)
		for range statusCalls / 10 {
			<-progress
		}
	})
	close(done)
	wg.Wait()
	st.(io.Closer).Close()
	shared.Close()
	runDB.Close()

	if n := calls.Load(); n < statusCalls || roleCalls.Load() < 10 {
		t.Fatalf("only %d status calls over %d role calls; the test needs %d during the run", n, roleCalls.Load(), statusCalls)
	}
	t.Logf("%d status calls during a run of %d role calls", calls.Load(), roleCalls.Load())
	for _, err := range deadlocks {
		t.Errorf("deadlock reported to a client: %v", err)
	}
	for i, err := range failures {
		if i == 5 {
			t.Errorf("... %d failures in all", len(failures))
			break
		}
		t.Errorf("status call: %v", err)
	}
	if after := deadlockCount(t, admin); after != before {
		t.Errorf("the server counted %d deadlocks in the database, want 0", after-before)
	}
	refDB := open(t, pgtest.Database(t), postgres.Config{})
	ref, err := refDB.CreateNamed(ctx, "live")
	if err != nil {
		t.Fatal(err)
	}
	defer ref.(io.Closer).Close()
	wantOut, want := runSession(t, ref, nil)
	if out.Status != wantOut.Status || out.Round != wantOut.Round {
		t.Errorf("outcome next to status calls = %s after round %d, undisturbed %s after round %d", out.Status, out.Round, wantOut.Status, wantOut.Round)
	}
	if !equalStores(t, want, got) {
		t.Error("the run next to status calls left another session than an undisturbed run")
	}
}
