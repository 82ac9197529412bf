package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/refine-spec/refine/store"
)

func TestPages(t *testing.T) {
	f := newFixture(t, "")
	for _, tc := range []struct {
		path, ctype string
		want        []string
	}{
		{"/", "text/html", []string{f.id, "PAUSED", "HIGH"}},
		{"/sessions/" + f.id, "text/html", []string{"Waiting for your answer", `name="key"`, "convergence.svg", "GAP-API-001", "Rollbacks", "Usage", "/static/live.js"}},
		{"/sessions/" + f.id + "/rounds/1", "text/html", []string{"Round 1", "Engineer", "Reviewer", "Attempts", "PASS", "Prompt", "first resolution"}},
		{"/sessions/" + f.id + "/rounds/2", "text/html", []string{"Round 2", "against round 1"}},
		{"/sessions/" + f.id + "/convergence.svg", "image/svg+xml", []string{"<svg"}},
		{"/sessions/" + f.id + "/files/status.md", "text/html", []string{"status.md"}},
		{"/static/style.css", "text/css", []string{"body"}},
		{"/static/live.js", "text/javascript", []string{"fetch("}},
		{"/login", "text/html", []string{"needs no login"}},
		{"/api/sessions", "application/json", []string{`"id": "` + f.id + `"`, `"outcome": "PAUSED"`}},
		{"/api/sessions/" + f.id, "application/json", []string{`"pending": [`, `"body":`, `"allow_text":`, `"history":`}},
		{"/api/sessions/" + f.id + "/live", "application/json", []string{`"token":`, `"running": false`}},
	} {
		t.Run(tc.path, func(t *testing.T) {
			resp, body := f.get(tc.path)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, tc.ctype) {
				t.Errorf("Content-Type %q, want %s", ct, tc.ctype)
			}
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("body lacks %q", w)
				}
			}
			checkHeaders(t, resp)
		})
	}
	resp, _ := f.get("/sessions/" + f.id + "/convergence.svg")
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "sandbox") || !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("chart CSP %q must block scripts (default-src 'none', sandbox)", csp)
	}
}

// checkHeaders asserts the headers every response carries.
func checkHeaders(t *testing.T, resp *http.Response) {
	t.Helper()
	csp := resp.Header.Get("Content-Security-Policy")
	if csp == "" || strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("%s: CSP %q", resp.Request.URL.Path, csp)
	}
	if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("%s: no X-Content-Type-Options: nosniff", resp.Request.URL.Path)
	}
}

func TestNotFound(t *testing.T) {
	f := newFixture(t, "")
	for _, path := range []string{
		"/sessions/nosuch", "/api/sessions/nosuch", "/sessions/" + f.id + "/rounds/99", "/sessions/" + f.id + "/rounds/x",
		"/sessions/" + f.id + "/files/state.json", "/sessions/" + f.id + "/files/..%2Fstate.json", "/nosuch", "/static/", "/static/nosuch.js",
	} {
		resp, body := f.get(path)
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404\n%s", path, resp.StatusCode, body)
		}
		checkHeaders(t, resp)
	}
}

// TestTraversalInSessionID: an ID that is not a plain name never reaches
// the backend.
func TestTraversalInSessionID(t *testing.T) {
	f := newFixture(t, "")
	for _, id := range []string{"..%2F..%2Fetc", "..", ".hidden", "a%2Fb", "a%5Cb", "a%00b", "%2E%2E", strings.Repeat("a", 65), "a%20b"} {
		for _, p := range []string{"/sessions/" + id, "/api/sessions/" + id, "/sessions/" + id + "/convergence.svg", "/sessions/" + id + "/rounds/1"} {
			resp, body := f.get(p)
			if resp.StatusCode == http.StatusOK || resp.StatusCode >= 500 {
				t.Errorf("GET %s: %d\n%s", p, resp.StatusCode, body)
			}
			if strings.Contains(body, "root:") {
				t.Errorf("GET %s leaked a file", p)
			}
		}
		resp, _ := f.do(http.MethodPost, "/api/sessions/"+id+"/answers", "application/json", answerBody("q", "1", ""))
		if c := resp.StatusCode; c != http.StatusNotFound && c != http.StatusMovedPermanently && c != http.StatusTemporaryRedirect && c != http.StatusPermanentRedirect {
			t.Errorf("POST answers for %s: %d", id, resp.StatusCode)
		}
	}
}

// TestHostileOutputEscaped: markup an LLM wrote (outputs, attempts,
// prompts, gap titles, question bodies) shows as text, never as markup.
func TestHostileOutputEscaped(t *testing.T) {
	f := newFixture(t, "")
	ctx := context.Background()
	const hostile = "# Gap Resolution: GAP-API-001\n\n<script>alert('x')</script>\n\n" +
		"[click](javascript:alert(1)) [tab](java\tscript:alert(2)) [data](data:text/html,<b>x</b>) <javascript:alert(3)>\n\n" +
		"<img src=x onerror=alert(4)>\n\n<div onclick=\"alert(5)\">raw</div>\n\n![i](javascript:alert(6))\n\n[ok](https://example.com/a?b=1)\n"
	st, err := f.backend.Session(ctx, f.id)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(ctx, store.Put("round_001/engineer.md", []byte(hostile)), store.Put("round_001/reviewer.md", []byte(hostile)),
		store.Put("round_001/attempts/engineer-1.md", []byte(hostile)), store.Put("round_001/prompts/engineer-1.md", []byte(hostile)),
		store.Put("status.md", []byte(hostile))); err != nil {
		t.Fatal(err)
	}
	closeStore(st)
	for _, p := range []string{"/sessions/" + f.id + "/rounds/1", "/sessions/" + f.id + "/rounds/2", "/sessions/" + f.id + "/files/status.md"} {
		resp, body := f.get(p)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", p, resp.StatusCode)
		}
		checkEscaped(t, p, body)
		if p == "/sessions/"+f.id+"/rounds/1" {
			for _, w := range []string{"&lt;script&gt;alert(", "&lt;img src=x onerror=alert(4)&gt;", `href="https://example.com/a?b=1"`} {
				if !strings.Contains(body, w) {
					t.Errorf("%s lacks %q", p, w)
				}
			}
		}
	}
}

// checkEscaped fails when body carries live markup from hostile input.
func checkEscaped(t *testing.T, where, body string) {
	t.Helper()
	low := strings.ToLower(body)
	for _, bad := range []string{"<script>alert", "javascript:", "<img src=x", "onerror=alert", "<div onclick", "data:text/html", "java\tscript"} {
		// Text nodes may say "javascript:" escaped inside <pre>; only an
		// attribute value or a tag is live.
		for i := strings.Index(low, bad); i >= 0; i = indexFrom(low, bad, i+1) {
			if live(low, i) {
				t.Errorf("%s: live %q at %d: …%s…", where, bad, i, body[max(0, i-60):min(len(body), i+60)])
				break
			}
		}
	}
}

func indexFrom(s, sub string, from int) int {
	if from >= len(s) {
		return -1
	}
	j := strings.Index(s[from:], sub)
	if j < 0 {
		return -1
	}
	return from + j
}

// live reports whether position i of an HTML page is inside a tag (an
// attribute) rather than in text.
func live(s string, i int) bool {
	open := strings.LastIndexByte(s[:i], '<')
	closeTag := strings.LastIndexByte(s[:i], '>')
	if strings.HasPrefix(s[i:], "<") {
		return true
	}
	return open > closeTag
}

func TestQuestionBodyEscaped(t *testing.T) {
	f := newFixture(t, "")
	resp, body := f.get("/sessions/" + f.id)
	if resp.StatusCode != http.StatusOK {
		t.Fatal(resp.StatusCode)
	}
	checkEscaped(t, "session page", body)
	q := f.status().Pending[0]
	if !strings.Contains(body, `value="`+q.ID+`"`) {
		t.Errorf("no answer form for %s", q.ID)
	}
	for _, o := range q.Options {
		if !strings.Contains(body, `name="key" value="`+o.Key+`"`) {
			t.Errorf("no button for option %s", o.Key)
		}
	}
}

func TestAnswerForm(t *testing.T) {
	f := newFixture(t, "")
	q := f.status().Pending[0]
	a := demoAnswer(q)
	form := url.Values{"question": {q.ID}, "key": {a.Key}, "text": {a.Text}}
	resp, body := f.do(http.MethodPost, "/sessions/"+f.id+"/answers", "application/x-www-form-urlencoded", form.Encode())
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/sessions/"+f.id {
		t.Fatalf("answer form: %d %q\n%s", resp.StatusCode, resp.Header.Get("Location"), body)
	}
	f.wait()
	if st := f.status(); len(st.Pending) > 0 && st.Pending[0].ID == q.ID {
		t.Errorf("question %s still pending after the answer", q.ID)
	}
	// The same answer again: the question is no longer pending.
	resp, body = f.do(http.MethodPost, "/sessions/"+f.id+"/answers", "application/x-www-form-urlencoded", form.Encode())
	if resp.StatusCode != http.StatusConflict || !strings.Contains(body, "not pending") {
		t.Errorf("second answer: %d\n%s", resp.StatusCode, body)
	}
	for _, tc := range []struct {
		form url.Values
		code int
	}{
		{url.Values{"key": {"1"}}, http.StatusBadRequest},
		{url.Values{"question": {q.ID}}, http.StatusBadRequest},
	} {
		resp, body := f.do(http.MethodPost, "/sessions/"+f.id+"/answers", "application/x-www-form-urlencoded", tc.form.Encode())
		if resp.StatusCode != tc.code {
			t.Errorf("%v: %d, want %d\n%s", tc.form, resp.StatusCode, tc.code, body)
		}
	}
}

func TestOversizedPosts(t *testing.T) {
	f := newFixture(t, "")
	big := strings.Repeat("x", DefaultMaxBodyBytes+1)
	q := f.status().Pending[0]
	for _, tc := range []struct{ path, ctype, body string }{
		{"/sessions/" + f.id + "/answers", "application/x-www-form-urlencoded", "question=" + q.ID + "&key=A&text=" + big},
		{"/sessions/" + f.id + "/rollback", "application/x-www-form-urlencoded", "to=0&reason=" + big},
		{"/api/sessions/" + f.id + "/answers", "application/json", answerBody(q.ID, "A", big)},
		{"/api/sessions/" + f.id + "/rollback", "application/json", `{"to":0,"reason":"` + big + `"}`},
		{"/login", "application/x-www-form-urlencoded", "token=" + big},
	} {
		resp, body := f.do(http.MethodPost, tc.path, tc.ctype, tc.body)
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("POST %s with %d bytes: %d, want 413\n%.300s", tc.path, len(tc.body), resp.StatusCode, body)
		}
	}
	if st := f.status(); len(st.Pending) == 0 || st.Pending[0].ID != q.ID {
		t.Errorf("an oversized post changed the session: pending %v", st.Pending)
	}
}

func TestCrossOriginPostRefused(t *testing.T) {
	f := newFixture(t, "")
	q := f.status().Pending[0]
	for _, hdr := range [][]string{
		{"Sec-Fetch-Site", "cross-site"},
		{"Origin", "https://evil.example"},
	} {
		resp, _ := f.do(http.MethodPost, "/sessions/"+f.id+"/answers", "application/x-www-form-urlencoded", "question="+q.ID+"&key=A", hdr...)
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%v: %d, want 403", hdr, resp.StatusCode)
		}
		resp, _ = f.do(http.MethodPost, "/api/sessions/"+f.id+"/answers", "application/json", answerBody(q.ID, "A", ""), hdr...)
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("API %v: %d, want 403", hdr, resp.StatusCode)
		}
	}
	resp, _ := f.do(http.MethodPost, "/sessions/"+f.id+"/resume", "", "", "Sec-Fetch-Site", "same-origin")
	if resp.StatusCode == http.StatusForbidden {
		t.Errorf("same-origin post refused")
	}
}

func TestLogin(t *testing.T) {
	const token = "s3cret-token"
	f := newFixture(t, token)
	resp, _ := f.get("/sessions/" + f.id)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login?next=%2Fsessions%2F"+f.id {
		t.Fatalf("page without login: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, _ = f.get("/api/sessions")
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("API without token: %d", resp.StatusCode)
	}
	resp, _ = f.get("/api/sessions", "Authorization", "Bearer wrong")
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("API with wrong token: %d", resp.StatusCode)
	}
	resp, _ = f.get("/api/sessions", "Authorization", "Bearer "+token)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("API with token: %d", resp.StatusCode)
	}
	resp, _ = f.do(http.MethodPost, "/sessions/"+f.id+"/resume", "", "")
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("form post without login: %d", resp.StatusCode)
	}
	resp, _ = f.do(http.MethodPost, "/login", "application/x-www-form-urlencoded", "token=wrong&next=/")
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("wrong login: %d", resp.StatusCode)
	}
	resp, _ = f.do(http.MethodPost, "/login", "application/x-www-form-urlencoded", url.Values{"token": {token}, "next": {"//evil.example/x"}}.Encode())
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Errorf("login with foreign next: %d %q, want 303 to /", resp.StatusCode, resp.Header.Get("Location"))
	}
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == cookieName {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Value == token || cookie.Value == "" {
		t.Fatalf("login cookie %+v: want HttpOnly, SameSite=Strict, not the token itself", cookie)
	}
	resp, body := f.get("/sessions/"+f.id, "Cookie", cookie.Name+"="+cookie.Value)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, f.id) {
		t.Errorf("page with cookie: %d", resp.StatusCode)
	}
	resp, _ = f.get("/sessions/"+f.id, "Cookie", cookie.Name+"=forged")
	if resp.StatusCode != http.StatusSeeOther {
		t.Errorf("page with a forged cookie: %d", resp.StatusCode)
	}
}

func TestReadOnlyConsole(t *testing.T) {
	f := newFixture(t, "")
	ro, err := New(Config{Backend: f.backend})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	q := f.status().Pending[0]
	for _, path := range []string{"/api/sessions/" + f.id + "/answers", "/api/sessions/" + f.id + "/resume"} {
		req, _ := http.NewRequest(http.MethodPost, path, strings.NewReader(answerBody(q.ID, "A", "")))
		rec := newRecorder()
		ro.ServeHTTP(rec, req)
		if rec.Code != http.StatusServiceUnavailable {
			t.Errorf("%s on a read-only console: %d, want 503", path, rec.Code)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, "/sessions/"+f.id, nil)
	rec := newRecorder()
	ro.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), `name="key"`) || !strings.Contains(rec.Body.String(), "refine resume --store URL --session "+f.id+" --answer ") {
		t.Errorf("read-only session page: %d, must show no answer form but the CLI hint", rec.Code)
	}
}

func TestConfigValidate(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Error("New without a Backend succeeded")
	}
	f := newFixture(t, "")
	if _, err := New(Config{Backend: f.backend, MaxBodyBytes: -1}); err == nil {
		t.Error("negative MaxBodyBytes accepted")
	}
}
