package web

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/refine-spec/refine/internal/termtext/termtexttest"
	"github.com/refine-spec/refine/store/memory"
)

// The console's pages and its live API show the hostile
// corpus by the escape policy: no ESC, C1, carriage return or bidi
// override reaches the browser raw, and an RTL sentence with its RLM
// marks shows unchanged (issue #39: a session page carried 18 ESC, 3 BEL,
// 3 C1 CSI and 3 U+202E from a Reviewer answer). An HTTP test of the
// HTML the browser gets.
func TestConsoleShowsHostileTextByThePolicy(t *testing.T) {
	ctx := context.Background()
	b := memory.NewBackend()
	t.Cleanup(func() { b.Close() })
	id, st, err := b.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	termtexttest.Session(t, st)
	closeStore(st)
	srv, err := New(Config{Backend: b})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	get := func(path string) string {
		t.Helper()
		resp, err := hs.Client().Get(hs.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d\n%s", path, resp.StatusCode, body)
		}
		return string(body)
	}
	for _, path := range []string{"/sessions/" + id, "/sessions/" + id + "/rounds/1"} {
		termtexttest.Check(t, "GET "+path, termtexttest.Markup, get(path))
	}
	// The chart is drawn from the convergence rows: numbers and fixed
	// labels, no model text; the policy applies to it all the same.
	termtexttest.NoRaw(t, "GET convergence.svg", get("/sessions/"+id+"/convergence.svg"))
	// status.md writes the title in a table cell, a carriage return as a
	// space.
	status := get("/sessions/" + id + "/files/status.md")
	termtexttest.NoRaw(t, "GET status.md", status)
	if !strings.Contains(status, "Offset &lt;U+202E&gt;DETAVITCA&lt;U+202C&gt;") || !strings.Contains(status, termtexttest.RTL) {
		t.Errorf("status.md's page does not show the title by the policy")
	}
	// The question's form quotes what the Reviewer's parser kept.
	page := get("/sessions/" + id)
	if !strings.Contains(page, "Conflict") || !strings.Contains(page, `Offset &lt;U+202E&gt;DETAVITCA&lt;U+202C&gt;; \x1b[2J`) {
		t.Errorf("the session page does not show the question's finding by the policy")
	}
	// The API's JSON writes them as \u escapes that decode to the text.
	api := get("/api/sessions/" + id)
	termtexttest.Check(t, "GET /api/sessions/{id}", termtexttest.JSON, api)
	var decoded struct {
		Gaps []struct {
			Title string `json:"title"`
		} `json:"gaps"`
	}
	if err := json.Unmarshal([]byte(api), &decoded); err != nil || len(decoded.Gaps) == 0 || decoded.Gaps[0].Title != termtexttest.Title {
		t.Errorf("the API's JSON does not decode to the title verbatim: %v", err)
	}
	termtexttest.NoRaw(t, "GET /api/sessions/{id}/live", get("/api/sessions/"+id+"/live"))
	// The session list shows the activity ("waiting: …").
	list := get("/")
	for _, r := range []string{"\x1b", "\u202e", "\u009b"} {
		if strings.Contains(list, r) {
			t.Errorf("the session list has %q raw", r)
		}
	}
}
