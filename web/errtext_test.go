package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/refinetest"
	"github.com/refine-spec/refine/store/fs"
)

func TestScrubPaths(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"fs: session /tmp/x/nosuch: not found", "fs: session …: not found"},
		{"fs: open /srv/refine/q2: held by pid 7 (\"/srv/refine/q2/.refine.lock\")", "fs: open …: held by pid 7 (\"…\")"},
		{"/root/a/b is gone", "… is gone"},
		{"dir=/var/lib/x.", "dir=…."},
		{"invalid answer: option Z9 not offered", "invalid answer: option Z9 not offered"},
		{"a 1/2 split and and/or", "a 1/2 split and and/or"},
	} {
		if got := scrubPaths(tc.in); got != tc.want {
			t.Errorf("scrubPaths(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// Errors a remote client sees name the session it asked for, never a
// server path: a 404 for a missing session, a 409 for a session another
// process holds, from a folder Backend whose errors name its folders
// (issue #24: `fs: session /tmp/…/nosuch: not found`).
func TestErrorsNameNoServerPath(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	b, err := fs.OpenBackend(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	clock := refinetest.NewClock()
	id := pausedDemo(t, ctx, b, clock)
	srv, err := New(Config{Backend: b, Configure: func(ctx context.Context, id string, st refine.Store) (refine.Config, error) {
		return demoConfig(st, clock), nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	f := &fixture{t: t, server: srv, http: hs, id: id}

	// Another process's writer holds the session.
	held, err := b.Session(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeStore(held) })

	for _, tc := range []struct {
		method, path, ctype, body string
		code                      int
		names                     string
	}{
		{"GET", "/api/sessions/nosuch", "", "", http.StatusNotFound, "nosuch"},
		{"GET", "/sessions/nosuch", "", "", http.StatusNotFound, "nosuch"},
		{"GET", "/sessions/nosuch/convergence.svg", "", "", http.StatusNotFound, "nosuch"},
		{"GET", "/sessions/nosuch/rounds/1", "", "", http.StatusNotFound, "nosuch"},
		{"POST", "/api/sessions/" + id + "/resume", "application/json", `{}`, http.StatusConflict, id},
		{"POST", "/api/sessions/" + id + "/answers", "application/json", `{"question":"x","key":"A"}`, http.StatusConflict, id},
	} {
		resp, body := f.do(tc.method, tc.path, tc.ctype, tc.body)
		if resp.StatusCode != tc.code {
			t.Errorf("%s %s = %d %s, want %d", tc.method, tc.path, resp.StatusCode, body, tc.code)
		}
		if strings.Contains(body, root) || strings.Contains(body, "/tmp") || strings.Contains(body, ".refine") {
			t.Errorf("%s %s names a server path: %s", tc.method, tc.path, body)
		}
		if !strings.Contains(body, tc.names) {
			t.Errorf("%s %s does not name the session %q: %s", tc.method, tc.path, tc.names, body)
		}
	}
}
