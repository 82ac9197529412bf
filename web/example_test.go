package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/llm/replay"
	"github.com/refine-spec/refine/store/memory"
	"github.com/refine-spec/refine/web"
)

// A console over an in-memory backend that drives sessions with recorded
// role outputs. A real host serves it with http.ListenAndServe on a
// loopback address, or behind a token.
func Example() {
	backend := memory.NewBackend()
	defer backend.Close()
	console, err := web.New(web.Config{
		Backend: backend,
		// Configure gives each opened session its roles; the console adds
		// the Store, an Asker that defers every question, and progress.
		Configure: func(ctx context.Context, id string, st refine.Store) (refine.Config, error) {
			cfg := refine.DefaultConfig()
			r := replay.Dir("testdata/demo/replay")
			if status, err := refine.Inspect(ctx, st); err == nil {
				for role, n := range status.Responses {
					r.Resume(role, n) // continue after the responses already received
				}
			}
			cfg.Engineer, cfg.Reviewer = r, r
			return cfg, nil
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer console.Close()

	srv := httptest.NewServer(console)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/api/sessions")
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println(resp.Status, resp.Header.Get("Content-Type"))
	// Output: 200 OK application/json; charset=utf-8
}
