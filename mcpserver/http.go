package mcpserver

import (
	"crypto/subtle"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Guard configures HTTPHandler's protections, the web console's: a Host
// check against DNS rebinding, a token for anything but loopback, and
// cross-origin requests refused.
type Guard struct {
	// Token, when set, is required as "Authorization: Bearer TOKEN".
	// A server listening on anything but loopback must set it.
	Token string
	// Loopback says the server listens on loopback only: requests must
	// then name a loopback host (localhost, 127.0.0.1, [::1]) in Host.
	Loopback bool
	// MaxBodyBytes caps request bodies (0: the SDK's default).
	MaxBodyBytes int64
}

// HTTPHandler serves s over MCP's streamable HTTP transport behind g.
func (s *Server) HTTPHandler(g Guard) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{Logger: s.sdkLog, MaxRequestBodyBytes: g.MaxBodyBytes})
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "refine mcp: cross-origin request refused", http.StatusForbidden)
	}))
	inner := cop.Handler(methodNotFound(h))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.Loopback && !loopbackHost(r.Host) {
			http.Error(w, "refine mcp: Host "+safeHeader(r.Host)+" refused: this server answers to localhost only (DNS rebinding protection)", http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !sameOrigin(o, r.Host) {
			http.Error(w, "refine mcp: cross-origin request refused (Origin "+safeHeader(o)+")", http.StatusForbidden)
			return
		}
		if g.Token != "" {
			tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(g.Token)) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="refine mcp"`)
				http.Error(w, "refine mcp: send the token as: Authorization: Bearer TOKEN", http.StatusUnauthorized)
				return
			}
		}
		inner.ServeHTTP(w, r)
	})
}

// loopbackHost reports whether a Host header names this machine's
// loopback interface.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// sameOrigin reports whether origin is the server's own (scheme aside):
// its host:port is the request's Host.
func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	return strings.EqualFold(u.Host, host)
}

// safeHeader quotes a header value for an error message.
func safeHeader(v string) string {
	if len(v) > 100 {
		v = v[:100]
	}
	return "\"" + strings.Map(printable, v) + "\""
}

func printable(r rune) rune {
	if r < 0x20 || r == 0x7f || r == '"' {
		return '?'
	}
	return r
}
