package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/internal/termtext"
	"github.com/refine-spec/refine/store"
)

// protocolMRTR is the first protocol version where a server returns input
// requests in a tool result instead of sending requests (SEP-2322).
const protocolMRTR = "2026-07-28"

// peer is what the client driving a tool call can do.
type peer struct {
	ss       *mcp.ServerSession
	mrtr     bool // input requests in results (2026-07-28), not server requests
	sampling bool
	elicit   bool
}

func peerOf(ss *mcp.ServerSession) peer {
	p := peer{ss: ss}
	if ss == nil {
		return p
	}
	ip := ss.InitializeParams()
	if ip == nil {
		return p
	}
	p.mrtr = ip.ProtocolVersion >= protocolMRTR
	if c := ip.Capabilities; c != nil {
		p.sampling = c.Sampling != nil
		p.elicit = c.Elicitation != nil && (c.Elicitation.Form != nil || c.Elicitation.URL == nil)
	}
	return p
}

// preset is an answer given with refine_answer while the session runs: the
// question it names is answered with it instead of being asked.
type preset struct {
	id  string
	ans refine.Answer
	// used: the question came and took the answer; refused: it came and
	// the answer did not fit it (the question is then deferred).
	used    bool
	refused error
}

// statePrefix starts the requestState of a multi round-trip result: the
// session, the batch of input requests and how many round trips this call
// has made. It is checked, never trusted: a stale batch is refused.
const statePrefix = "refine1"

func encodeState(id string, batch, trips int) string {
	return fmt.Sprintf("%s:%s:%d:%d", statePrefix, id, batch, trips)
}

func decodeState(s string) (id string, batch, trips int, err error) {
	parts := strings.Split(s, ":")
	if len(parts) != 4 || parts[0] != statePrefix {
		return "", 0, 0, errors.New("requestState: not one this server issued")
	}
	batch, err1 := strconv.Atoi(parts[2])
	trips, err2 := strconv.Atoi(parts[3])
	if err1 != nil || err2 != nil || store.ValidSessionID(parts[1]) != nil {
		return "", 0, 0, errors.New("requestState: malformed")
	}
	return parts[1], batch, trips, nil
}

// driveResult is how a tool call's driving ended.
type driveResult struct {
	// input is set when the call returns input requests (2026-07-28).
	input *mcp.CallToolResult
	// running: the session goes on; finished: Run returned (out, err).
	running bool
	out     refine.Outcome
	err     error
	note    string
}

// drive fulfils r's needs for one tool call until the session pauses or
// ends, the call budget is spent, the round trips of a multi round-trip
// call are used up, or the call is cancelled (which stops the session; it
// stays resumable). trips is the round trips this call already made.
func (s *Server) drive(ctx context.Context, req *mcp.CallToolRequest, r *runner, pre *preset, trips int) driveResult {
	if !r.drive.TryLock() {
		return driveResult{running: true, note: "another tool call is driving this session now; call refine_status to watch it"}
	}
	defer r.drive.Unlock()
	p := peerOf(req.Session)
	prog := progress{ss: req.Session, token: req.Params.GetProgressToken()}
	budget := time.NewTimer(s.cfg.CallBudget)
	defer budget.Stop()
	if len(r.inflight) > 0 {
		// An earlier call's input requests were never answered (the client
		// dropped the retry): ask them again.
		keys := slices.Sorted(maps.Keys(r.inflight))
		batch := make([]*need, 0, len(keys))
		for _, k := range keys {
			batch = append(batch, r.inflight[k])
		}
		r.inflight = nil
		if p.mrtr {
			if res := s.parkNeeds(r, p, batch, pre, trips); res != nil {
				return driveResult{input: res}
			}
		} else {
			for _, n := range batch {
				s.fulfil(ctx, p, r.id, n, pre)
			}
		}
	}
	for {
		n := r.held
		r.held = nil
		if n == nil {
			select {
			case n = <-r.needs:
			case e := <-r.events:
				prog.send(ctx, e)
				s.onEvent(ctx, r.id, e)
				continue
			case <-r.done:
				return driveResult{out: r.out, err: r.err}
			case <-budget.C:
				return driveResult{running: true, note: fmt.Sprintf("this call's time budget (%v) is spent; the session goes on when you call refine_continue", s.cfg.CallBudget)}
			case <-ctx.Done():
				r.stop()
				return driveResult{out: r.out, err: fmt.Errorf("the tool call was cancelled; the session stopped with its state committed and is resumable with refine_continue: %w", ctx.Err())}
			}
		}
		if !p.mrtr {
			s.fulfil(ctx, p, r.id, n, pre)
			continue
		}
		if trips >= s.cfg.MaxRoundTrips {
			r.held = n // the next call starts with it
			n.park()
			return driveResult{running: true, note: fmt.Sprintf("this call made %d input round trips; the session goes on when you call refine_continue", trips)}
		}
		batch := []*need{n}
		for more := true; more; {
			select {
			case m := <-r.needs:
				batch = append(batch, m)
			default:
				more = false
			}
		}
		if res := s.parkNeeds(r, p, batch, pre, trips); res != nil {
			return driveResult{input: res}
		}
	}
}

// fulfil answers n on the request path: a sampling or elicitation request
// sent to the client while the tool call is served.
func (s *Server) fulfil(ctx context.Context, p peer, id string, n *need, pre *preset) {
	switch n.kind {
	case needSample:
		if !p.sampling {
			n.reply <- reply{err: errors.New("the client driving this call does not offer sampling: drive the session from a client that samples, or restart refine mcp with --llm")}
			return
		}
		res, err := p.ss.CreateMessage(ctx, s.samplingParams(id, n.req))
		if err != nil {
			n.reply <- reply{err: samplingErr(err)}
			return
		}
		n.reply <- reply{resp: responseOf(res.Content, res.Model, res.StopReason)}
	case needAsk:
		if rep, ok := pre.match(n.q); ok {
			n.reply <- rep
			return
		}
		if !p.elicit {
			n.reply <- reply{err: refine.ErrDeferred}
			return
		}
		res, err := p.ss.Elicit(ctx, elicitParams(n.q))
		if err != nil {
			s.log.Warn("elicitation failed; the question is deferred", "session", id, "question", n.q.ID, "err", err)
			n.reply <- reply{err: refine.ErrDeferred}
			return
		}
		n.reply <- answerOf(n.q, res)
	}
}

// parkNeeds answers what it can of batch at once and returns the rest as
// input requests of a multi round-trip result, nil when nothing had to go
// to the client.
func (s *Server) parkNeeds(r *runner, p peer, batch []*need, pre *preset, trips int) *mcp.CallToolResult {
	r.batch++
	r.inflight = map[string]*need{}
	reqs := mcp.InputRequestMap{}
	for i, m := range batch {
		key := fmt.Sprintf("refine-%d-%d", r.batch, i+1)
		switch m.kind {
		case needSample:
			if !p.sampling {
				m.reply <- reply{err: errors.New("the client driving this call does not offer sampling: drive the session from a client that samples, or restart refine mcp with --llm")}
				continue
			}
			reqs[key] = s.samplingParams(r.id, m.req)
		case needAsk:
			if rep, ok := pre.match(m.q); ok {
				m.reply <- rep
				continue
			}
			if !p.elicit {
				m.reply <- reply{err: refine.ErrDeferred}
				continue
			}
			reqs[key] = elicitParams(m.q)
		}
		r.inflight[key] = m
		m.park()
	}
	if len(reqs) == 0 {
		return nil
	}
	return &mcp.CallToolResult{InputRequests: reqs, RequestState: encodeState(r.id, r.batch, trips+1)}
}

// deliver hands the client's input responses of a multi round-trip retry
// to the needs they answer.
func (s *Server) deliver(r *runner, batch int, responses mcp.InputResponseMap) error {
	r.drive.Lock()
	defer r.drive.Unlock()
	if batch != r.batch || r.inflight == nil {
		return fmt.Errorf("requestState: batch %d is not the one the session waits for (%d): call refine_continue without it", batch, r.batch)
	}
	for key := range r.inflight {
		if _, ok := responses[key]; !ok {
			return fmt.Errorf("inputResponses: %q is missing", key)
		}
	}
	for key, n := range r.inflight {
		switch res := responses[key].(type) {
		case *mcp.CreateMessageWithToolsResult:
			if n.kind != needSample {
				return fmt.Errorf("inputResponses[%q]: a sampling result answers an elicitation", key)
			}
			var c mcp.Content
			if len(res.Content) > 0 {
				c = res.Content[0]
			}
			n.reply <- reply{resp: responseOf(c, res.Model, res.StopReason)}
		case *mcp.ElicitResult:
			if n.kind != needAsk {
				return fmt.Errorf("inputResponses[%q]: an elicitation result answers a sampling request", key)
			}
			n.reply <- answerOf(n.q, res)
		default:
			return fmt.Errorf("inputResponses[%q]: unexpected %T", key, res)
		}
	}
	r.inflight = nil
	return nil
}

// match answers q with the preset answer when it names q: the reply to
// send, and whether it applied.
func (pre *preset) match(q refine.Question) (reply, bool) {
	if pre == nil || pre.used || pre.id != q.ID {
		return reply{}, false
	}
	pre.used = true
	if err := q.Check(pre.ans); err != nil {
		pre.refused = err
		return reply{err: fmt.Errorf("%w: %v", refine.ErrDeferred, err)}, true
	}
	return reply{ans: pre.ans}, true
}

// samplingParams builds the createMessage request of a role call: the
// prompt as refine built it, maxTokens from the settings, the role's model
// hint, and metadata naming the call.
func (s *Server) samplingParams(id string, req refine.Request) *mcp.CreateMessageParams {
	var system []string
	p := &mcp.CreateMessageParams{MaxTokens: int64(req.MaxTokens), IncludeContext: "none", Messages: []*mcp.SamplingMessage{}}
	if p.MaxTokens <= 0 {
		p.MaxTokens = DefaultMaxTokens
	}
	for _, m := range req.Messages {
		if m.Role == "system" {
			system = append(system, m.Content)
			continue
		}
		role := mcp.Role("user")
		if m.Role == "assistant" {
			role = "assistant"
		}
		p.Messages = append(p.Messages, &mcp.SamplingMessage{Role: role, Content: &mcp.TextContent{Text: m.Content}})
	}
	p.SystemPrompt = strings.Join(system, "\n\n")
	hint := s.cfg.EngineerHint
	if req.Role == refine.Reviewer {
		hint = s.cfg.ReviewerHint
	}
	if hint != "" {
		p.ModelPreferences = &mcp.ModelPreferences{Hints: []*mcp.ModelHint{{Name: hint}}, IntelligencePriority: 0.8}
	}
	p.Metadata = map[string]any{"refine": SamplingMetadata{Session: id, Role: string(req.Role), Round: req.Round, Attempt: req.Attempt, Call: req.Call, Discovery: req.Discovery}}
	return p
}

// SamplingMetadata is what each sampling request carries under the
// "refine" key of its metadata: which session, role, round, attempt and
// session-wide call it is for (a client replaying recorded outputs picks
// its file by Role and Call).
type SamplingMetadata struct {
	Session string `json:"session"`
	Role    string `json:"role"`
	Round   int    `json:"round"`
	Attempt int    `json:"attempt"`
	Call    int    `json:"call"`
	// Discovery marks the discovery call (round 0): the Reviewer lists the
	// draft's gaps; its calls are numbered apart from the Reviewer's.
	Discovery bool `json:"discovery,omitempty"`
}

// responseOf turns a sampling result into a role Response; anything but
// text is an empty output (FILE_MISSING), which validation reports.
func responseOf(c mcp.Content, model, stop string) refine.Response {
	resp := refine.Response{Model: model, FinishReason: stop}
	if t, ok := c.(*mcp.TextContent); ok {
		resp.Content = t.Text
	}
	switch stop {
	case "endTurn", "stopSequence":
		resp.FinishReason = "stop"
	case "maxTokens":
		resp.FinishReason = "length"
	}
	return resp
}

// samplingErr marks a failed sampling request: a transport failure is
// transient (retried with backoff); the user or client refusing it is not.
func samplingErr(err error) error {
	if errors.Is(err, mcp.ErrConnectionClosed) {
		return &refine.TransientError{Err: fmt.Errorf("sampling: %w", err)}
	}
	return fmt.Errorf("sampling request refused or failed: %w", err)
}

// Elicitation form fields.
const (
	fieldChoice = "choice"
	fieldText   = "text"
)

// elicitParams asks q as a form: the question's text, its options as a
// titled enum, and a text field when an option takes text.
func elicitParams(q refine.Question) *mcp.ElicitParams {
	// The client shows the form to the user: its text by the escape
	// policy (package termtext).
	var msg strings.Builder
	msg.WriteString(termtext.Line(q.Title))
	if b := strings.TrimSpace(q.Body); b != "" {
		msg.WriteString("\n\n" + termtext.Escape(b))
	}
	props := map[string]any{}
	required := []string{}
	if len(q.Options) > 0 {
		one := make([]any, 0, len(q.Options))
		for _, o := range q.Options {
			title := termtext.Line(o.Label)
			if o.Recommended {
				title += " (recommended)"
			}
			one = append(one, map[string]any{"const": o.Key, "title": title})
		}
		choice := map[string]any{"type": "string", "title": "Your choice", "oneOf": one}
		if q.Default != "" {
			choice["default"] = q.Default
		}
		props[fieldChoice] = choice
		required = append(required, fieldChoice)
	}
	if q.AllowText || len(q.TextRequired) > 0 || len(q.Options) == 0 {
		desc := "Optional text with your choice"
		if len(q.TextRequired) > 0 {
			desc = "Text, needed with option(s) " + strings.Join(q.TextRequired, ", ")
		}
		props[fieldText] = map[string]any{"type": "string", "title": "Text", "description": desc}
		if len(q.Options) == 0 {
			required = append(required, fieldText)
		}
	}
	return &mcp.ElicitParams{Mode: "form", Message: msg.String(),
		Meta:            mcp.Meta{QuestionMetaKey: QuestionMetadata{ID: q.ID, Kind: string(q.Kind), Round: q.Round}},
		RequestedSchema: map[string]any{"type": "object", "properties": props, "required": required}}
}

// QuestionMetaKey is the _meta key of an elicitation request naming the
// question it asks (a QuestionMetadata), so a client can tell questions
// apart and a scripted client can answer by kind and round.
const QuestionMetaKey = "refine/question"

// QuestionMetadata names the question an elicitation asks.
type QuestionMetadata struct {
	ID    string `json:"id"`
	Kind  string `json:"kind"`
	Round int    `json:"round"`
}

// answerOf turns an elicitation result into the question's answer: decline
// and cancel defer it, and so does an answer the question does not accept
// (the session pauses with it pending; refine_answer then answers it).
func answerOf(q refine.Question, res *mcp.ElicitResult) reply {
	if res == nil || res.Action != "accept" {
		return reply{err: refine.ErrDeferred}
	}
	var a refine.Answer
	if v, ok := res.Content[fieldChoice].(string); ok {
		a.Key = v
	}
	if v, ok := res.Content[fieldText].(string); ok {
		a.Text = strings.TrimSpace(v)
	}
	if o, ok := q.Option(a.Key); ok {
		a.Key = o.Key
	}
	if err := q.Check(a); err != nil {
		return reply{err: fmt.Errorf("%w: the answer given through elicitation did not fit (%v)", refine.ErrDeferred, err)}
	}
	return reply{ans: a}
}

// progress sends a tool call's progress notifications, when the client
// asked for them with a progress token.
type progress struct {
	ss    *mcp.ServerSession
	token any
	n     float64
}

func (p *progress) send(ctx context.Context, e refine.Event) {
	if p.token == nil || p.ss == nil {
		return
	}
	msg := progressMessage(e)
	if msg == "" {
		return
	}
	p.n++
	_ = p.ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: p.token, Progress: p.n, Message: msg})
}

// progressMessage says what e means in a few words ("" for events not worth
// a notification).
func progressMessage(e refine.Event) string {
	switch e.Kind {
	case refine.EventRoundStarted:
		return fmt.Sprintf("round %d started", e.Round)
	case refine.EventPhaseStarted:
		return fmt.Sprintf("round %d: %s phase", e.Round, e.Phase)
	case refine.EventAttemptStarted:
		return fmt.Sprintf("round %d: %s attempt %d", e.Round, e.Role, e.Attempt)
	case refine.EventValidationFailed:
		return fmt.Sprintf("round %d: %s output invalid (%s); retrying", e.Round, e.Role, e.FailureType)
	case refine.EventQuestionAsked:
		if e.Question != nil {
			return fmt.Sprintf("round %d: asking %s", e.Round, e.Question.ID)
		}
	case refine.EventRoundFinished:
		return fmt.Sprintf("round %d finished", e.Round)
	case refine.EventSessionFinished:
		return fmt.Sprintf("session finished: %s", e.Outcome)
	}
	return ""
}
