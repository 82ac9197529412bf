package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/refine-spec/refine/internal/termtext"
)

// quietHandler is the SDK's logger: it logs a notification the transport
// had nowhere to deliver at Debug, not Warn. Over streamable HTTP a
// list_changed or updated notification goes on the client's GET stream,
// which the protocol lets a client leave closed: the notification is then
// dropped by design, not by a fault of the server, and one Warn a session
// was noise (issue #39).
type quietHandler struct{ slog.Handler }

func (h quietHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.Handler.Enabled(ctx, l) || l == slog.LevelWarn && h.Handler.Enabled(ctx, slog.LevelDebug)
}

func (h quietHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelWarn && undeliverable(r.Message) {
		if !h.Handler.Enabled(ctx, slog.LevelDebug) {
			return nil
		}
		d := slog.NewRecord(r.Time, slog.LevelDebug, r.Message, r.PC)
		r.Attrs(func(a slog.Attr) bool { d.AddAttrs(a); return true })
		return h.Handler.Handle(ctx, d)
	}
	if !h.Handler.Enabled(ctx, r.Level) {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h quietHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return quietHandler{h.Handler.WithAttrs(as)}
}

func (h quietHandler) WithGroup(name string) slog.Handler {
	return quietHandler{h.Handler.WithGroup(name)}
}

// undeliverable reports whether msg is the SDK's report of a notification
// its transport rejected ("calling notifications/resources/list_changed:
// rejected by transport: …").
func undeliverable(msg string) bool {
	return strings.HasPrefix(msg, "calling notifications/") && strings.Contains(msg, "rejected by transport")
}

// maxCallBytes bounds what methodNotFound keeps of a request body to find
// the call's ID: an unknown method with a larger body keeps the SDK's
// answer.
const maxCallBytes = 1 << 20

// methodNotFound answers a JSON-RPC call of a method the server does not
// have with error -32601 (Method not found) on every protocol version, as
// JSON-RPC 2.0 says. The SDK does so (with HTTP 404) from protocol
// 2026-07-28 on, and before that answers HTTP 400 "JSON RPC not handled"
// in plain text, which a client cannot tell from a malformed request. A
// notification of an unknown method is accepted and ignored (HTTP 202), as
// JSON-RPC answers no notification.
func methodNotFound(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		kept := &capped{max: maxCallBytes}
		r.Body = teeBody{r.Body, kept}
		rw := &holdBadRequest{ResponseWriter: w}
		next.ServeHTTP(rw, r)
		rw.finish(kept)
	})
}

// capped keeps the first max bytes written to it, and whether there were
// more.
type capped struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); len(p) > room {
		c.over = true
		p = p[:max(room, 0)]
	}
	c.buf.Write(p)
	return len(p), nil
}

type teeBody struct {
	io.ReadCloser
	kept *capped
}

func (t teeBody) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	t.kept.Write(p[:n])
	return n, err
}

// holdBadRequest passes a response through, except one with status 400,
// which it holds so that finish can replace the SDK's "not handled".
type holdBadRequest struct {
	http.ResponseWriter
	status int // the held status; 0 while passing through
	held   bytes.Buffer
	wrote  bool
}

func (h *holdBadRequest) WriteHeader(code int) {
	if !h.wrote && code == http.StatusBadRequest {
		h.status, h.wrote = code, true
		return
	}
	h.wrote = true
	h.ResponseWriter.WriteHeader(code)
}

func (h *holdBadRequest) Write(p []byte) (int, error) {
	if !h.wrote {
		h.WriteHeader(http.StatusOK)
	}
	if h.status != 0 {
		return h.held.Write(p)
	}
	return h.ResponseWriter.Write(p)
}

// Flush passes through: the SDK streams events.
func (h *holdBadRequest) Flush() {
	if h.status != 0 {
		return
	}
	if f, ok := h.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (h *holdBadRequest) Unwrap() http.ResponseWriter { return h.ResponseWriter }

// finish sends the held response, or, when the SDK refused the request as
// a method it does not handle, the JSON-RPC answer.
func (h *holdBadRequest) finish(body *capped) {
	if h.status == 0 {
		return
	}
	w := h.ResponseWriter
	if strings.HasPrefix(h.held.String(), "JSON RPC not handled") && !body.over {
		var call struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(body.buf.Bytes(), &call) == nil && call.Method != "" {
			w.Header().Del("X-Content-Type-Options")
			if len(call.ID) == 0 || string(call.ID) == "null" {
				w.Header().Del("Content-Type")
				w.WriteHeader(http.StatusAccepted)
				return
			}
			msg, _ := json.Marshal(fmt.Sprintf("Method not found: %q is not a method of this server", call.Method))
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":%s}}`+"\n", call.ID, msg)
			return
		}
	}
	w.WriteHeader(h.status)
	_, _ = h.held.WriteTo(w)
}

// escapeToolText applies refine's escape policy (package termtext) to the
// text of every tool result, errors included: the client's model reads
// it, and a client may print it on the user's terminal, so no control
// character or bidi override a model wrote reaches either raw. The
// structured content is data and stays verbatim, as JSON output does;
// resources are the session's files, verbatim too.
func escapeToolText(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if r, ok := res.(*mcp.CallToolResult); ok && r != nil {
			for _, c := range r.Content {
				if t, ok := c.(*mcp.TextContent); ok {
					t.Text = termtext.Escape(t.Text)
				}
			}
		}
		return res, err
	}
}
