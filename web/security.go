package web

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/refine-spec/refine/store"
)

// pageCSP allows the console's own stylesheet, script and images and
// nothing inline, so markup an LLM smuggled past escaping still cannot run.
const pageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// chartCSP is the convergence chart's policy when opened on its own: it
// uses presentation attributes only, so it needs nothing at all.
const chartCSP = "default-src 'none'; frame-ancestors 'none'; sandbox"

// cookieName holds the login cookie.
const cookieName = "refine_console"

// secure sets the headers every response carries and caps request bodies.
func (s *Server) secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", pageCSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
		}
		next.ServeHTTP(w, r)
	})
}

// withID rejects a session ID that is not a plain name (path traversal,
// separators, control bytes) with 404 before any backend sees it.
func (s *Server) withID(h func(http.ResponseWriter, *http.Request, string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		if err := store.ValidSessionID(id); err != nil {
			if strings.HasPrefix(r.URL.Path, "/api/") {
				writeJSONError(w, http.StatusNotFound, "no such session: session IDs are 1 to 64 characters of A-Z a-z 0-9 . _ -", nil)
				return
			}
			s.errorPage(w, r, http.StatusNotFound, "No such session: session IDs are 1 to 64 characters of A-Z a-z 0-9 . _ -")
			return
		}
		h(w, r, id)
	}
}

// cookieValue is what the login cookie holds: a MAC of a fixed label under
// the token, so the cookie proves the token without being it.
func (s *Server) cookieValue() string {
	m := hmac.New(sha256.New, []byte(s.cfg.Token))
	m.Write([]byte("refine web console login v1"))
	return hex.EncodeToString(m.Sum(nil))
}

func (s *Server) hasCookie(r *http.Request) bool {
	c, err := r.Cookie(cookieName)
	return err == nil && subtle.ConstantTimeCompare([]byte(c.Value), []byte(s.cookieValue())) == 1
}

func (s *Server) hasBearer(r *http.Request) bool {
	auth := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(auth, "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(s.cfg.Token)) == 1
}

// authPage sends a visitor without the login cookie to the login form.
func (s *Server) authPage(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.Token != "" && !s.hasCookie(r) && !s.hasBearer(r) {
			if r.Method != http.MethodGet {
				s.errorPage(w, r, http.StatusUnauthorized, "Log in first.")
				return
			}
			http.Redirect(w, r, "/login?next="+urlQueryEscape(r.URL.Path), http.StatusSeeOther)
			return
		}
		h(w, r)
	}
}

// authAPI needs the bearer token (or the pages' cookie, for the script).
func (s *Server) authAPI(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.Token != "" && !s.hasBearer(r) && !s.hasCookie(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="refine"`)
			writeJSONError(w, http.StatusUnauthorized, "send the console token as: Authorization: Bearer TOKEN", nil)
			return
		}
		h(w, r)
	}
}

// localPath returns next when it is a path on this server, else "/": the
// login form must not redirect anywhere else.
func localPath(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n\t") {
		return "/"
	}
	return next
}

func (s *Server) handleLoginPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, http.StatusOK, "login", loginView{Next: localPath(r.URL.Query().Get("next")), Enabled: s.cfg.Token != ""})
}

func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		s.formError(w, r, err)
		return
	}
	next := localPath(r.PostForm.Get("next"))
	if s.cfg.Token == "" {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("token")), []byte(s.cfg.Token)) != 1 {
		s.render(w, http.StatusUnauthorized, "login", loginView{Next: next, Enabled: true, Failed: true})
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: s.cookieValue(), Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (s *Server) handleLogout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}
