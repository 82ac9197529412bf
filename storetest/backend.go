package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/refine-spec/refine/convergence"
	"github.com/refine-spec/refine/store"
)

// TestBackend runs the conformance suite against Backends made by open.
//
// open is called once per subtest and must return a new Backend holding no
// sessions, which nothing else uses; it must register closing it with
// t.Cleanup. TestBackend closes every Store it opens.
//
// The suite holds Backends to the store.Backend contract and to these
// rules:
//   - IDs from Create pass store.ValidSessionID and are distinct, also
//     when Create is called concurrently; Session, View, Delete and
//     CreateNamed refuse an invalid ID with store.ErrInvalidKey.
//   - An error wrapping store.ErrLocked names the holder: its message says
//     who holds the session ("held by …", "process 12 holds …").
//   - Closing a writer releases the session, so Session works again.
//   - Sessions lists a session that has no summary record with its ID and
//     an empty outcome, and one that has a record with the record's fields
//     (times compared with time.Time.Equal), newest Updated first.
//   - Backends that implement store.NamedCreator refuse an existing ID
//     with store.ErrSessionExists.
//   - store.ListSessions pages (through store.SessionPager where the
//     Backend has it) walk every session once, forward with Next and back
//     with Prev, in Sessions's order.
//   - On a Backend whose writers are store.Appenders or store.Copiers,
//     what appends and copies leave is stored: a View and a new writer
//     read it as the writer that committed it does, and a summary record
//     they build is what Sessions lists.
func TestBackend(t *testing.T, open func(t *testing.T) store.Backend) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, b store.Backend)
	}{
		{"Empty", testBackendEmpty},
		{"CreateReopen", testBackendCreateReopen},
		{"DistinctIDs", testBackendDistinctIDs},
		{"Isolation", testBackendIsolation},
		{"Lock", testBackendLock},
		{"View", testBackendView},
		{"NotFound", testBackendNotFound},
		{"InvalidIDs", testBackendInvalidIDs},
		{"Delete", testBackendDelete},
		{"CreateNamed", testBackendCreateNamed},
		{"SessionInfo", testBackendSessionInfo},
		{"SessionsOrder", testBackendSessionsOrder},
		{"SessionsPages", testBackendSessionsPages},
		{"ContextCancelled", testBackendContextCancelled},
		{"AppendCopy", testBackendAppendCopy},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := open(t)
			if b == nil {
				t.Fatal("open returned a nil Backend")
			}
			tc.fn(t, b)
		})
	}
}

// closeStore closes st if it holds resources, failing the test on error.
func closeStore(t *testing.T, st store.Store) {
	t.Helper()
	if c, ok := st.(io.Closer); ok {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
}

// create makes a session and closes its writer at the end of the test.
func create(t *testing.T, b store.Backend) (string, store.Store) {
	t.Helper()
	id, st, err := b.Create(t.Context())
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if err := store.ValidSessionID(id); err != nil {
		t.Fatalf("Create returned an invalid ID: %v", err)
	}
	t.Cleanup(func() { closeIfCloser(st) })
	return id, st
}

// closeIfCloser closes st, ignoring errors (a Cleanup after the test may
// close a Store twice).
func closeIfCloser(st store.Store) {
	if c, ok := st.(io.Closer); ok {
		_ = c.Close()
	}
}

func sessions(t *testing.T, b store.Backend) []store.SessionInfo {
	t.Helper()
	infos, err := b.Sessions(t.Context())
	if err != nil {
		t.Fatalf("Sessions: %v", err)
	}
	return infos
}

func ids(infos []store.SessionInfo) []string {
	var out []string
	for _, in := range infos {
		out = append(out, in.ID)
	}
	return out
}

func testBackendEmpty(t *testing.T, b store.Backend) {
	if infos := sessions(t, b); len(infos) != 0 {
		t.Errorf("Sessions on a new backend = %v, want none", ids(infos))
	}
}

func testBackendCreateReopen(t *testing.T, b store.Backend) {
	id, st := create(t, b)
	if keys := list(t, st, ""); len(keys) != 0 {
		t.Errorf("a new session lists %q, want no keys", keys)
	}
	commit(t, st, store.Put("state.json", []byte("v1")), store.Put("round_001/engineer.md", []byte("e")))
	closeStore(t, st)

	again, err := b.Session(t.Context(), id)
	if err != nil {
		t.Fatalf("Session(%q) after closing its writer: %v", id, err)
	}
	defer closeStore(t, again)
	want := map[string]string{"state.json": "v1", "round_001/engineer.md": "e"}
	if diff := cmp.Diff(want, snapshot(t, again)); diff != "" {
		t.Errorf("reopened session (-want +got):\n%s", diff)
	}
	commit(t, again, store.Put("state.json", []byte("v2")))
	if got := string(get(t, again, "state.json")); got != "v2" {
		t.Errorf("after a commit on the reopened session, state.json = %q, want v2", got)
	}
	if diff := cmp.Diff([]string{id}, ids(sessions(t, b))); diff != "" {
		t.Errorf("Sessions IDs (-want +got):\n%s", diff)
	}
}

func testBackendDistinctIDs(t *testing.T, b store.Backend) {
	const n = 8
	var (
		mu   sync.Mutex
		seen = map[string]bool{}
		wg   sync.WaitGroup
	)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, st, err := b.Create(t.Context())
			if err != nil {
				t.Errorf("concurrent Create: %v", err)
				return
			}
			closeIfCloser(st)
			mu.Lock()
			defer mu.Unlock()
			if seen[id] {
				t.Errorf("Create returned %q twice", id)
			}
			seen[id] = true
			if err := store.ValidSessionID(id); err != nil {
				t.Errorf("Create returned an invalid ID: %v", err)
			}
		}()
	}
	wg.Wait()
	if got := len(sessions(t, b)); got != len(seen) {
		t.Errorf("Sessions lists %d sessions after %d distinct Creates", got, len(seen))
	}
}

func testBackendIsolation(t *testing.T, b store.Backend) {
	_, a := create(t, b)
	_, c := create(t, b)
	commit(t, a, store.Put("state.json", []byte("a")), store.Put("only-a.md", []byte("a")))
	commit(t, c, store.Put("state.json", []byte("c")))
	if diff := cmp.Diff(map[string]string{"state.json": "a", "only-a.md": "a"}, snapshot(t, a)); diff != "" {
		t.Errorf("first session (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"state.json": "c"}, snapshot(t, c)); diff != "" {
		t.Errorf("second session (-want +got):\n%s", diff)
	}
}

// wantLocked checks err wraps ErrLocked and names who holds the session.
func wantLocked(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, store.ErrLocked) {
		t.Errorf("%s error = %v, want ErrLocked", what, err)
		return
	}
	if msg := strings.ToLower(err.Error()); !strings.Contains(msg, "hold") && !strings.Contains(msg, "held") {
		t.Errorf("%s error = %q, want it to name the holder (\"held by …\")", what, err)
	}
}

func testBackendLock(t *testing.T, b store.Backend) {
	ctx := t.Context()
	id, st := create(t, b)
	commit(t, st, store.Put("state.json", []byte("1")))
	second, err := b.Session(ctx, id)
	if err == nil {
		closeStore(t, second)
	}
	wantLocked(t, "Session while Create's writer is open", err)

	closeStore(t, st)
	w, err := b.Session(ctx, id)
	if err != nil {
		t.Fatalf("Session after the writer closed: %v", err)
	}
	third, err := b.Session(ctx, id)
	if err == nil {
		closeStore(t, third)
	}
	wantLocked(t, "Session while Session's writer is open", err)
	commit(t, w, store.Put("state.json", []byte("2")))
	closeStore(t, w)

	w, err = b.Session(ctx, id)
	if err != nil {
		t.Fatalf("Session after the second writer closed: %v", err)
	}
	defer closeStore(t, w)
	if got := string(get(t, w, "state.json")); got != "2" {
		t.Errorf("state.json = %q, want 2", got)
	}
}

func testBackendView(t *testing.T, b store.Backend) {
	ctx := t.Context()
	id, st := create(t, b)
	commit(t, st, store.Put("state.json", []byte("1")))
	v, err := b.View(ctx, id)
	if err != nil {
		t.Fatalf("View while a writer is open: %v", err)
	}
	defer closeStore(t, v)
	if got := string(get(t, v, "state.json")); got != "1" {
		t.Errorf("View: state.json = %q, want 1", got)
	}
	commit(t, st, store.Put("state.json", []byte("2")), store.Put("new.md", []byte("n")))
	if got := string(get(t, v, "state.json")); got != "2" {
		t.Errorf("View after the writer committed: state.json = %q, want 2", got)
	}
	if diff := cmp.Diff([]string{"new.md", "state.json"}, list(t, v, "")); diff != "" {
		t.Errorf("View List (-want +got):\n%s", diff)
	}
	if err := v.Commit(ctx, store.Put("x.md", []byte("x"))); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("View Commit error = %v, want ErrReadOnly", err)
	}
	if _, err := st.Get(ctx, "x.md"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("after a refused View commit, Get(x.md) error = %v, want ErrNotFound", err)
	}
	// A view takes no lock: the writer still holds the session, and after
	// it closes a new writer can open it while the view is still open.
	other, err := b.Session(ctx, id)
	if err == nil {
		closeStore(t, other)
	}
	wantLocked(t, "Session while a writer and a view are open", err)
	closeStore(t, st)
	w, err := b.Session(ctx, id)
	if err != nil {
		t.Fatalf("Session with only a view open: %v", err)
	}
	closeStore(t, w)
}

func testBackendNotFound(t *testing.T, b store.Backend) {
	ctx := t.Context()
	create(t, b) // one session exists, just not this one
	const id = "no-such-session"
	if st, err := b.Session(ctx, id); !errors.Is(err, store.ErrNotFound) {
		if err == nil {
			closeStore(t, st)
		}
		t.Errorf("Session(%q) error = %v, want ErrNotFound", id, err)
	}
	if st, err := b.View(ctx, id); !errors.Is(err, store.ErrNotFound) {
		if err == nil {
			closeStore(t, st)
		}
		t.Errorf("View(%q) error = %v, want ErrNotFound", id, err)
	}
	if err := b.Delete(ctx, id); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Delete(%q) error = %v, want ErrNotFound", id, err)
	}
	if got := len(sessions(t, b)); got != 1 {
		t.Errorf("Sessions lists %d sessions, want 1: a failed Session must not create one", got)
	}
}

// badIDs are IDs every Backend refuses.
var badIDs = []string{
	"", ".", "..", ".hidden", "../x", "a/b", `a\b`, "a b", "a\x00b", "caf\u00e9", "a:b",
	strings.Repeat("x", store.MaxSessionIDLen+1),
}

func testBackendInvalidIDs(t *testing.T, b store.Backend) {
	ctx := t.Context()
	for _, id := range badIDs {
		if st, err := b.Session(ctx, id); !errors.Is(err, store.ErrInvalidKey) {
			if err == nil {
				closeStore(t, st)
			}
			t.Errorf("Session(%q) error = %v, want ErrInvalidKey", id, err)
		}
		if st, err := b.View(ctx, id); !errors.Is(err, store.ErrInvalidKey) {
			if err == nil {
				closeStore(t, st)
			}
			t.Errorf("View(%q) error = %v, want ErrInvalidKey", id, err)
		}
		if err := b.Delete(ctx, id); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("Delete(%q) error = %v, want ErrInvalidKey", id, err)
		}
		if nc, ok := b.(store.NamedCreator); ok {
			if st, err := nc.CreateNamed(ctx, id); !errors.Is(err, store.ErrInvalidKey) {
				if err == nil {
					closeStore(t, st)
				}
				t.Errorf("CreateNamed(%q) error = %v, want ErrInvalidKey", id, err)
			}
		}
	}
	if infos := sessions(t, b); len(infos) != 0 {
		t.Errorf("Sessions after refused IDs = %v, want none", ids(infos))
	}
	// The longest valid ID works.
	if nc, ok := b.(store.NamedCreator); ok {
		long := strings.Repeat("L", store.MaxSessionIDLen)
		st, err := nc.CreateNamed(ctx, long)
		if err != nil {
			t.Fatalf("CreateNamed(%d-byte ID): %v", len(long), err)
		}
		closeStore(t, st)
	}
}

func testBackendDelete(t *testing.T, b store.Backend) {
	ctx := t.Context()
	id, st := create(t, b)
	keep, other := create(t, b)
	commit(t, st, store.Put("state.json", []byte("1")), store.Put("round_001/x.md", []byte("x")))
	commit(t, other, store.Put("state.json", []byte("keep")))
	wantLocked(t, "Delete while a writer is open", b.Delete(ctx, id))
	closeStore(t, st)
	if err := b.Delete(ctx, id); err != nil {
		t.Fatalf("Delete after the writer closed: %v", err)
	}
	if diff := cmp.Diff([]string{keep}, ids(sessions(t, b))); diff != "" {
		t.Errorf("Sessions after Delete (-want +got):\n%s", diff)
	}
	if st, err := b.Session(ctx, id); !errors.Is(err, store.ErrNotFound) {
		if err == nil {
			closeStore(t, st)
		}
		t.Errorf("Session of a deleted session: error = %v, want ErrNotFound", err)
	}
	if err := b.Delete(ctx, id); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second Delete error = %v, want ErrNotFound", err)
	}
	if got := string(get(t, other, "state.json")); got != "keep" {
		t.Errorf("the other session's state.json = %q, want keep", got)
	}
}

func testBackendCreateNamed(t *testing.T, b store.Backend) {
	nc, ok := b.(store.NamedCreator)
	if !ok {
		t.Skip("the Backend does not implement store.NamedCreator")
	}
	ctx := t.Context()
	const id = "imported-1"
	st, err := nc.CreateNamed(ctx, id)
	if err != nil {
		t.Fatalf("CreateNamed(%q): %v", id, err)
	}
	commit(t, st, store.Put("state.json", []byte("1")))
	if again, err := nc.CreateNamed(ctx, id); !errors.Is(err, store.ErrSessionExists) {
		if err == nil {
			closeStore(t, again)
		}
		t.Errorf("CreateNamed of an existing ID while its writer is open: error = %v, want ErrSessionExists", err)
	}
	closeStore(t, st)
	if again, err := nc.CreateNamed(ctx, id); !errors.Is(err, store.ErrSessionExists) {
		if err == nil {
			closeStore(t, again)
		}
		t.Errorf("CreateNamed of an existing ID: error = %v, want ErrSessionExists", err)
	}
	w, err := b.Session(ctx, id)
	if err != nil {
		t.Fatalf("Session(%q): %v", id, err)
	}
	defer closeStore(t, w)
	if got := string(get(t, w, "state.json")); got != "1" {
		t.Errorf("state.json = %q, want 1 (a refused CreateNamed must not reset the session)", got)
	}
}

func putSummary(t *testing.T, st store.Store, s store.SessionSummary) {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	commit(t, st, store.Put(store.SummaryKey, b))
}

func testBackendSessionInfo(t *testing.T, b store.Backend) {
	bare, _ := create(t, b)
	withSummary, st := create(t, b)
	base := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC) // later than any real clock here
	want := store.SessionSummary{
		Round:    3,
		Outcome:  convergence.Outcome("PAUSED"),
		OpenGaps: map[string]int{"HIGH": 2, "LOW": 1},
		Pending:  1,
		Created:  base,
		Updated:  base.Add(90 * time.Second),
		Activity: "waiting: conflict-r3-1",
	}
	putSummary(t, st, want)

	infos := sessions(t, b)
	if diff := cmp.Diff([]string{withSummary, bare}, ids(infos)); diff != "" {
		t.Fatalf("Sessions IDs, newest activity first (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(store.SessionInfo{ID: withSummary, SessionSummary: want}, infos[0], cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("SessionInfo from %s (-want +got):\n%s", store.SummaryKey, diff)
	}
	if got := infos[1]; got.Outcome != "" || got.Round != 0 || got.Pending != 0 {
		t.Errorf("SessionInfo of a session without %s = %+v, want round 0, no outcome, nothing pending", store.SummaryKey, got)
	}

	// The listing follows the latest record.
	want.Round, want.Outcome, want.Updated = 4, convergence.Outcome("RUNNING"), base.Add(time.Hour)
	putSummary(t, st, want)
	infos = sessions(t, b)
	if len(infos) != 2 {
		t.Fatalf("Sessions = %v, want 2 sessions", ids(infos))
	}
	if diff := cmp.Diff(store.SessionInfo{ID: withSummary, SessionSummary: want}, infos[0], cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("SessionInfo after a newer %s (-want +got):\n%s", store.SummaryKey, diff)
	}
}

func testBackendSessionsOrder(t *testing.T, b store.Backend) {
	base := time.Date(2030, 6, 1, 0, 0, 0, 0, time.UTC)
	// Updated times out of creation order, so a backend listing in
	// creation or ID order fails.
	offsets := []time.Duration{2 * time.Hour, 0, 5 * time.Hour, time.Hour}
	byOffset := map[time.Duration]string{}
	for i, off := range offsets {
		id, st := create(t, b)
		putSummary(t, st, store.SessionSummary{Round: i, Outcome: "RUNNING", Created: base, Updated: base.Add(off)})
		closeStore(t, st)
		byOffset[off] = id
	}
	want := []string{byOffset[5*time.Hour], byOffset[2*time.Hour], byOffset[time.Hour], byOffset[0]}
	if diff := cmp.Diff(want, ids(sessions(t, b))); diff != "" {
		t.Errorf("Sessions order, newest Updated first (-want +got):\n%s", diff)
	}
}

func testBackendContextCancelled(t *testing.T, b store.Backend) {
	id, st := create(t, b)
	closeStore(t, st)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	calls := []struct {
		name string
		call func() error
	}{
		{"Create", func() error {
			_, st, err := b.Create(ctx)
			if err == nil {
				closeIfCloser(st)
			}
			return err
		}},
		{"Session", func() error {
			st, err := b.Session(ctx, id)
			if err == nil {
				closeIfCloser(st)
			}
			return err
		}},
		{"Sessions", func() error { _, err := b.Sessions(ctx); return err }},
		{"Delete", func() error { return b.Delete(ctx, id) }},
	}
	for _, c := range calls {
		if err := c.call(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: error = %v, want context.Canceled", c.name, err)
		}
	}
	if got := ids(sessions(t, b)); !cmp.Equal(got, []string{id}) {
		t.Errorf("Sessions after cancelled calls = %q, want [%s]", got, id)
	}
}

func testBackendSessionsPages(t *testing.T, b store.Backend) {
	ctx := t.Context()
	base := time.Date(2030, 6, 1, 0, 0, 0, 0, time.UTC)
	// Seven sessions, pairs sharing a time: the ID breaks ties.
	for i := range 7 {
		_, st := create(t, b)
		putSummary(t, st, store.SessionSummary{Round: i, Outcome: "RUNNING", Created: base, Updated: base.Add(time.Duration(i/2) * time.Minute)})
		closeStore(t, st)
	}
	want := ids(sessions(t, b))
	var forward []string
	var pages []store.SessionPage
	req := store.PageRequest{Limit: 3}
	for range 10 {
		p, err := store.ListSessions(ctx, b, req)
		if err != nil {
			t.Fatalf("ListSessions(%+v): %v", req, err)
		}
		pages = append(pages, p)
		forward = append(forward, ids(p.Sessions)...)
		if p.Next == "" {
			break
		}
		req = store.PageRequest{After: p.Next, Limit: 3}
	}
	if diff := cmp.Diff(want, forward); diff != "" {
		t.Errorf("pages forward against Sessions (-want +got):\n%s", diff)
	}
	if len(pages) != 3 || pages[0].Prev != "" {
		t.Errorf("%d pages, first page Prev %q: want 3 pages of at most 3, none before the first", len(pages), pages[0].Prev)
	}
	var back []string
	p := pages[len(pages)-1]
	back = ids(p.Sessions)
	for p.Prev != "" {
		var err error
		p, err = store.ListSessions(ctx, b, store.PageRequest{Before: p.Prev, Limit: 3})
		if err != nil {
			t.Fatalf("ListSessions(before): %v", err)
		}
		back = append(ids(p.Sessions), back...)
	}
	if diff := cmp.Diff(want, back); diff != "" {
		t.Errorf("pages back with Prev (-want +got):\n%s", diff)
	}
	if _, err := store.ListSessions(ctx, b, store.PageRequest{After: "not a cursor"}); !errors.Is(err, store.ErrInvalidCursor) {
		t.Errorf("a bad cursor: %v, want store.ErrInvalidCursor", err)
	}
}
