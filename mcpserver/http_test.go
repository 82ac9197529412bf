package mcpserver

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The HTTP guard: loopback Host only, same Origin only, the token when set.
func TestHTTPGuard(t *testing.T) {
	s := newServer(t, Config{})
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, tt := range []struct {
		name   string
		guard  Guard
		host   string
		origin string
		auth   string
		want   int
	}{
		{"loopback, own host", Guard{Loopback: true}, "", "", "", http.StatusOK},
		{"loopback, localhost name", Guard{Loopback: true}, "localhost:1234", "", "", http.StatusOK},
		{"loopback, foreign host", Guard{Loopback: true}, "attacker.example", "", "", http.StatusForbidden},
		{"loopback, foreign host with loopback-looking name", Guard{Loopback: true}, "127.0.0.1.attacker.example", "", "", http.StatusForbidden},
		{"cross-origin", Guard{Loopback: true}, "", "http://attacker.example", "", http.StatusForbidden},
		{"same origin", Guard{Loopback: true}, "", "SELF", "", http.StatusOK},
		{"token missing", Guard{Token: "s3cret"}, "", "", "", http.StatusUnauthorized},
		{"token wrong", Guard{Token: "s3cret"}, "", "", "Bearer nope", http.StatusUnauthorized},
		{"token right", Guard{Token: "s3cret"}, "", "", "Bearer s3cret", http.StatusOK},
	} {
		t.Run(tt.name, func(t *testing.T) {
			hs := httptest.NewServer(s.HTTPHandler(tt.guard))
			defer hs.Close()
			req, _ := http.NewRequest(http.MethodPost, hs.URL+"/", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tt.host != "" {
				req.Host = tt.host
			}
			switch tt.origin {
			case "":
			case "SELF":
				req.Header.Set("Origin", hs.URL)
			default:
				req.Header.Set("Origin", tt.origin)
			}
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			resp, err := hs.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			msg, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("status %d, want %d: %s", resp.StatusCode, tt.want, msg)
			}
		})
	}
}

// An SDK client with the token drives the server over HTTP.
func TestHTTPClientWithToken(t *testing.T) {
	s := newServer(t, Config{})
	hs := httptest.NewServer(s.HTTPHandler(Guard{Token: "s3cret", Loopback: true}))
	defer hs.Close()
	hc := &http.Client{Transport: bearer{"s3cret", http.DefaultTransport}}
	cl := mcp.NewClient(&mcp.Implementation{Name: "http"}, nil)
	cs, err := cl.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "refine_sessions", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("refine_sessions over HTTP: %v %v", err, res)
	}
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// Over streamable HTTP a session runs to the end on both protocol paths.
func TestHTTPSessionRunsToComplete(t *testing.T) {
	for _, proto := range protocols {
		t.Run(proto, func(t *testing.T) {
			ctx := context.Background()
			s := newServer(t, Config{MaxRoundTrips: 4})
			hs := httptest.NewServer(s.HTTPHandler(Guard{Loopback: true}))
			t.Cleanup(hs.Close) // after the client's Close, registered later
			c := connect(t, s, clientOpts{protocol: proto, sampling: true, elicit: scripted,
				transport: &mcp.StreamableClientTransport{Endpoint: hs.URL}})
			rep, res := c.call(ctx, "refine_start", startArgs(t))
			if res.IsError {
				t.Fatal(textOf(res))
			}
			checkDemoComplete(t, s, c, c.untilStops(ctx, rep))
		})
	}
}
