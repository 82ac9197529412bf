package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/llm/replay"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/memory"
)

// demoGaps are testdata/demo/gaps.md as values (the gaps-file parser
// belongs to the CLI).
var demoGaps = []gap.Gap{
	{ID: "GAP-API-001", Severity: gap.High, Title: "Pagination of GET /v1/orders is unspecified"},
	{ID: "GAP-API-002", Severity: gap.High, Title: "Error response format is unspecified"},
	{ID: "GAP-API-003", Severity: gap.Medium, Title: "Rate limits and their headers are unspecified"},
	{ID: "GAP-API-004", Severity: gap.Medium, Title: "Idempotency of POST /v1/orders is unspecified"},
	{ID: "GAP-API-005", Severity: gap.Low, Title: "Versioning and deprecation policy is unspecified"},
}

// demoAnswers are the answers the CLI's demo gives, by question kind and
// round; other questions take their default.
var demoAnswers = map[string]refine.Answer{
	"disagree_rate/2":     {Key: "1"},
	"conflict/2":          {Key: "A", Text: "Integrators sync orders; correctness beats page jumping."},
	"implicit/3":          {Key: "1", Text: "Answer the rate-limit header concern."},
	"divergence/3":        {Key: "rollback", Text: "Roll back to round 2: sign cursors and answer ISSUE-R2-001 this time."},
	"early_termination/3": {Key: "continue"},
}

func demoAnswer(q refine.Question) refine.Answer {
	if a, ok := demoAnswers[fmt.Sprintf("%s/%d", q.Kind, q.Round)]; ok {
		return a
	}
	a, _ := refine.DefaultAsker{}.Ask(context.Background(), q)
	return a
}

// demoConfig is the demo's session configuration over st with the
// recorded role outputs and a fixed clock.
func demoConfig(st refine.Store, clock refine.Clock) refine.Config {
	cfg := refine.DefaultConfig()
	cfg.Store = st
	r := replay.New(os.DirFS("testdata/demo/replay"), replay.WithLabel("demo"))
	// A reopened session continues after the responses it already had.
	if status, err := refine.Inspect(context.Background(), st); err == nil {
		for role, n := range status.Responses {
			r.Resume(role, n)
		}
	}
	cfg.Engineer, cfg.Reviewer = r, r
	cfg.GapsPerRound = 2
	cfg.Clock = clock
	cfg.IDs = &refinetest.IDs{}
	cfg.JitterSeed = 1
	return cfg
}

// fixture is a console over a memory backend holding the demo session
// paused at its first question.
type fixture struct {
	t       *testing.T
	backend *memory.Backend
	server  *Server
	http    *httptest.Server
	id      string
}

func newFixture(t *testing.T, token string) *fixture {
	t.Helper()
	ctx := context.Background()
	clock := refinetest.NewClock()
	n := 0
	b := memory.NewBackend(memory.WithClock(func() time.Time { return time.Date(2026, 1, 12, 14, 0, 0, 0, time.UTC) }),
		memory.WithIDs(func() string { n++; return fmt.Sprintf("demo-%d", n) }))
	t.Cleanup(func() { b.Close() })
	id := pausedDemo(t, ctx, b, clock)
	f := serveFixture(t, b, clock, id, token)
	return f
}

// serveFixture serves the console over b, whose session id plays the
// demo's recordings with clock.
func serveFixture(t *testing.T, b *memory.Backend, clock refine.Clock, id string, token ...string) *fixture {
	t.Helper()
	tok := ""
	if len(token) > 0 {
		tok = token[0]
	}
	hs := httptest.NewUnstartedServer(nil)
	// The console knows the address it listens on, as `refine serve`'s does.
	srv, err := New(Config{Backend: b, Token: tok, Addr: hs.Listener.Addr().String(), Configure: func(ctx context.Context, id string, st refine.Store) (refine.Config, error) {
		return demoConfig(st, clock), nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	hs.Config.Handler = srv
	hs.Start()
	t.Cleanup(hs.Close)
	return &fixture{t: t, backend: b, server: srv, http: hs, id: id}
}

// pausedDemo creates the demo session in b and runs it until it asks its
// first question.
func pausedDemo(t *testing.T, ctx context.Context, b store.Backend, clock refine.Clock) string {
	t.Helper()
	id, st, err := b.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := os.ReadFile("testdata/demo/spec.md")
	if err != nil {
		t.Fatal(err)
	}
	cfg := demoConfig(st, clock)
	cfg.Asker = refine.DeferAsker{}
	cfg.Spec, cfg.Gaps = string(spec), demoGaps
	s, err := refine.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run(ctx)
	if err != nil || out.Status != refine.StatusPaused || len(out.Pending) == 0 {
		t.Fatalf("demo run: %+v, %v; want a pause at a question", out, err)
	}
	closeStore(st)
	return id
}

// do sends a request to the fixture's server, as a same-origin browser
// would for a POST.
func (f *fixture) do(method, path, contentType, body string, hdr ...string) (*http.Response, string) {
	f.t.Helper()
	req, err := http.NewRequest(method, f.http.URL+path, strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	return resp, string(b)
}

func (f *fixture) get(path string, hdr ...string) (*http.Response, string) {
	return f.do(http.MethodGet, path, "", "", hdr...)
}

// status reads the session's API status.
func (f *fixture) status() refine.Status {
	f.t.Helper()
	st, err := f.server.inspect(context.Background(), f.id)
	if err != nil {
		f.t.Fatal(err)
	}
	return st
}

// wait blocks until the console's background runs are done.
func (f *fixture) wait() {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := f.server.Wait(ctx); err != nil {
		f.t.Fatalf("background run did not finish: %v", err)
	}
}

func answerBody(q, key, text string) string {
	b, _ := json.Marshal(answerRequest{Question: q, Key: key, Text: text})
	return string(b)
}
