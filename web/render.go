package web

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/refine-spec/refine/internal/termtext"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static/*
var staticFiles embed.FS

// pages holds one template set per page, each with the shared layout.
type pages struct {
	sets map[string]*template.Template
	md   *markdown
}

var funcs = template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	"lower":  strings.ToLower,
	"inline": inlineCode,
	"round":  func(n int) string { return fmt.Sprintf("%03d", n) },
	"pct":    func(f float64) string { return fmt.Sprintf("%.0f%%", f*100) },
}

func parsePages() (*pages, error) {
	names, err := fs.Glob(templateFiles, "templates/*.html")
	if err != nil {
		return nil, err
	}
	p := &pages{sets: map[string]*template.Template{}, md: newMarkdown()}
	for _, n := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if base == "layout" {
			continue
		}
		t, err := template.New(base).Funcs(funcs).ParseFS(templateFiles, "templates/layout.html", n)
		if err != nil {
			return nil, fmt.Errorf("web: parse %s: %w", n, err)
		}
		p.sets[base] = t
	}
	return p, nil
}

// render executes page name into a buffer first, so a template error never
// leaves half a page behind.
func (s *Server) render(w http.ResponseWriter, status int, name string, data any) {
	t, ok := s.pages.sets[name]
	if !ok {
		http.Error(w, "internal error: no page "+name, http.StatusInternalServerError)
		return
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", data); err != nil {
		s.log.Error("render page", "page", name, "err", err)
		http.Error(w, "internal error rendering the page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	// The escape policy, on the whole page: no control or bidi override
	// a model wrote reaches the browser raw, wherever the page shows it.
	_, _ = w.Write(termtext.Markup(buf.Bytes()))
}

type errorView struct {
	Title   string
	Status  int
	Message string
	Back    string
}

func (s *Server) errorPage(w http.ResponseWriter, r *http.Request, status int, msg string) {
	back := "/"
	if id := r.PathValue("id"); id != "" && status != http.StatusNotFound {
		back = "/sessions/" + url.PathEscape(id)
	}
	s.render(w, status, "error", errorView{Title: http.StatusText(status), Status: status, Message: msg, Back: back})
}

type loginView struct {
	Title   string
	Next    string
	Enabled bool
	Failed  bool
}

func staticHandler() http.Handler {
	sub, _ := fs.Sub(staticFiles, "static")
	fsrv := http.StripPrefix("/static/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r) // no folder listings
			return
		}
		w.Header().Set("Cache-Control", "no-cache")
		fsrv.ServeHTTP(w, r)
	})
}

func urlQueryEscape(s string) string { return url.QueryEscape(s) }
