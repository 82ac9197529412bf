package mcpserver

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/gapsfile"
	"github.com/refine-spec/refine/internal/statusjson"
)

// maxInputBytes caps a spec or gap list given to refine_start.
const maxInputBytes = 4 << 20

// statusOf reads session id's status: from its run when it is running,
// else from the store without taking the writer's lock.
func (s *Server) statusOf(ctx context.Context, id string) (refine.Status, error) {
	if sess := s.runningSession(id); sess != nil {
		return sess.Status(ctx)
	}
	st, err := s.cfg.Backend.View(ctx, id)
	if err != nil {
		return refine.Status{}, sessionErr(id, err)
	}
	defer closeStore(st)
	status, err := refine.Inspect(ctx, st)
	if err != nil {
		return refine.Status{}, sessionErr(id, err)
	}
	return status, nil
}

// reportOf says where session id stands after d.
func (s *Server) reportOf(ctx context.Context, id string, d driveResult, note string) (report, error) {
	st, err := s.statusOf(ctx, id)
	if err != nil {
		return report{}, err
	}
	rep := report{SessionID: id, Outcome: string(st.Outcome), Round: st.Round, Reason: st.Reason, Note: note,
		OpenGaps: []string{}, Pending: []statusjson.Pending{}, Resources: s.sessionURIs(ctx, id)}
	rep.Running = s.running(id) != nil
	if rep.Running {
		rep.Outcome = string(refine.StatusRunning)
	}
	if d.err != nil {
		rep.Note = strings.TrimPrefix(rep.Note+"; "+d.err.Error(), "; ")
	}
	for _, g := range st.Gaps {
		if g.State.IsOpen() {
			rep.OpenGaps = append(rep.OpenGaps, fmt.Sprintf("%s (%s, %s): %s", g.ID, g.Severity, g.State, g.Title))
		}
	}
	for _, q := range st.Pending {
		rep.Pending = append(rep.Pending, statusjson.PendingOf(q))
	}
	switch {
	case rep.Running:
		rep.Next = "call refine_continue with this session_id"
	case len(rep.Pending) > 0:
		rep.Next = "answer the pending question with refine_answer (session_id, question_id, key, and text when the option takes it)"
	case st.Outcome.Terminal():
		rep.Next = fmt.Sprintf("finished: read refine://sessions/%s/final_spec.md", id)
	default:
		rep.Next = "call refine_continue with this session_id to go on"
	}
	return rep, nil
}

// textResult renders rep for a reader (the model reads the text; clients
// that read structured content get rep as JSON).
func textResult(rep report) *mcp.CallToolResult {
	var b strings.Builder
	fmt.Fprintf(&b, "Session %s: %s after round %d", rep.SessionID, rep.Outcome, rep.Round)
	if rep.Running {
		b.WriteString(" (still running)")
	}
	b.WriteString("\n")
	if rep.Reason != "" {
		fmt.Fprintf(&b, "Reason: %s\n", rep.Reason)
	}
	if rep.Note != "" {
		fmt.Fprintf(&b, "Note: %s\n", rep.Note)
	}
	if len(rep.OpenGaps) > 0 {
		fmt.Fprintf(&b, "Open gaps:\n- %s\n", strings.Join(rep.OpenGaps, "\n- "))
	}
	for _, q := range rep.Pending {
		fmt.Fprintf(&b, "\nPending question %s (%s, round %d): %s\n\n%s\n\nOptions:\n", q.ID, q.Kind, q.Round, q.Title, strings.TrimSpace(q.Body))
		for _, o := range q.Options {
			extra := ""
			if o.Recommended {
				extra += " (recommended)"
			}
			if o.Text {
				extra += " (needs text)"
			}
			fmt.Fprintf(&b, "- key %q: %s%s\n", o.Key, o.Label, extra)
		}
		if q.Default != "" {
			fmt.Fprintf(&b, "Default: %s\n", q.Default)
		}
	}
	fmt.Fprintf(&b, "\nNext: %s\n", rep.Next)
	if rep.Status != nil {
		fmt.Fprintf(&b, "Usage: %d prompt + %d completion tokens in %d calls\n", rep.Status.Usage.PromptTokens, rep.Status.Usage.CompletionTokens, rep.Status.Usage.Calls)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: b.String()}}}
}

// startInputs reads refine_start's spec and gaps from the fields given.
func (s *Server) startInputs(in startInput) (string, []gap.Gap, error) {
	spec := in.Spec
	switch {
	case in.Spec != "" && in.SpecPath != "":
		return "", nil, fieldErr("spec_path", "give spec or spec_path, not both")
	case in.SpecPath != "":
		b, err := s.readPath("spec_path", in.SpecPath)
		if err != nil {
			return "", nil, err
		}
		spec = string(b)
	case strings.TrimSpace(in.Spec) == "":
		return "", nil, fieldErr("spec", "is required: the spec's markdown text (or spec_path)")
	}
	if len(spec) > maxInputBytes {
		return "", nil, fieldErr("spec", "holds %d bytes, more than the limit %d", len(spec), maxInputBytes)
	}
	given := 0
	for _, ok := range []bool{in.Gaps != "", len(in.GapList) > 0, in.GapsPath != ""} {
		if ok {
			given++
		}
	}
	if given > 1 {
		return "", nil, fieldErr("gaps", "give one of gaps, gap_list and gaps_path")
	}
	var gaps []gap.Gap
	var err error
	switch {
	case len(in.GapList) > 0:
		gaps = make([]gap.Gap, 0, len(in.GapList))
		for i, g := range in.GapList {
			field := fmt.Sprintf("gap_list[%d]", i)
			id, err := gap.ParseID(strings.TrimSpace(g.ID))
			if err != nil {
				return "", nil, fieldErr(field+".id", "%v", err)
			}
			sev := gap.Medium
			if g.Severity != "" {
				if sev, err = gap.ParseSeverity(g.Severity); err != nil {
					return "", nil, fieldErr(field+".severity", "%v", err)
				}
			}
			title := strings.TrimSpace(g.Title)
			if title == "" || strings.ContainsAny(title, "\r\n") {
				return "", nil, fieldErr(field+".title", "must be one non-empty line")
			}
			gaps = append(gaps, gap.Gap{ID: id, Severity: sev, Title: title})
		}
	case in.GapsPath != "":
		b, err := s.readPath("gaps_path", in.GapsPath)
		if err != nil {
			return "", nil, err
		}
		gaps, err = parseGaps("gaps_path", string(b))
		if err != nil {
			return "", nil, err
		}
	case strings.TrimSpace(in.Gaps) != "":
		if gaps, err = parseGaps("gaps", in.Gaps); err != nil {
			return "", nil, err
		}
	}
	// No gaps: the session discovers them from the spec first (DESIGN §19)
	// and asks the user to confirm the list.
	return spec, gaps, nil
}

// parseGaps reads a gap list given as text (markdown lines or JSON).
func parseGaps(field, text string) ([]gap.Gap, error) {
	if len(text) > maxInputBytes {
		return nil, fieldErr(field, "holds %d bytes, more than the limit %d", len(text), maxInputBytes)
	}
	name := field + ".md"
	if t := strings.TrimSpace(text); strings.HasPrefix(t, "[") {
		name = field + ".json"
	}
	gaps, err := gapsfile.Parse(name, []byte(text))
	if err != nil {
		return nil, fieldErr(field, "%v", err)
	}
	return gaps, nil
}

// readPath reads a file refine_start names, when the server allows it.
func (s *Server) readPath(field, path string) ([]byte, error) {
	if !s.cfg.AllowPaths {
		return nil, fieldErr(field, "this server does not read files (it is served over HTTP): give the text instead")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fieldErr(field, "%v", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxInputBytes+1))
	if err != nil {
		return nil, fieldErr(field, "%v", err)
	}
	if len(b) > maxInputBytes {
		return nil, fieldErr(field, "%s is larger than the limit %d bytes", path, maxInputBytes)
	}
	return b, nil
}
