package web

import (
	"fmt"
	"net"
	"net/http"
	"strings"
)

// The Host check against DNS rebinding.
//
// A page on evil.example whose name an attacker re-points at 127.0.0.1
// reaches a console on loopback as the same origin: its requests carry
// Host: evil.example:PORT and, for a POST, a matching Origin, so neither
// the cross-origin check nor the absence of a token stops them. The
// console therefore answers only requests whose Host names it: the
// address it listens on (Config.Addr), localhost, 127.0.0.1 or [::1]
// (each with its port), or one of Config.AllowedHosts (a reverse proxy's
// name). Every other request gets 403 before any handler runs; one
// without a Host header (HTTP/1.0, a handler called in process) is no
// browser's and passes. An IP
// address is no rebinding (an attacker's page cannot take that origin),
// so a console listening on every interface also answers a Host that is
// any IP address with its port.

// hostRule is one accepted Host: a name (lowercase, an IP in canonical
// form) and a port, "" for any.
type hostRule struct{ name, port string }

// hostPolicy decides which Host headers the console answers.
type hostPolicy struct {
	rules []hostRule
	// anyIP accepts any IP address (with port): the console listens on
	// every interface.
	anyIP bool
	// port is the port the console listens on, "" when unknown.
	port string
}

// newHostPolicy builds the policy of a console listening on addr (""
// when unknown: the loopback names on any port) that also answers to
// allowed, each "name" (any port) or "name:port".
func newHostPolicy(addr string, allowed []string) (*hostPolicy, error) {
	p := &hostPolicy{}
	if addr != "" {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("web: Config.Addr %q: %w", addr, err)
		}
		p.port = port
		switch ip := net.ParseIP(host); {
		case host == "" || ip != nil && ip.IsUnspecified():
			p.anyIP = true
		default:
			p.rules = append(p.rules, hostRule{canonicalHost(host), port})
		}
	}
	for _, name := range []string{"localhost", "127.0.0.1", "::1"} {
		p.rules = append(p.rules, hostRule{name, p.port})
	}
	for _, a := range allowed {
		a = strings.TrimSpace(a)
		host, port, err := net.SplitHostPort(a)
		if err != nil {
			host, port = strings.Trim(a, "[]"), "" // no port: any
		}
		if host == "" || strings.ContainsAny(host, "/ \t") {
			return nil, fmt.Errorf("web: Config.AllowedHosts: %q is not a host name (give NAME or NAME:PORT)", a)
		}
		p.rules = append(p.rules, hostRule{canonicalHost(host), port})
	}
	return p, nil
}

// canonicalHost lowercases a host name without its trailing dot, and
// writes an IP address in canonical form.
func canonicalHost(h string) string {
	h = strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
	if ip := net.ParseIP(h); ip != nil {
		return ip.String()
	}
	return h
}

// allows reports whether a request with this Host header (and TLS or
// not, for the default port) may be answered.
func (p *hostPolicy) allows(hostHeader string, tls bool) bool {
	host, port, err := net.SplitHostPort(hostHeader)
	if err != nil {
		host, port = hostHeader, "80"
		if tls {
			port = "443"
		}
	}
	if hostHeader == "" {
		return true // no Host at all: HTTP/1.0 or an in-process call, never a browser's
	}
	name := canonicalHost(host)
	if p.anyIP && net.ParseIP(name) != nil && (p.port == "" || port == p.port) {
		return true
	}
	for _, r := range p.rules {
		if r.name == name && (r.port == "" || r.port == port) {
			return true
		}
	}
	return false
}

// checkHost refuses, with 403, a request whose Host the console does not
// answer to.
func (s *Server) checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.hosts.allows(r.Host, r.TLS != nil) {
			s.log.Warn("request refused: foreign Host", "host", r.Host, "path", r.URL.Path)
			http.Error(w, fmt.Sprintf("host %q refused: this console answers to its own address and localhost; "+
				"behind a reverse proxy, start it with --allowed-host NAME (web.Config.AllowedHosts)", r.Host), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}
