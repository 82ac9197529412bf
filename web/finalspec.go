package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"

	"github.com/refine-spec/refine"
)

// finalDiffView is the page comparing the source spec with the final
// spec: what the session changed, line by line, with the integration
// step's Resolution Log (final_spec_trace.json) beside it.
type finalDiffView struct {
	Title          string
	ID             string
	Form, Reason   string
	Added, Removed int
	Lines          []diffLine
	Log            []traceRow
	Notes          []string
	// Spec is final_spec.md rendered.
	Spec template.HTML
}

// traceRow is a Resolution Log row as final_spec_trace.json holds it.
type traceRow struct {
	Item     string   `json:"item"`
	Sections []string `json:"sections"`
	Note     string   `json:"note"`
}

// finalTrace is the part of final_spec_trace.json the page shows.
type finalTrace struct {
	Form   string     `json:"form"`
	Reason string     `json:"reason"`
	Log    []traceRow `json:"log"`
	Notes  []string   `json:"notes"`
}

func (s *Server) handleFinalDiff(w http.ResponseWriter, r *http.Request, id string) {
	v, err := s.finalDiffView(r.Context(), id)
	if errors.Is(err, refine.ErrNotFound) {
		s.errorPage(w, r, http.StatusNotFound, "Session "+id+" has no final spec yet: it is written when the session ends.")
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.render(w, http.StatusOK, "finaldiff", v)
}

func (s *Server) finalDiffView(ctx context.Context, id string) (finalDiffView, error) {
	v := finalDiffView{ID: id, Title: "Final spec — " + id, Form: refine.FinalSpecAppendix}
	st, err := s.cfg.Backend.View(ctx, id)
	if err != nil {
		return v, err
	}
	defer closeStore(st)
	final, err := st.Get(ctx, "final_spec.md")
	if err != nil {
		return v, fmt.Errorf("read final_spec.md: %w", err)
	}
	source, err := st.Get(ctx, "source_spec.md")
	if err != nil && !errors.Is(err, refine.ErrNotFound) {
		return v, fmt.Errorf("read source_spec.md: %w", err)
	}
	if b, err := st.Get(ctx, "final_spec_trace.json"); err == nil {
		var t finalTrace
		if json.Unmarshal(b, &t) == nil {
			v.Form, v.Reason, v.Log, v.Notes = t.Form, t.Reason, t.Log, t.Notes
		}
	} else if !errors.Is(err, refine.ErrNotFound) {
		return v, fmt.Errorf("read final_spec_trace.json: %w", err)
	}
	v.Lines = lineDiff(string(source), string(final))
	for _, l := range v.Lines {
		switch l.Op {
		case '+':
			v.Added++
		case '-':
			v.Removed++
		}
	}
	v.Spec = s.pages.md.HTML(string(final))
	return v, nil
}
