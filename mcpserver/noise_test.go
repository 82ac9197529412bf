package mcpserver

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// rawClient speaks streamable HTTP by hand: it never opens the GET
// stream, as the protocol allows.
type rawClient struct {
	t       *testing.T
	url     string
	session string
	version string
}

func (c *rawClient) post(body string) (int, string, http.Header) {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
		req.Header.Set("Mcp-Protocol-Version", c.version)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		c.session = id
	}
	return resp.StatusCode, string(b), resp.Header
}

func (c *rawClient) initialize() {
	c.t.Helper()
	code, body, _ := c.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + c.version + `","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if code != http.StatusOK {
		c.t.Fatalf("initialize: %d %s", code, body)
	}
	if code, body, _ := c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != http.StatusAccepted {
		c.t.Fatalf("initialized: %d %s", code, body)
	}
}

// records collects log records, and sends those about list_changed on a
// channel.
type records struct {
	mu      sync.Mutex
	all     []slog.Record
	changed chan slog.Record
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	r.all = append(r.all, rec)
	r.mu.Unlock()
	if strings.Contains(rec.Message, "list_changed") {
		select {
		case r.changed <- rec:
		default:
		}
	}
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

// A list_changed notification to a client without a GET stream is dropped
// quietly: logged at Debug, not Warn (issue #39: one Warn a session).
func TestListChangedWithoutStreamIsNotAWarning(t *testing.T) {
	rec := &records{changed: make(chan slog.Record, 1)}
	s := newServer(t, Config{Logger: slog.New(rec)})
	hs := httptest.NewServer(s.HTTPHandler(Guard{Loopback: true}))
	defer hs.Close()
	c := &rawClient{t: t, url: hs.URL, version: "2025-11-25"}
	c.initialize()
	s.addResource(uriPrefix+"x/status.md", "x status.md", "Session x: status", "text/markdown")
	select {
	case r := <-rec.changed:
		if r.Level != slog.LevelDebug {
			t.Errorf("logged at %v, want DEBUG: %s", r.Level, r.Message)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the notification was never attempted")
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, r := range rec.all {
		if r.Level >= slog.LevelWarn {
			t.Errorf("logged at %v: %s", r.Level, r.Message)
		}
	}
}

// An unknown method answers JSON-RPC error -32601 on every protocol
// version; before 2026-07-28 the SDK answered HTTP 400 "JSON RPC not
// handled" in plain text (issue #39). A notification of an unknown method
// is accepted and ignored.
func TestUnknownMethodIsMethodNotFound(t *testing.T) {
	s := newServer(t, Config{})
	hs := httptest.NewServer(s.HTTPHandler(Guard{Loopback: true}))
	defer hs.Close()
	for _, version := range []string{"2025-03-26", "2025-06-18", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			c := &rawClient{t: t, url: hs.URL, version: version}
			c.initialize()
			code, body, h := c.post(`{"jsonrpc":"2.0","id":"q-7","method":"tools/frobnicate","params":{}}`)
			var resp struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal([]byte(body), &resp); err != nil {
				t.Fatalf("status %d, %s: not a JSON-RPC answer: %v", code, body, err)
			}
			if code != http.StatusOK || resp.Error.Code != -32601 || string(resp.ID) != `"q-7"` || resp.JSONRPC != "2.0" ||
				!strings.Contains(resp.Error.Message, "tools/frobnicate") || !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
				t.Errorf("status %d, %s (%s), want 200 and error -32601 for id \"q-7\"", code, body, h.Get("Content-Type"))
			}
			if code, body, _ := c.post(`{"jsonrpc":"2.0","method":"notifications/frobnicated"}`); code != http.StatusAccepted || body != "" {
				t.Errorf("unknown notification: %d %q, want 202 and no body", code, body)
			}
			// A known method still works, and a malformed request is still
			// refused.
			if code, body, _ := c.post(`{"jsonrpc":"2.0","id":2,"method":"ping"}`); code != http.StatusOK || !strings.Contains(body, `"result"`) {
				t.Errorf("ping: %d %s", code, body)
			}
			if code, _, _ := c.post(`{"jsonrpc":"2.0","id":3,"method":"ping"`); code != http.StatusBadRequest {
				t.Errorf("malformed body: %d, want 400", code)
			}
		})
	}
}

// On protocol 2026-07-28 the SDK answers -32601 itself (with HTTP 404, as
// that version says); the server leaves that answer alone.
func TestUnknownMethodOnNewProtocol(t *testing.T) {
	s := newServer(t, Config{})
	hs := httptest.NewServer(s.HTTPHandler(Guard{Loopback: true}))
	defer hs.Close()
	req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(`{"jsonrpc":"2.0","id":"q-7","method":"tools/frobnicate","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(b), `"code":-32601`) {
		t.Errorf("%d %s, want 404 and error -32601", resp.StatusCode, b)
	}
}
