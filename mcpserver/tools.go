package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/gap"
	"github.com/refine-spec/refine/internal/statusjson"
	"github.com/refine-spec/refine/rollback"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/validate"
)

// How a driving tool's description says who does the work.
const drivesNote = " The session's work (Engineer and Reviewer calls, through your model by sampling when you offer it; questions, through elicitation when you offer it) runs inside this call, with progress notifications; the call returns when the session pauses for a question, ends, or after a bounded time. While the result says running=true, call refine_continue."

func (s *Server) addTools() {
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true}
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "refine_start", Title: "Start a refinement session",
		Description: "Start a spec-refinement session: give the spec (text in spec, or a file in spec_path) and its open gaps (text in gaps: '- GAP-AREA-NNN (SEVERITY): title' lines or a JSON array; or gap_list; or a file in gaps_path), and optional settings. Without gaps the session first discovers them from the spec (one Reviewer call) and asks the user to confirm the list (accept, edit, drop, rediscover, pause). Returns the session ID and where it stands." + drivesNote},
		s.toolStart)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "refine_continue", Title: "Continue a session",
		Description: "Continue a session that is running or was interrupted: drives it further." + drivesNote},
		s.toolContinue)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "refine_answer", Title: "Answer a pending question",
		Description: "Answer a session's pending question: question_id and the option key from the question's options (key), with text when the option takes text (or the question allows it). Then the session continues." + drivesNote},
		s.toolAnswer)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "refine_status", Title: "Where a session stands", Annotations: ro,
		Description: "Report a session's status: outcome, round, gaps with their states, convergence per round, decisions, conflicts, rollbacks, pending questions (whole), token usage. Does not drive the session."},
		s.toolStatus)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "refine_sessions", Title: "List sessions", Annotations: ro,
		Description: "List the sessions of the store, newest activity first: ID, outcome, round, open gaps, pending questions, last activity."},
		s.toolSessions)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "refine_approve", Title: "Approve the spec now",
		Description: "End a session now as USER_APPROVED: the user accepts the spec with its known gaps (note says why). Refused while a CRITICAL conflict is unresolved, or a HIGH one unless acknowledge_high. The final spec is then written." + drivesNote},
		s.toolApprove)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "refine_abandon", Title: "Abandon a session", Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true)},
		Description: "End a session now as ABANDONED (note says why). Its files stay in the store."},
		s.toolAbandon)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "refine_rollback", Title: "Roll rounds back",
		Description: "Undo whole rounds: roll the session back to the end of round to_round (0 = before round 1) with a reason; adjustments are instructions for the retried rounds. Undone rounds are archived. A rollback dialog the session needs is asked by elicitation when offered, else returned as a pending question for refine_answer. Does not drive the session: call refine_continue after."},
		s.toolRollback)
	mcp.AddTool(s.mcp, &mcp.Tool{Name: "refine_validate", Title: "Validate an Engineer or Reviewer output", Annotations: ro,
		Description: "Validate one Engineer or Reviewer output the way a session does (read as meant, then structure, then content): success, the failure type with its message and line, whether a retry could fix it, warnings, gaps addressed with their confidence, new gaps, issues found, and what was normalized. Give gaps to cross-check gap IDs and round to check Reviewer issue IDs."},
		s.toolValidate)
}

func ptr[T any](v T) *T { return &v }

// sessionInput names a session.
type sessionInput struct {
	SessionID string `json:"session_id" jsonschema:"the session's ID, as refine_start or refine_sessions gave it"`
}

// gapInput is one gap of gap_list.
type gapInput struct {
	ID       string `json:"id" jsonschema:"GAP-AREA-NNN, e.g. GAP-API-001"`
	Severity string `json:"severity,omitempty" jsonschema:"CRITICAL, HIGH, MEDIUM (default) or LOW"`
	Title    string `json:"title" jsonschema:"one line saying what is missing"`
}

// settingsInput are the settings refine_start accepts; zero keeps the default.
type settingsInput struct {
	MaxRounds    int    `json:"max_rounds,omitempty" jsonschema:"stop with MAX_ROUNDS after this many rounds (1-99; default 10)"`
	GapsPerRound int    `json:"gaps_per_round,omitempty" jsonschema:"open gaps one round takes on (default 3)"`
	ParallelGaps int    `json:"parallel_gaps,omitempty" jsonschema:"draft up to N assigned gaps concurrently (default 1)"`
	MaxRetries   int    `json:"max_retries,omitempty" jsonschema:"validation retries per role and round (default 2)"`
	MaxTokens    int    `json:"max_tokens,omitempty" jsonschema:"cap of each completion, sent as sampling maxTokens (default 8192 under sampling)"`
	RollbackMode string `json:"rollback_mode,omitempty" jsonschema:"interactive (default), auto-retry or strict"`
}

type startInput struct {
	Spec      string         `json:"spec,omitempty" jsonschema:"the spec to refine, as markdown text (or give spec_path)"`
	SpecPath  string         `json:"spec_path,omitempty" jsonschema:"a file holding the spec, read by the server (stdio only)"`
	Gaps      string         `json:"gaps,omitempty" jsonschema:"the open gaps as text: '- GAP-AREA-NNN (SEVERITY): title' lines, or a JSON array of {id, severity, title}"`
	GapList   []gapInput     `json:"gap_list,omitempty" jsonschema:"the open gaps as a list (instead of gaps)"`
	GapsPath  string         `json:"gaps_path,omitempty" jsonschema:"a file holding the gaps, read by the server (stdio only)"`
	SessionID string         `json:"session_id,omitempty" jsonschema:"an ID to give the new session (default: a new one); 1-64 of A-Z a-z 0-9 . _ -"`
	Settings  *settingsInput `json:"settings,omitempty" jsonschema:"optional settings; they are stored with the session"`
}

type answerInput struct {
	SessionID  string `json:"session_id" jsonschema:"the session's ID"`
	QuestionID string `json:"question_id" jsonschema:"the pending question's id"`
	Key        string `json:"key" jsonschema:"the chosen option's key, from the question's options"`
	Text       string `json:"text,omitempty" jsonschema:"free text, required by options marked text=true"`
}

type approveInput struct {
	SessionID       string `json:"session_id" jsonschema:"the session's ID"`
	Note            string `json:"note,omitempty" jsonschema:"why the spec is approved as it stands"`
	AcknowledgeHigh bool   `json:"acknowledge_high,omitempty" jsonschema:"accept unresolved HIGH conflicts as known limitations"`
}

type abandonInput struct {
	SessionID string `json:"session_id" jsonschema:"the session's ID"`
	Note      string `json:"note,omitempty" jsonschema:"why the session is abandoned"`
}

type rollbackInput struct {
	SessionID   string   `json:"session_id" jsonschema:"the session's ID"`
	ToRound     int      `json:"to_round" jsonschema:"the last round to keep (0 = before round 1)"`
	Reason      string   `json:"reason" jsonschema:"why the rounds are undone"`
	Adjustments []string `json:"adjustments,omitempty" jsonschema:"instructions for the retried rounds"`
}

type validateInput struct {
	Role    string `json:"role" jsonschema:"engineer or reviewer"`
	Content string `json:"content" jsonschema:"the output to validate, as markdown"`
	Gaps    string `json:"gaps,omitempty" jsonschema:"the gap list ('- GAP-AREA-NNN (SEVERITY): title' lines or JSON) to cross-check gap IDs"`
	Round   int    `json:"round,omitempty" jsonschema:"the current round: Reviewer issue IDs must be ISSUE-R{round}-NNN (0: any)"`
}

type noInput struct{}

// report is what the session tools return.
type report struct {
	SessionID string `json:"session_id"`
	// Outcome is RUNNING, PAUSED, FAILED or a terminal outcome.
	Outcome string `json:"outcome" jsonschema:"RUNNING, PAUSED, FAILED, or a terminal outcome: COMPLETE, GOOD_ENOUGH, USER_APPROVED, MAX_ROUNDS, STALL_EXIT, ABANDONED"`
	Running bool   `json:"running" jsonschema:"the session's work goes on: call refine_continue"`
	Round   int    `json:"round" jsonschema:"the last round played"`
	Reason  string `json:"reason,omitempty"`
	// Note says what happened in this call ("the time budget is spent").
	Note string `json:"note,omitempty"`
	// Next says what to do next.
	Next     string               `json:"next"`
	OpenGaps []string             `json:"open_gaps" jsonschema:"the gaps still open: ID (SEVERITY, STATE): title"`
	Pending  []statusjson.Pending `json:"pending" jsonschema:"questions waiting for an answer; answer with refine_answer"`
	// Resources are the session's files as resource URIs.
	Resources []string `json:"resources"`
	// Status is the full status (refine_status only).
	Status *statusjson.Status `json:"status,omitempty"`
}

// fieldErr is a tool error naming the input field at fault.
func fieldErr(field, format string, args ...any) error {
	return fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...))
}

func checkSessionID(id string) error {
	if id == "" {
		return fieldErr("session_id", "is required")
	}
	if err := store.ValidSessionID(id); err != nil {
		return fieldErr("session_id", "%v", err)
	}
	return nil
}

// retry returns the session a multi round-trip retry continues, or ""
// when req is not a retry.
func (s *Server) retry(req *mcp.CallToolRequest) (id string, trips int, err error) {
	if req.Params.RequestState == "" {
		return "", 0, nil
	}
	id, batch, trips, err := decodeState(req.Params.RequestState)
	if err != nil {
		return "", 0, err
	}
	r := s.running(id)
	if r == nil {
		return "", 0, fmt.Errorf("requestState: session %s is no longer running here (the server restarted or the session stopped): call refine_continue", id)
	}
	if err := s.deliver(r, batch, req.Params.InputResponses); err != nil {
		return "", 0, err
	}
	return id, trips, nil
}

func (s *Server) toolStart(ctx context.Context, req *mcp.CallToolRequest, in startInput) (*mcp.CallToolResult, report, error) {
	if id, trips, err := s.retry(req); err != nil || id != "" {
		if err != nil {
			return nil, report{}, err
		}
		return s.driveAndReport(ctx, req, id, nil, trips, "")
	}
	spec, gaps, err := s.startInputs(in)
	if err != nil {
		return nil, report{}, err
	}
	p := peerOf(req.Session)
	sampling, err := s.useSampling(p)
	if err != nil {
		return nil, report{}, err
	}
	var id string
	var st refine.Store
	if in.SessionID != "" {
		if err := checkSessionID(in.SessionID); err != nil {
			return nil, report{}, err
		}
		nc, ok := s.cfg.Backend.(store.NamedCreator)
		if !ok {
			return nil, report{}, fieldErr("session_id", "this store cannot create a session under a chosen ID: leave it out")
		}
		id = in.SessionID
		if st, err = nc.CreateNamed(ctx, id); err != nil {
			return nil, report{}, fieldErr("session_id", "%v", err)
		}
	} else if id, st, err = s.cfg.Backend.Create(ctx); err != nil {
		return nil, report{}, fmt.Errorf("create a session: %w", err)
	}
	r, rctx, err := s.newRunner(id)
	if err != nil {
		closeStore(st)
		return nil, report{}, err
	}
	sess, err := s.newSession(ctx, id, st, sampling, r, spec, gaps, in.Settings)
	if err != nil {
		closeStore(st)
		s.dropRunner(id, r)
		r.cancel()
		close(r.done)
		_ = s.cfg.Backend.Delete(context.WithoutCancel(ctx), id)
		return nil, report{}, err
	}
	s.launch(rctx, r, sess, st)
	s.touch(ctx, id, true)
	return s.driveRunner(ctx, req, r, nil, 0, "")
}

// newSession starts session id over st with the spec, the gaps and the
// settings given.
func (s *Server) newSession(ctx context.Context, id string, st refine.Store, sampling bool, r *runner, spec string, gaps []gap.Gap, set *settingsInput) (*refine.Session, error) {
	cfg, err := s.sessionConfig(ctx, id, st, sampling, r)
	if err != nil {
		return nil, err
	}
	cfg.Spec, cfg.Gaps = spec, gaps
	if sampling {
		cfg.Backend = s.samplingBackend()
	}
	if set != nil {
		for _, f := range []struct {
			name string
			v    int
			dst  *int
			max  int
		}{
			{"settings.max_rounds", set.MaxRounds, &cfg.MaxRounds, 99},
			{"settings.gaps_per_round", set.GapsPerRound, &cfg.GapsPerRound, 100},
			{"settings.parallel_gaps", set.ParallelGaps, &cfg.ParallelGaps, 64},
			{"settings.max_retries", set.MaxRetries, &cfg.MaxRetries, 10},
			{"settings.max_tokens", set.MaxTokens, &cfg.MaxTokens, 1 << 20},
		} {
			if f.v < 0 || f.v > f.max {
				return nil, fieldErr(f.name, "%d is out of range 0-%d (0 keeps the default)", f.v, f.max)
			}
			if f.v > 0 {
				*f.dst = f.v
			}
		}
		if set.RollbackMode != "" {
			m, err := rollback.ParseMode(set.RollbackMode)
			if err != nil {
				return nil, fieldErr("settings.rollback_mode", "%v", err)
			}
			cfg.RollbackMode = m
		}
	}
	sess, err := refine.New(ctx, cfg)
	if err != nil {
		if errors.Is(err, refine.ErrInvalidConfig) {
			return nil, fmt.Errorf("settings: %w", err)
		}
		return nil, err
	}
	if set != nil && set.RollbackMode != "" {
		if err := sess.SetRollbackMode(ctx, cfg.RollbackMode); err != nil {
			return nil, err
		}
	}
	return sess, nil
}

func (s *Server) toolContinue(ctx context.Context, req *mcp.CallToolRequest, in sessionInput) (*mcp.CallToolResult, report, error) {
	id, trips, err := s.retry(req)
	if err != nil {
		return nil, report{}, err
	}
	if id == "" {
		if err := checkSessionID(in.SessionID); err != nil {
			return nil, report{}, err
		}
		id = in.SessionID
	}
	return s.driveAndReport(ctx, req, id, nil, trips, "")
}

func (s *Server) toolAnswer(ctx context.Context, req *mcp.CallToolRequest, in answerInput) (*mcp.CallToolResult, report, error) {
	if id, trips, err := s.retry(req); err != nil || id != "" {
		if err != nil {
			return nil, report{}, err
		}
		return s.driveAndReport(ctx, req, id, nil, trips, "")
	}
	if err := checkSessionID(in.SessionID); err != nil {
		return nil, report{}, err
	}
	if in.QuestionID == "" {
		return nil, report{}, fieldErr("question_id", "is required: take it from the pending question's id")
	}
	if strings.TrimSpace(in.Key) == "" && in.Text == "" {
		return nil, report{}, fieldErr("key", "is required: one of the pending question's option keys")
	}
	ans := refine.Answer{Key: strings.TrimSpace(in.Key), Text: strings.TrimSpace(in.Text)}
	if r := s.running(in.SessionID); r != nil {
		// The session is running: the question is the one it is about to
		// ask (or asking); answer it as it comes.
		pre := &preset{id: in.QuestionID, ans: ans}
		res, rep, err := s.driveRunner(ctx, req, r, pre, 0, "")
		switch {
		case err != nil || res.InputRequests != nil || pre.used && pre.refused == nil:
			return res, rep, err
		case pre.refused != nil:
			return nil, report{}, fieldErr("key", "%v (the question is pending now: answer it again)", pre.refused)
		case rep.Running:
			return nil, report{}, fieldErr("question_id", "%q was not asked while the session ran: refine_status lists the pending questions", in.QuestionID)
		}
		// The run ended before the question came: answer it as pending.
	}
	err := s.withSession(ctx, in.SessionID, nil, func(sess *refine.Session) error {
		return sess.Answer(ctx, in.QuestionID, ans)
	})
	if err != nil {
		switch {
		case errors.Is(err, refine.ErrUnknownQuestion):
			return nil, report{}, fieldErr("question_id", "%v: refine_status lists the pending questions", err)
		case errors.Is(err, refine.ErrInvalidAnswer):
			return nil, report{}, fieldErr("key", "%v", err)
		}
		return nil, report{}, err
	}
	return s.driveAndReport(ctx, req, in.SessionID, nil, 0, "answer recorded")
}

func (s *Server) toolStatus(ctx context.Context, _ *mcp.CallToolRequest, in sessionInput) (*mcp.CallToolResult, report, error) {
	if err := checkSessionID(in.SessionID); err != nil {
		return nil, report{}, err
	}
	rep, err := s.reportOf(ctx, in.SessionID, driveResult{}, "")
	if err != nil {
		return nil, report{}, err
	}
	st, err := s.statusOf(ctx, in.SessionID)
	if err != nil {
		return nil, report{}, err
	}
	full := statusjson.From(st)
	rep.Status = &full
	return textResult(rep), rep, nil
}

// sessionsOutput lists sessions.
type sessionsOutput struct {
	Sessions []sessionItem `json:"sessions"`
}

type sessionItem struct {
	ID       string         `json:"id"`
	Outcome  string         `json:"outcome"`
	Running  bool           `json:"running" jsonschema:"this server is driving it now"`
	Round    int            `json:"round"`
	OpenGaps map[string]int `json:"open_gaps" jsonschema:"open gaps by severity"`
	Pending  int            `json:"pending" jsonschema:"questions waiting for an answer"`
	Activity string         `json:"activity"`
	Updated  string         `json:"updated_at"`
}

func (s *Server) toolSessions(ctx context.Context, _ *mcp.CallToolRequest, _ noInput) (*mcp.CallToolResult, sessionsOutput, error) {
	list, err := s.cfg.Backend.Sessions(ctx)
	if err != nil {
		return nil, sessionsOutput{}, fmt.Errorf("list sessions: %w", err)
	}
	out := sessionsOutput{Sessions: []sessionItem{}}
	var b strings.Builder
	for _, si := range list {
		it := sessionItem{ID: si.ID, Outcome: string(si.Outcome), Running: s.running(si.ID) != nil, Round: si.Round,
			OpenGaps: si.OpenGaps, Pending: si.Pending, Activity: si.Activity, Updated: si.Updated.UTC().Format("2006-01-02T15:04:05Z")}
		if it.OpenGaps == nil {
			it.OpenGaps = map[string]int{}
		}
		out.Sessions = append(out.Sessions, it)
		fmt.Fprintf(&b, "%s  %s  round %d  pending %d  %s\n", it.ID, it.Outcome, it.Round, it.Pending, it.Activity)
	}
	if len(list) == 0 {
		b.WriteString("No sessions yet: start one with refine_start.\n")
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: b.String()}}}, out, nil
}

func (s *Server) toolApprove(ctx context.Context, req *mcp.CallToolRequest, in approveInput) (*mcp.CallToolResult, report, error) {
	if id, trips, err := s.retry(req); err != nil || id != "" {
		if err != nil {
			return nil, report{}, err
		}
		return s.driveAndReport(ctx, req, id, nil, trips, "")
	}
	if err := checkSessionID(in.SessionID); err != nil {
		return nil, report{}, err
	}
	err := s.withSession(ctx, in.SessionID, nil, func(sess *refine.Session) error {
		return sess.Approve(ctx, refine.ApproveRequest{Note: in.Note, AcknowledgeHigh: in.AcknowledgeHigh})
	})
	if err != nil {
		return nil, report{}, err
	}
	return s.driveAndReport(ctx, req, in.SessionID, nil, 0, "approved: the final spec is in final_spec.md")
}

func (s *Server) toolAbandon(ctx context.Context, _ *mcp.CallToolRequest, in abandonInput) (*mcp.CallToolResult, report, error) {
	if err := checkSessionID(in.SessionID); err != nil {
		return nil, report{}, err
	}
	err := s.withSession(ctx, in.SessionID, nil, func(sess *refine.Session) error {
		return sess.Abandon(ctx, in.Note)
	})
	if err != nil {
		return nil, report{}, err
	}
	rep, err := s.reportOf(ctx, in.SessionID, driveResult{}, "abandoned")
	if err != nil {
		return nil, report{}, err
	}
	return textResult(rep), rep, nil
}

func (s *Server) toolRollback(ctx context.Context, req *mcp.CallToolRequest, in rollbackInput) (*mcp.CallToolResult, report, error) {
	if err := checkSessionID(in.SessionID); err != nil {
		return nil, report{}, err
	}
	if in.ToRound < 0 || in.ToRound > 99 {
		return nil, report{}, fieldErr("to_round", "%d is out of range 0-99", in.ToRound)
	}
	if strings.TrimSpace(in.Reason) == "" {
		return nil, report{}, fieldErr("reason", "is required: say why the rounds are undone")
	}
	var ask refine.Asker = refine.DeferAsker{}
	if p := peerOf(req.Session); p.elicit && !p.mrtr {
		ask = refine.AskerFunc(func(ctx context.Context, q refine.Question) (refine.Answer, error) {
			res, err := p.ss.Elicit(ctx, elicitParams(q))
			if err != nil {
				return refine.Answer{}, refine.ErrDeferred
			}
			rep := answerOf(q, res)
			return rep.ans, rep.err
		})
	}
	var rb refine.RollbackReport
	err := s.withSession(ctx, in.SessionID, ask, func(sess *refine.Session) error {
		var err error
		rb, err = sess.Rollback(ctx, refine.RollbackRequest{To: in.ToRound, Reason: in.Reason, Adjustments: in.Adjustments})
		return err
	})
	note := ""
	switch {
	case errors.Is(err, refine.ErrDeferred):
		note = "the rollback waits for an answer: answer the pending question with refine_answer"
	case err != nil:
		return nil, report{}, fieldErr("to_round", "%v", err)
	case len(rb.Undone) > 0:
		note = fmt.Sprintf("rolled back rounds %v to round %d; archived as %s", rb.Undone, rb.Round, strings.Join(rb.Archives, ", "))
	default:
		note = "no rollback: " + rb.Decision
	}
	rep, err := s.reportOf(ctx, in.SessionID, driveResult{}, note)
	if err != nil {
		return nil, report{}, err
	}
	return textResult(rep), rep, nil
}

func (s *Server) toolValidate(_ context.Context, _ *mcp.CallToolRequest, in validateInput) (*mcp.CallToolResult, map[string]any, error) {
	role := gap.Role(strings.ToLower(strings.TrimSpace(in.Role)))
	if role != gap.Engineer && role != gap.Reviewer {
		return nil, nil, fieldErr("role", "%q: want engineer or reviewer", in.Role)
	}
	if in.Round < 0 || in.Round > 99 {
		return nil, nil, fieldErr("round", "%d is out of range: 1-99, or 0 for any round", in.Round)
	}
	if len(in.Content) > validate.DefaultMaxOutputBytes {
		return nil, nil, fieldErr("content", "holds %d bytes, more than the limit %d", len(in.Content), validate.DefaultMaxOutputBytes)
	}
	opt := validate.Options{Round: in.Round}
	if strings.TrimSpace(in.Gaps) != "" {
		gaps, err := parseGaps("gaps", in.Gaps)
		if err != nil {
			return nil, nil, err
		}
		for _, g := range gaps {
			opt.KnownGaps = append(opt.KnownGaps, g.ID)
		}
	}
	res, err := validate.Validate(role, in.Content, opt)
	if err != nil {
		return nil, nil, fieldErr("content", "%v", err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, nil, err
	}
	verdict := "VALID"
	if !res.Success {
		verdict = fmt.Sprintf("INVALID (%s)", res.FailureType)
	}
	text := fmt.Sprintf("%s %s output: %s", verdict, role, res.Message)
	if len(res.Warnings) > 0 {
		text += "\nWarnings:\n- " + strings.Join(res.Warnings, "\n- ")
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, out, nil
}

// driveAndReport drives session id (opening it when it is not running)
// and reports where it stands.
func (s *Server) driveAndReport(ctx context.Context, req *mcp.CallToolRequest, id string, pre *preset, trips int, note string) (*mcp.CallToolResult, report, error) {
	r, err := s.resume(ctx, id, peerOf(req.Session))
	if err != nil {
		return nil, report{}, err
	}
	return s.driveRunner(ctx, req, r, pre, trips, note)
}

func (s *Server) driveRunner(ctx context.Context, req *mcp.CallToolRequest, r *runner, pre *preset, trips int, note string) (*mcp.CallToolResult, report, error) {
	d := s.drive(ctx, req, r, pre, trips)
	if d.input != nil {
		return d.input, report{}, nil
	}
	if d.note != "" {
		note = strings.TrimPrefix(note+"; "+d.note, "; ")
	}
	rep, err := s.reportOf(context.WithoutCancel(ctx), r.id, d, note)
	if err != nil {
		return nil, report{}, err
	}
	res := textResult(rep)
	if d.err != nil && !d.running {
		res.IsError = true
	}
	return res, rep, nil
}
