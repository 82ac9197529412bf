package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// The session list and GET /api/sessions page by a keyset cursor: the
// Link header and the page's links walk every session once (issue #30).
func TestSessionListPages(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	for range 4 {
		_, st, err := f.backend.Create(ctx)
		if err != nil {
			t.Fatal(err)
		}
		closeStore(st)
	}
	seen := map[string]bool{}
	path := "/api/sessions?limit=2"
	for pages := 0; path != ""; pages++ {
		if pages > 5 {
			t.Fatal("no last page")
		}
		resp, body := f.get(path)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
		}
		var list []struct{ ID string }
		if err := json.Unmarshal([]byte(body), &list); err != nil || len(list) == 0 || len(list) > 2 {
			t.Fatalf("GET %s: %d sessions, %v: %s", path, len(list), err, body)
		}
		for _, s := range list {
			if seen[s.ID] {
				t.Errorf("%s listed twice", s.ID)
			}
			seen[s.ID] = true
		}
		path = ""
		if link := resp.Header.Get("Link"); strings.Contains(link, `rel="next"`) {
			path = strings.TrimPrefix(strings.Split(link, ">")[0], "<")
			if resp.Header.Get("X-Next-Cursor") == "" {
				t.Errorf("Link without X-Next-Cursor")
			}
		}
	}
	if len(seen) != 5 {
		t.Errorf("the walk listed %d sessions, want 5", len(seen))
	}
	resp, body := f.get("/?limit=2")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `rel="next"`) || strings.Contains(body, `rel="prev"`) {
		t.Errorf("first page of the list: %d, want an Older link and no Newer one:\n%s", resp.StatusCode, body)
	}
	if resp, _ := f.get("/api/sessions?after=nonsense"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a bad cursor: %d, want 400", resp.StatusCode)
	}
	if resp, _ := f.get("/?limit=x"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a bad limit: %d, want 400", resp.StatusCode)
	}
}
