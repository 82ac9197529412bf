package web

import (
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestHostPolicy(t *testing.T) {
	for _, tc := range []struct {
		addr    string
		allowed []string
		host    string
		tls     bool
		want    bool
	}{
		{"127.0.0.1:18081", nil, "127.0.0.1:18081", false, true},
		{"127.0.0.1:18081", nil, "localhost:18081", false, true},
		{"127.0.0.1:18081", nil, "LOCALHOST.:18081", false, true},
		{"127.0.0.1:18081", nil, "[::1]:18081", false, true},
		{"127.0.0.1:18081", nil, "evil.example:18081", false, false},
		{"127.0.0.1:18081", nil, "evil.example", false, false},
		{"127.0.0.1:18081", nil, "localhost:9999", false, false},
		{"127.0.0.1:18081", nil, "localhost", false, false}, // port 80
		{"127.0.0.1:80", nil, "localhost", false, true},
		{"127.0.0.1:443", nil, "localhost", true, true},
		{"127.0.0.1:18081", []string{"refine.example.com"}, "refine.example.com", true, true},
		{"127.0.0.1:18081", []string{"refine.example.com"}, "Refine.Example.com:8443", false, true},
		{"127.0.0.1:18081", []string{"refine.example.com:8443"}, "refine.example.com:9000", false, false},
		{"127.0.0.1:18081", []string{"refine.example.com"}, "evil.refine.example.com", false, false},
		{"0.0.0.0:8080", nil, "10.1.2.3:8080", false, true},
		{":8080", nil, "[2001:db8::1]:8080", false, true},
		{":8080", nil, "box.lan:8080", false, false},
		{":8080", []string{"box.lan"}, "box.lan:8080", false, true},
		{"192.0.2.7:8080", nil, "192.0.2.7:8080", false, true},
		{"192.0.2.7:8080", nil, "192.0.2.8:8080", false, false},
		{"", nil, "localhost:1234", false, true},
		{"", nil, "evil.example:1234", false, false},
		{"", nil, "", false, true}, // no Host header: not a browser
	} {
		p, err := newHostPolicy(tc.addr, tc.allowed)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.allows(tc.host, tc.tls); got != tc.want {
			t.Errorf("listening on %q allowing %q: Host %q (tls %v) = %v, want %v", tc.addr, tc.allowed, tc.host, tc.tls, got, tc.want)
		}
	}
	if _, err := newHostPolicy("127.0.0.1:1", []string{"a/b"}); err == nil {
		t.Errorf("an allowed host with a slash was accepted")
	}
}

// A request naming a foreign Host (DNS rebinding: evil.example resolved
// to the console's loopback address) is refused with 403 on every route,
// before any handler runs, even with the token and a matching Origin; the
// console's own names, and an allowed proxy name, are answered.
func TestForeignHostRefusedEverywhere(t *testing.T) {
	const token = "s3cret"
	f := newFixture(t, token)
	u, _ := url.Parse(f.http.URL)
	port := u.Port()
	q := f.status().Pending[0]
	routes := []struct{ method, path, body string }{
		{"GET", "/", ""},
		{"GET", "/sessions/" + f.id, ""},
		{"GET", "/sessions/" + f.id + "/convergence.svg", ""},
		{"GET", "/sessions/" + f.id + "/rounds/1", ""},
		{"GET", "/sessions/" + f.id + "/files/status.md", ""},
		{"POST", "/sessions/" + f.id + "/answers", "question=" + q.ID + "&key=A"},
		{"POST", "/sessions/" + f.id + "/rollback", "to=1&reason=x"},
		{"POST", "/sessions/" + f.id + "/resume", ""},
		{"GET", "/login", ""},
		{"POST", "/login", "token=" + token},
		{"POST", "/logout", ""},
		{"GET", "/static/style.css", ""},
		{"GET", "/api/sessions", ""},
		{"GET", "/api/sessions/" + f.id, ""},
		{"GET", "/api/sessions/" + f.id + "/live", ""},
		{"POST", "/api/sessions/" + f.id + "/answers", answerBody(q.ID, "A", "")},
		{"POST", "/api/sessions/" + f.id + "/rollback", `{"to":1,"reason":"x"}`},
		{"POST", "/api/sessions/" + f.id + "/resume", `{}`},
		{"GET", "/no/such/route", ""},
	}
	send := func(method, path, body, host string) (*http.Response, string) {
		t.Helper()
		ctype := "application/x-www-form-urlencoded"
		if strings.HasPrefix(path, "/api/") {
			ctype = "application/json"
		}
		origin := "http://" + host
		return f.do(method, path, ctype, body, "Host", host, "Authorization", "Bearer "+token, "Origin", origin, "Sec-Fetch-Site", "same-origin")
	}
	for _, host := range []string{"evil.example:" + port, "evil.example", "127.0.0.1.evil.example:" + port, "localhost:1" + port} {
		for _, rt := range routes {
			resp, body := send(rt.method, rt.path, rt.body, host)
			if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "refused") {
				t.Errorf("%s %s with Host %s = %d %.80s; want 403", rt.method, rt.path, host, resp.StatusCode, body)
			}
		}
	}
	if st := f.status(); len(st.Pending) == 0 || st.Pending[0].ID != q.ID || len(st.Rollbacks) != 0 {
		t.Fatalf("a refused request changed the session: pending %v, %d rollbacks", st.Pending, len(st.Rollbacks))
	}
	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "[::1]:" + port} {
		resp, body := send("GET", "/api/sessions/"+f.id, "", host)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET with Host %s = %d %.80s; want 200", host, resp.StatusCode, body)
		}
	}
}

// An allowed host (a reverse proxy's name) is answered; the token rule
// still holds for it.
func TestAllowedHost(t *testing.T) {
	f := newFixture(t, "tok")
	srv, err := New(Config{Backend: f.backend, Token: "tok", AllowedHosts: []string{"refine.example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for _, tc := range []struct {
		host, auth string
		want       int
	}{
		{"refine.example.com", "Bearer tok", http.StatusOK},
		{"refine.example.com", "", http.StatusUnauthorized},
		{"other.example.com", "Bearer tok", http.StatusForbidden},
	} {
		req, _ := http.NewRequest(http.MethodGet, "/api/sessions/"+f.id, nil)
		req.Host = tc.host
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		rec := newRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("Host %s, auth %q: %d, want %d", tc.host, tc.auth, rec.Code, tc.want)
		}
	}
}

// FuzzHostPolicy: any Host header is decided without a panic, and a DNS
// name other than localhost and the allowed one is never answered.
func FuzzHostPolicy(f *testing.F) {
	for _, h := range []string{"localhost:8080", "evil.example:8080", "[::1]:8080", "[::1", "refine.example.com", ":", "", "127.0.0.1.nip.io:8080"} {
		f.Add(h, false)
	}
	p, err := newHostPolicy("127.0.0.1:8080", []string{"refine.example.com"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, host string, tls bool) {
		ok := p.allows(host, tls)
		name := host
		if h, _, err := net.SplitHostPort(host); err == nil {
			name = h
		}
		name = canonicalHost(name)
		if ok && host != "" && name != "localhost" && name != "refine.example.com" && net.ParseIP(name) == nil {
			t.Fatalf("Host %q answered", host)
		}
	})
}
