package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/internal/pgtest"
	"github.com/refine-spec/refine/internal/storebench"
	"github.com/refine-spec/refine/store/postgres"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func mustCommit(t *testing.T, st refine.Store, ops ...refine.Op) {
	t.Helper()
	if err := st.Commit(t.Context(), ops...); err != nil {
		t.Fatal(err)
	}
}

func mustGet(t *testing.T, st refine.Store, key string) string {
	t.Helper()
	b, err := st.Get(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Two connection pools stand for two processes on two machines: the
// second is refused and told who holds the session, takes it over once
// the lease expires, and the first can then no longer commit.
func TestTwoWritersLeaseAndFencing(t *testing.T) {
	dsn := pgtest.Database(t)
	clk := newClock()
	a := open(t, dsn, postgres.Config{Holder: "host-a pid 1", LeaseTTL: time.Minute, Heartbeat: -1, Now: clk.Now})
	b := open(t, dsn, postgres.Config{Holder: "host-b pid 2", LeaseTTL: time.Minute, Heartbeat: -1, Now: clk.Now})
	ctx := t.Context()
	id, wa, err := a.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mustCommit(t, wa, refine.Put("state.json", []byte("a1")))
	if _, err := b.Session(ctx, id); !errors.Is(err, refine.ErrLocked) || !strings.Contains(err.Error(), "held by host-a pid 1") {
		t.Fatalf("Session while a's lease is live: error = %v, want ErrLocked naming host-a pid 1", err)
	}
	clk.Add(59 * time.Second)
	mustCommit(t, wa, refine.Put("state.json", []byte("a2"))) // renews
	clk.Add(59 * time.Second)
	if _, err := b.Session(ctx, id); !errors.Is(err, refine.ErrLocked) {
		t.Fatalf("Session 59 s after a's last commit: error = %v, want ErrLocked", err)
	}
	clk.Add(2 * time.Second)
	wb, err := b.Session(ctx, id)
	if err != nil {
		t.Fatalf("Session after a's lease expired: %v", err)
	}
	err = wa.Commit(ctx, refine.Put("state.json", []byte("a3")), refine.Put("a-only.md", nil))
	if !errors.Is(err, refine.ErrLocked) || !strings.Contains(err.Error(), "host-b pid 2") {
		t.Fatalf("commit by the fenced writer: error = %v, want ErrLocked naming host-b pid 2", err)
	}
	wa.(io.Closer).Close() // must not release b's lease
	if _, err := a.Session(ctx, id); !errors.Is(err, refine.ErrLocked) {
		t.Errorf("Session after the fenced writer closed: error = %v, want ErrLocked", err)
	}
	mustCommit(t, wb, refine.Put("state.json", []byte("b1")))
	keys, err := wb.List(ctx, "")
	if err != nil || len(keys) != 1 || mustGet(t, wb, "state.json") != "b1" {
		t.Errorf("after the fenced commit: keys %q, %v; want only state.json = b1", keys, err)
	}
}

// A connection terminated by the server in the middle of a commit
// (pg_terminate_backend, as when a network drops or a DBA kills it) fails
// that commit clearly and applies none of it; the next commit runs on a
// new connection and the session goes on.
func TestConnectionDroppedMidCommit(t *testing.T) {
	dsn := pgtest.Database(t)
	db := open(t, dsn, postgres.Config{})
	admin, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	ctx := t.Context()
	id, st, err := db.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mustCommit(t, st, refine.Put("a", []byte("1")), refine.Put("b", []byte("1")))
	postgres.SetCommitHook(st.(*postgres.Store), func(ctx context.Context, tx pgx.Tx) error {
		var pid int
		if err := tx.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
			return err
		}
		_, err := admin.Exec(ctx, `SELECT pg_terminate_backend($1)`, pid)
		return err
	})
	err = st.Commit(ctx, refine.Put("a", []byte("2")), refine.Put("b", []byte("2")))
	if err == nil || !strings.Contains(err.Error(), "commit to session "+id) {
		t.Fatalf("commit on a terminated connection: error = %v, want one naming the session", err)
	}
	postgres.SetCommitHook(st.(*postgres.Store), nil)
	if got := mustGet(t, st, "a") + mustGet(t, st, "b"); got != "11" {
		t.Errorf("after the dropped commit a+b = %q, want 11 (nothing applied)", got)
	}
	mustCommit(t, st, refine.Put("a", []byte("3")), refine.Put("b", []byte("3")))
	if got := mustGet(t, st, "a") + mustGet(t, st, "b"); got != "33" {
		t.Errorf("after resuming a+b = %q, want 33", got)
	}
}

// Every connection of the pool dropped between commits: the lease row
// outlives connections, so the writer keeps the session.
func TestAllConnectionsDroppedBetweenCommits(t *testing.T) {
	dsn := pgtest.Database(t)
	db := open(t, dsn, postgres.Config{})
	admin, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	ctx := t.Context()
	id, st, err := db.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mustCommit(t, st, refine.Put("a", []byte("1")))
	if _, err := admin.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`); err != nil {
		t.Fatal(err)
	}
	// The first call may land on a dead connection and fail; pgxpool then
	// drops it, so a retry must work.
	if err := st.Commit(ctx, refine.Put("a", []byte("2"))); err != nil {
		if !strings.Contains(err.Error(), "commit to session "+id) {
			t.Errorf("first commit after the drop: error = %v, want one naming the session", err)
		}
		mustCommit(t, st, refine.Put("a", []byte("2")))
	}
	if got := mustGet(t, st, "a"); got != "2" {
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

// BenchmarkSessions1000 lists 1,000 sessions with summary records; the
// target is under 50 ms per call.
func BenchmarkSessions1000(b *testing.B) {
	db := open(b, pgtest.Database(b), postgres.Config{})
	ctx := b.Context()
	base := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	for i := range 1000 {
		_, st, err := db.Create(ctx)
		if err != nil {
			b.Fatal(err)
		}
		sum, _ := json.Marshal(refine.SessionSummary{Round: i % 7, Outcome: "PAUSED", OpenGaps: map[string]int{"HIGH": 1},
			Created: base, Updated: base.Add(time.Duration(i) * time.Minute), Activity: "waiting: conflict-r2-1"})
		if err := st.Commit(ctx, refine.Put(refine.SummaryKey, sum), refine.Put("state.json", []byte(strings.Repeat("s", 4096)))); err != nil {
			b.Fatal(err)
		}
		st.(io.Closer).Close()
	}
	for b.Loop() {
		infos, err := db.Sessions(ctx)
		if err != nil || len(infos) != 1000 {
			b.Fatalf("Sessions: %d, %v", len(infos), err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()*1000/float64(b.N), "ms/Sessions")
}

// BenchmarkCommit4KB commits one 4 KB value per commit over loopback.
func BenchmarkCommit4KB(b *testing.B) {
	db := open(b, pgtest.Database(b), postgres.Config{})
	ctx := b.Context()
	_, st, err := db.Create(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer st.(io.Closer).Close()
	v := []byte(strings.Repeat("x", 4096))
	b.SetBytes(int64(len(v)))
	for b.Loop() {
		if err := st.Commit(ctx, refine.Put("round_003/engineer.md", v)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
}

// BenchmarkOverhead: a 5-round session with 20 ms roles on a PostgreSQL
// session over loopback; the target is total/role-latency ≤ 1.15.
func BenchmarkOverhead(b *testing.B) {
	db := open(b, pgtest.Database(b), postgres.Config{})
	storebench.Overhead(b, func(b *testing.B) refine.Store {
		_, st, err := db.Create(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		return st
	})
}

// The heartbeat keeps an idle writer's lease alive, also across a dropped
// connection, and Close ends it.
func TestHeartbeatRenewsTheLease(t *testing.T) {
	dsn := pgtest.Database(t)
	clk := newClock()
	a := open(t, dsn, postgres.Config{Holder: "a", LeaseTTL: time.Minute, Now: clk.Now})
	tick := make(chan time.Time)
	beats := make(chan error)
	postgres.SetHeartbeat(a, tick, func(err error) { beats <- err })
	b := open(t, dsn, postgres.Config{Holder: "b", LeaseTTL: time.Minute, Heartbeat: -1, Now: clk.Now})
	ctx := t.Context()
	id, wa, err := a.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		clk.Add(40 * time.Second)
		tick <- clk.Now()
		if err := <-beats; err != nil {
			t.Fatalf("renewal: %v", err)
		}
	}
	clk.Add(59 * time.Second)
	if _, err := b.Session(ctx, id); !errors.Is(err, refine.ErrLocked) {
		t.Fatalf("Session 59 s after the last renewal: error = %v, want ErrLocked", err)
	}
	if err := wa.(io.Closer).Close(); err != nil {
		t.Fatal(err)
	}
	wb, err := b.Session(ctx, id)
	if err != nil {
		t.Fatalf("Session after the writer closed: %v", err)
	}
	wb.(io.Closer).Close()
}
