package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/convergence"
	"github.com/refine-spec/refine/internal/termtext"
	"github.com/refine-spec/refine/rollback"
	"github.com/refine-spec/refine/store"
)

// errStatus maps an error to the HTTP status that tells the client what to
// do: 404 look elsewhere, 409 the session's state forbids it now, 400 fix
// the request, 413 send less, 503 this console cannot.
func errStatus(err error) int {
	var mb *http.MaxBytesError
	var ae *answerError
	switch {
	case errors.As(err, &mb):
		return http.StatusRequestEntityTooLarge
	case errors.As(err, &ae), errors.Is(err, refine.ErrInvalidAnswer), errors.Is(err, rollback.ErrOutOfRange),
		errors.Is(err, rollback.ErrTargetUnavailable), errors.Is(err, errBadRequest):
		return http.StatusBadRequest
	case errors.Is(err, refine.ErrNotFound), errors.Is(err, refine.ErrNoSession), errors.Is(err, errNoRound), errors.Is(err, refine.ErrInvalidKey):
		return http.StatusNotFound
	case errors.Is(err, refine.ErrLocked), errors.Is(err, errRunning), errors.Is(err, refine.ErrUnknownQuestion),
		errors.Is(err, refine.ErrRollbackLimit), errors.Is(err, refine.ErrFinished), errors.Is(err, errRollbackWaiting),
		errors.Is(err, refine.ErrRollbackPending):
		return http.StatusConflict
	case errors.Is(err, errReadOnly), errors.Is(err, errClosing):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// errBadRequest marks a malformed request.
var errBadRequest = errors.New("bad request")

func badRequest(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errBadRequest, fmt.Sprintf(format, args...))
}

func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	code := errStatus(err)
	if code == http.StatusInternalServerError {
		s.log.Error("request failed", "path", r.URL.Path, "err", err)
	}
	if code != http.StatusInternalServerError && code != http.StatusBadRequest {
		s.log.Info("request refused", "path", r.URL.Path, "status", code, "err", err)
	}
	s.errorPage(w, r, code, publicMessage(code, r.PathValue("id"), err))
}

func (s *Server) formError(w http.ResponseWriter, r *http.Request, err error) {
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		s.errorPage(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("The form is larger than %d bytes.", mb.Limit))
		return
	}
	s.errorPage(w, r, http.StatusBadRequest, "Unreadable form: "+scrubPaths(err.Error()))
}

type listView struct {
	Title    string
	Sessions []sessionRow
	// Next and Prev are the query strings of the older and newer pages
	// ("" at either end); Paged is set when this is not the first page.
	Next, Prev string
	Paged      bool
	Error      string
}

func (s *Server) handleList(w http.ResponseWriter, r *http.Request) {
	page, err := s.sessions(r)
	if errors.Is(err, store.ErrInvalidCursor) {
		s.errorPage(w, r, http.StatusBadRequest, err.Error())
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	v := listView{Title: "Sessions", Next: pageQuery(r, "after", page.Next), Prev: pageQuery(r, "before", page.Prev), Paged: page.Prev != ""}
	for _, in := range page.Sessions {
		row := sessionRow{ID: in.ID, Outcome: string(in.Outcome), Round: in.Round, Open: sevCounts(in.OpenGaps),
			Pending: in.Pending, Activity: in.Activity, Updated: in.Updated}
		if live, ok := s.peek(in.ID); ok && live.Running {
			row.Running, row.Activity = true, live.Activity
		}
		v.Sessions = append(v.Sessions, row)
	}
	s.render(w, http.StatusOK, "list", v)
}

func (s *Server) handleSession(w http.ResponseWriter, r *http.Request, id string) {
	v, err := s.sessionView(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, http.StatusOK, "session", v)
}

func (s *Server) handleChart(w http.ResponseWriter, r *http.Request, id string) {
	st, err := s.cfg.Backend.View(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	defer closeStore(st)
	// Drawn from the rows the page's table shows: convergence.svg is
	// rewritten when a round ends, so while a question waits in the
	// middle of a round it lacks the round's row (#40).
	status, err := refine.Inspect(r.Context(), st)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	b := convergence.SVG(status.Convergence)
	h := w.Header()
	h.Set("Content-Type", "image/svg+xml")
	h.Set("Content-Security-Policy", chartCSP)
	h.Set("Cache-Control", "no-cache")
	_, _ = w.Write(termtext.Markup(b)) // shown by the escape policy, as every page
}

type fileView struct {
	Title string
	ID    string
	Name  string
	HTML  any
}

func (s *Server) handleFile(w http.ResponseWriter, r *http.Request, id string) {
	name := r.PathValue("name")
	allowed := false
	for _, f := range viewFiles {
		allowed = allowed || f == name
	}
	if !allowed {
		s.errorPage(w, r, http.StatusNotFound, "The console shows "+strings.Join(viewFiles, ", ")+" only.")
		return
	}
	st, err := s.cfg.Backend.View(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	defer closeStore(st)
	b, err := st.Get(r.Context(), name)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, http.StatusOK, "file", fileView{Title: name + " — " + id, ID: id, Name: name, HTML: s.pages.md.HTML(string(b))})
}

func (s *Server) handleRound(w http.ResponseWriter, r *http.Request, id string) {
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil || n < 0 || n > 999 {
		s.errorPage(w, r, http.StatusNotFound, "No such round: rounds are numbered 1 to 999.")
		return
	}
	v, err := s.roundView(r.Context(), id, n)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, http.StatusOK, "round", v)
}

func sessionURL(id string) string { return "/sessions/" + url.PathEscape(id) }

func (s *Server) handleAnswerForm(w http.ResponseWriter, r *http.Request, id string) {
	if err := r.ParseForm(); err != nil {
		s.formError(w, r, err)
		return
	}
	f := r.PostForm
	a := refine.Answer{Key: strings.TrimSpace(f.Get("key")), Text: strings.TrimSpace(f.Get("text"))}
	qid := f.Get("question")
	if qid == "" || a.Key == "" {
		s.errorPage(w, r, http.StatusBadRequest, "Pick an option of the question.")
		return
	}
	if err := s.answer(r.Context(), id, qid, a); err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, sessionURL(id), http.StatusSeeOther)
}

func (s *Server) handleRollbackForm(w http.ResponseWriter, r *http.Request, id string) {
	if err := r.ParseForm(); err != nil {
		s.formError(w, r, err)
		return
	}
	to, err := strconv.Atoi(strings.TrimSpace(r.PostForm.Get("to")))
	if err != nil || to < 0 {
		s.errorPage(w, r, http.StatusBadRequest, "Pick the round to return to (0: before round 1).")
		return
	}
	reason := strings.TrimSpace(r.PostForm.Get("reason"))
	if reason == "" {
		s.errorPage(w, r, http.StatusBadRequest, "Say why you roll back: the reason is recorded and shown to the next round.")
		return
	}
	if _, err := s.rollbackTo(r.Context(), id, to, reason); err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, sessionURL(id), http.StatusSeeOther)
}

func (s *Server) handleResumeForm(w http.ResponseWriter, r *http.Request, id string) {
	if err := s.resume(r.Context(), id); err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, sessionURL(id), http.StatusSeeOther)
}

// pageQuery is the query string of the page at cursor, keeping the
// request's limit, or "" without a cursor.
func pageQuery(r *http.Request, dir, cursor string) string {
	if cursor == "" {
		return ""
	}
	v := url.Values{dir: {cursor}}
	if l := r.URL.Query().Get("limit"); l != "" {
		v.Set("limit", l)
	}
	return "?" + v.Encode()
}
