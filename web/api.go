package web

import (
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/internal/statusjson"
	"github.com/refine-spec/refine/internal/termtext"
	"github.com/refine-spec/refine/store"
)

// apiError is the body of every API error: what went wrong and, for an
// answer with an unknown option, the keys the question offers.
type apiError struct {
	Error   string   `json:"error"`
	Offered []string `json:"offered,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	b = termtext.JSON(b) // what a terminal obeys as \u escapes, as the CLI writes it
	if err != nil {
		http.Error(w, "internal error encoding JSON", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

func writeJSONError(w http.ResponseWriter, status int, msg string, offered []string) {
	writeJSON(w, status, apiError{Error: msg, Offered: offered})
}

func (s *Server) apiFail(w http.ResponseWriter, r *http.Request, err error) {
	code := errStatus(err)
	if code == http.StatusInternalServerError {
		s.log.Error("api request failed", "path", r.URL.Path, "err", err)
	}
	var ae *answerError
	var offered []string
	if errors.As(err, &ae) {
		offered = ae.offered
	}
	writeJSONError(w, code, publicMessage(code, r.PathValue("id"), err), offered)
}

// decodeJSON reads a JSON request body into v: one object, no unknown
// fields, within the body limit.
func decodeJSON(r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return badRequest("send Content-Type: application/json, not %q", ct)
		}
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return err
		}
		return badRequest("body is not the expected JSON object: %v", err)
	}
	if dec.More() {
		return badRequest("body holds more than one JSON value")
	}
	return nil
}

// sessionJSON is one session of GET /api/sessions.
type sessionJSON struct {
	ID       string         `json:"id"`
	Created  string         `json:"created_at"`
	Updated  string         `json:"updated_at"`
	Round    int            `json:"round"`
	Outcome  string         `json:"outcome"`
	OpenGaps map[string]int `json:"open_gaps"`
	Pending  int            `json:"pending"`
	Activity string         `json:"activity"`
	Running  bool           `json:"running"`
}

func jsonTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func (s *Server) apiList(w http.ResponseWriter, r *http.Request) {
	page, err := s.sessions(r)
	if errors.Is(err, store.ErrInvalidCursor) {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	// The body stays the array it always was; the cursors travel in a Link
	// header (RFC 8288, as GitHub's API pages) and in X-Next-Cursor.
	var links []string
	if q := pageQuery(r, "after", page.Next); q != "" {
		links = append(links, "</api/sessions"+q+`>; rel="next"`)
		w.Header().Set("X-Next-Cursor", page.Next)
	}
	if q := pageQuery(r, "before", page.Prev); q != "" {
		links = append(links, "</api/sessions"+q+`>; rel="prev"`)
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	out := make([]sessionJSON, 0, len(page.Sessions))
	for _, in := range page.Sessions {
		j := sessionJSON{ID: in.ID, Created: jsonTime(in.Created), Updated: jsonTime(in.Updated), Round: in.Round,
			Outcome: string(in.Outcome), OpenGaps: in.OpenGaps, Pending: in.Pending, Activity: in.Activity}
		if j.OpenGaps == nil {
			j.OpenGaps = map[string]int{}
		}
		if live, ok := s.peek(in.ID); ok && live.Running {
			j.Running, j.Activity = true, live.Activity
		}
		out = append(out, j)
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) apiStatus(w http.ResponseWriter, r *http.Request, id string) {
	st, err := s.inspect(r.Context(), id)
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	doc := statusjson.From(st)
	if live, ok := s.peek(id); ok {
		doc.Running = live.Running
	}
	writeJSON(w, http.StatusOK, doc)
}

// liveJSON is GET /api/sessions/{id}/live: what the page script polls.
type liveJSON struct {
	Token    string `json:"token"`
	Running  bool   `json:"running"`
	Activity string `json:"activity"`
	Outcome  string `json:"outcome"`
	Round    int    `json:"round"`
	Error    string `json:"error"`
}

func (s *Server) apiLive(w http.ResponseWriter, r *http.Request, id string) {
	st, err := s.inspect(r.Context(), id)
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	live, _ := s.peek(id)
	// Activity is shown as it is by the page's script: escaped here.
	writeJSON(w, http.StatusOK, liveJSON{Token: liveToken(st, live), Running: live.Running, Activity: termtext.Line(live.Activity),
		Outcome: string(st.Outcome), Round: st.Round, Error: live.LastErr})
}

// answerRequest is the body of POST /api/sessions/{id}/answers.
type answerRequest struct {
	Question string `json:"question"`
	Key      string `json:"key"`
	Text     string `json:"text"`
}

// acceptedJSON answers a POST that started a background run.
type acceptedJSON struct {
	Session  string `json:"session"`
	Question string `json:"question,omitempty"`
	Resumed  bool   `json:"resumed"`
}

func (s *Server) apiAnswer(w http.ResponseWriter, r *http.Request, id string) {
	var req answerRequest
	if err := decodeJSON(r, &req); err != nil {
		s.apiFail(w, r, err)
		return
	}
	req.Key, req.Text = strings.TrimSpace(req.Key), strings.TrimSpace(req.Text)
	if req.Question == "" || req.Key == "" {
		s.apiFail(w, r, badRequest(`"question" and "key" are required`))
		return
	}
	if err := s.answer(r.Context(), id, req.Question, refine.Answer{Key: req.Key, Text: req.Text}); err != nil {
		s.apiFail(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, acceptedJSON{Session: id, Question: req.Question, Resumed: true})
}

// rollbackRequest is the body of POST /api/sessions/{id}/rollback.
type rollbackRequest struct {
	To     *int   `json:"to"`
	Reason string `json:"reason"`
}

// rollbackJSON reports a rollback. When the engine asks a question first
// (the rollback options), Pending holds it and nothing is undone yet.
type rollbackJSON struct {
	Session     string               `json:"session"`
	Undone      []int                `json:"undone"`
	Archives    []string             `json:"archives"`
	Round       int                  `json:"round"`
	Analysis    string               `json:"analysis"`
	RootCause   string               `json:"root_cause"`
	Adjustments []string             `json:"adjustments"`
	AutoApplied bool                 `json:"auto_applied"`
	Remaining   int                  `json:"remaining"`
	Decision    string               `json:"decision"`
	Pending     []statusjson.Pending `json:"pending"`
	Resumed     bool                 `json:"resumed"`
}

func (s *Server) apiRollback(w http.ResponseWriter, r *http.Request, id string) {
	var req rollbackRequest
	if err := decodeJSON(r, &req); err != nil {
		s.apiFail(w, r, err)
		return
	}
	req.Reason = strings.TrimSpace(req.Reason)
	if req.To == nil || *req.To < 0 || req.Reason == "" {
		s.apiFail(w, r, badRequest(`"to" (the round to return to, 0 or more) and "reason" are required`))
		return
	}
	rep, err := s.rollbackTo(r.Context(), id, *req.To, req.Reason)
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	out := rollbackJSON{Session: id, Undone: rep.Undone, Archives: rep.Archives, Round: rep.Round, Analysis: rep.Analysis, RootCause: rep.RootCause,
		Adjustments: rep.Adjustments, AutoApplied: rep.AutoApplied, Remaining: rep.Remaining, Decision: rep.Decision,
		Pending: []statusjson.Pending{}, Resumed: len(rep.Pending) == 0}
	for _, q := range rep.Pending {
		out.Pending = append(out.Pending, statusjson.PendingOf(q))
	}
	if out.Undone == nil {
		out.Undone = []int{}
	}
	if out.Archives == nil {
		out.Archives = []string{}
	}
	if out.Adjustments == nil {
		out.Adjustments = []string{}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) apiResume(w http.ResponseWriter, r *http.Request, id string) {
	if err := s.resume(r.Context(), id); err != nil {
		s.apiFail(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, acceptedJSON{Session: id, Resumed: true})
}
