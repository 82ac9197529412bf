package mcpserver

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/llm/replay"
	"github.com/refine-spec/refine/store/memory"
)

// protocols are the two paths: server requests while serving a call
// (2025-11-25) and input requests in results (2026-07-28, SEP-2322).
var protocols = []string{"2025-11-25", "2026-07-28"}

// checkDemoComplete checks the demo session ended COMPLETE with the
// conflict decided as scripted, and every role call made through sampling.
func checkDemoComplete(t *testing.T, s *Server, c *client, rep report) refine.Status {
	t.Helper()
	if rep.Outcome != string(refine.StatusComplete) || rep.Running || len(rep.Pending) != 0 {
		t.Fatalf("report = %+v, want COMPLETE with nothing pending", rep)
	}
	st, err := s.statusOf(context.Background(), rep.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	decided := slices.ContainsFunc(st.Decisions, func(d refine.DecisionStatus) bool { return d.Issue == "ISSUE-R1-001" && d.Option == "A" })
	if !decided {
		t.Errorf("no decision A on ISSUE-R1-001: %+v", st.Decisions)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.samples == 0 || c.samples != st.Calls {
		t.Errorf("%d sampling requests for %d role calls: every call must go through sampling", c.samples, st.Calls)
	}
	if c.roles["engineer"] == 0 || c.roles["reviewer"] == 0 {
		t.Errorf("sampled roles %v: want both", c.roles)
	}
	if st.Settings.Backend.Kind != SamplingKind {
		t.Errorf("backend kind %q, want %q", st.Settings.Backend.Kind, SamplingKind)
	}
	return st
}

func TestSessionRunsToCompleteThroughSamplingAndElicitation(t *testing.T) {
	for _, proto := range protocols {
		t.Run(proto, func(t *testing.T) {
			ctx := context.Background()
			s := newServer(t, Config{MaxRoundTrips: 3, EngineerHint: "eng-model", ReviewerHint: "rev-model"})
			c := connect(t, s, clientOpts{protocol: proto, sampling: true, elicit: scripted})
			if got := c.cs.InitializeResult().ProtocolVersion; got != proto {
				t.Fatalf("negotiated %s, want %s", got, proto)
			}
			args := startArgs(t)
			args["settings"] = map[string]any{"gaps_per_round": 2, "max_tokens": 3000}
			rep, res := c.call(ctx, "refine_start", args)
			if res.IsError {
				t.Fatalf("refine_start: %s", textOf(res))
			}
			rep = c.untilStops(ctx, rep)
			st := checkDemoComplete(t, s, c, rep)
			if !maps.Equal(c.maxTok, map[int64]bool{3000: true}) {
				t.Errorf("maxTokens requested %v, want the setting's 3000 only", c.maxTok)
			}
			if want := map[string]string{"engineer": "eng-model", "reviewer": "rev-model"}; !maps.Equal(c.hints, want) {
				t.Errorf("model hints %v, want %v", c.hints, want)
			}
			if st.Settings.Backend.EngineerModel != "eng-model" {
				t.Errorf("recorded engineer model %q", st.Settings.Backend.EngineerModel)
			}
			kinds := map[string]bool{}
			for _, q := range c.asked {
				kinds[q.Kind] = true
			}
			for _, k := range []string{"conflict", "implicit", "divergence"} {
				if !kinds[k] {
					t.Errorf("no %s question asked through elicitation (asked %+v)", k, c.asked)
				}
			}
			if len(st.Rollbacks) != 1 {
				t.Errorf("rollbacks = %+v, want the divergence rollback", st.Rollbacks)
			}
		})
	}
}

// Without elicitation the pending question comes back whole and the agent
// answers it with refine_answer.
func TestQuestionsAnsweredWithRefineAnswerWithoutElicitation(t *testing.T) {
	for _, proto := range protocols {
		t.Run(proto, func(t *testing.T) {
			ctx := context.Background()
			s := newServer(t, Config{})
			c := connect(t, s, clientOpts{protocol: proto, sampling: true})
			rep, _ := c.call(ctx, "refine_start", startArgs(t))
			answered := map[string]bool{}
			for i := 0; ; i++ {
				rep = c.untilStops(ctx, rep)
				if len(rep.Pending) == 0 {
					break
				}
				if i > 20 || len(rep.Pending) == 0 {
					t.Fatalf("paused without a question to answer: %+v", rep)
				}
				q := rep.Pending[0]
				if q.Body == "" || len(q.Options) == 0 || q.Title == "" {
					t.Errorf("pending question not whole: %+v", q)
				}
				a, ok := demoAnswers[fmt.Sprintf("%s/%d", q.Kind, q.Round)]
				if !ok {
					a.Key = q.Default
				}
				var res *mcp.CallToolResult
				rep, res = c.call(ctx, "refine_answer", map[string]any{"session_id": rep.SessionID, "question_id": q.ID, "key": a.Key, "text": a.Text})
				if res.IsError {
					t.Fatalf("refine_answer %s: %s", q.ID, textOf(res))
				}
				answered[q.Kind] = true
			}
			if !answered["conflict"] {
				t.Errorf("the conflict was not answered with refine_answer (answered %v)", answered)
			}
			checkDemoComplete(t, s, c, rep)
		})
	}
}

// A declined elicitation defers the question: the session pauses with it
// pending and releases the store.
func TestDeclinedElicitationPausesTheSession(t *testing.T) {
	ctx := context.Background()
	b := memory.NewBackend()
	s := newServer(t, Config{Backend: b})
	decline := func(q QuestionMetadata, schema map[string]any) *mcp.ElicitResult {
		if q.Kind == "conflict" {
			return &mcp.ElicitResult{Action: "decline"}
		}
		return scripted(q, schema)
	}
	c := connect(t, s, clientOpts{protocol: "2025-11-25", sampling: true, elicit: decline})
	rep, _ := c.call(ctx, "refine_start", startArgs(t))
	rep = c.untilStops(ctx, rep)
	if rep.Outcome != string(refine.StatusPaused) || len(rep.Pending) != 1 || rep.Pending[0].Kind != "conflict" {
		t.Fatalf("report = %+v, want PAUSED on the conflict", rep)
	}
	if !strings.Contains(rep.Next, "refine_answer") {
		t.Errorf("next = %q, want it to name refine_answer", rep.Next)
	}
	// The store is free: another writer can open it.
	st, err := b.Session(ctx, rep.SessionID)
	if err != nil {
		t.Fatalf("the paused session's store is still held: %v", err)
	}
	closeStore(st)
	// Answering it goes on to the end.
	rep, _ = c.call(ctx, "refine_answer", map[string]any{"session_id": rep.SessionID, "question_id": rep.Pending[0].ID, "key": "A", "text": demoAnswers["conflict/2"].Text})
	rep = c.untilStops(ctx, rep)
	checkDemoComplete(t, s, c, rep)
}

// Cancelling the tool call stops the session with its state committed;
// refine_continue resumes it.
func TestCancelledCallStopsTheSessionResumably(t *testing.T) {
	ctx := context.Background()
	s := newServer(t, Config{})
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	c := connect(t, s, clientOpts{protocol: "2025-11-25", sampling: true, elicit: scripted,
		onSample: func(n int) {
			if n == 3 {
				cancel()
			}
		}})
	res, err := c.cs.CallTool(callCtx, &mcp.CallToolParams{Name: "refine_start", Arguments: startArgs(t)})
	if err == nil && !res.IsError {
		t.Fatalf("refine_start survived its cancellation: %s", textOf(res))
	}
	list, _ := c.call(ctx, "refine_sessions", map[string]any{})
	_ = list
	sessions, err := s.cfg.Backend.Sessions(ctx)
	if err != nil || len(sessions) != 1 {
		t.Fatalf("sessions = %v, %v", sessions, err)
	}
	id := sessions[0].ID
	waitStopped(t, s, id)
	rep, _ := c.call(ctx, "refine_continue", map[string]any{"session_id": id})
	rep = c.untilStops(ctx, rep)
	if rep.Outcome != string(refine.StatusComplete) {
		t.Fatalf("after resuming: %+v", rep)
	}
}

// waitStopped waits until session id's run has ended.
func waitStopped(t *testing.T, s *Server, id string) {
	t.Helper()
	if r := s.running(id); r != nil {
		<-r.done
	}
}

func TestResourcesFollowTheSession(t *testing.T) {
	ctx := context.Background()
	s := newServer(t, Config{})
	c := connect(t, s, clientOpts{protocol: "2025-11-25", sampling: true, elicit: scripted})
	id := "orders-api"
	if err := c.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uriPrefix + id + "/status.md"}); err != nil {
		t.Fatal(err)
	}
	args := startArgs(t)
	args["session_id"] = id
	rep, _ := c.call(ctx, "refine_start", args)
	if rep.SessionID != id {
		t.Fatalf("session %q, want the ID given", rep.SessionID)
	}
	rep = c.untilStops(ctx, rep)
	if rep.Outcome != string(refine.StatusComplete) {
		t.Fatalf("%+v", rep)
	}
	list, err := c.cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range list.Resources {
		uris = append(uris, r.URI)
	}
	for _, want := range []string{"/status.md", "/decisions.md", "/status.json", "/final_spec.md", "/rounds/1/engineer.md", "/rounds/4/reviewer.md"} {
		if !slices.Contains(uris, uriPrefix+id+want) {
			t.Errorf("resources lack %s: %v", want, uris)
		}
	}
	for _, tt := range []struct{ uri, want string }{
		{uriPrefix + id + "/final_spec.md", "Orders API"},
		{uriPrefix + id + "/status.json", `"outcome": "COMPLETE"`},
		{uriPrefix + id + "/rounds/2/summary.md", "Round 2"},
		{uriPrefix + id + "/decisions.md", "ISSUE-R1-001"},
	} {
		res, err := c.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: tt.uri})
		if err != nil {
			t.Errorf("read %s: %v", tt.uri, err)
			continue
		}
		if len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, tt.want) {
			t.Errorf("%s lacks %q", tt.uri, tt.want)
		}
	}
	if _, err := c.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uriPrefix + id + "/../state.json"}); err == nil {
		t.Error("a URI outside the session's files was read")
	}
	for name, ch := range map[string]chan struct{}{"resources/list_changed": c.listed, "resources/updated": c.updated} {
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Errorf("no %s notification", name)
		}
	}
}

func TestProgressNotifications(t *testing.T) {
	ctx := context.Background()
	s := newServer(t, Config{})
	c := connect(t, s, clientOpts{protocol: "2025-11-25", sampling: true, elicit: scripted})
	p := &mcp.CallToolParams{Name: "refine_start", Arguments: startArgs(t)}
	p.SetProgressToken("start-1")
	if _, err := c.cs.CallTool(ctx, p); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.progress == 0 {
		t.Error("no progress notification for a call with a progress token")
	}
}

// A client without sampling gets a tool error that says what to do.
func TestNoSamplingNoBackendIsAToolError(t *testing.T) {
	ctx := context.Background()
	s := newServer(t, Config{})
	c := connect(t, s, clientOpts{protocol: "2025-11-25"})
	_, res := c.call(ctx, "refine_start", startArgs(t))
	if !res.IsError || !strings.Contains(textOf(res), "--llm") {
		t.Fatalf("want a tool error naming --llm, got %s", textOf(res))
	}
}

// A session no tool call drives stops after the idle timeout, committed
// and resumable; refine_continue takes it to the end.
func TestIdleSessionStopsAndResumes(t *testing.T) {
	ctx := context.Background()
	s := newServer(t, Config{CallBudget: time.Nanosecond, IdleTimeout: 20 * time.Millisecond})
	c := connect(t, s, clientOpts{protocol: "2025-11-25", sampling: true, elicit: scripted})
	rep, _ := c.call(ctx, "refine_start", startArgs(t))
	if r := s.running(rep.SessionID); r != nil {
		select {
		case <-r.done:
		case <-time.After(30 * time.Second):
			t.Fatal("an idle session kept running")
		}
	}
	if s.running(rep.SessionID) != nil {
		t.Fatal("the idle session is still registered as running")
	}
	s.cfg.CallBudget = time.Minute
	rep, _ = c.call(ctx, "refine_continue", map[string]any{"session_id": rep.SessionID})
	rep = c.untilStops(ctx, rep)
	if rep.Outcome != string(refine.StatusComplete) {
		t.Fatalf("after the idle stop: %+v", rep)
	}
}

// An answer to a question the running session does not ask is a tool
// error naming question_id, not silently dropped.
func TestAnswerToAQuestionNotAsked(t *testing.T) {
	ctx := context.Background()
	s := newServer(t, Config{CallBudget: time.Nanosecond})
	c := connect(t, s, clientOpts{protocol: "2025-11-25", sampling: true})
	rep, _ := c.call(ctx, "refine_start", startArgs(t))
	_, res := c.call(ctx, "refine_answer", map[string]any{"session_id": rep.SessionID, "question_id": "nosuch", "key": "A"})
	if !res.IsError || !strings.Contains(textOf(res), "question_id") {
		t.Fatalf("want a tool error naming question_id, got %s", textOf(res))
	}
}

// With a server-side backend the roles run in the server: a client
// without sampling drives the session to the end, and the backend it
// records is the server's.
func TestServerSideRoles(t *testing.T) {
	for name, mode := range map[string]RoleMode{"server": RolesServer, "auto without sampling": RolesAuto} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			configure := func(ctx context.Context, id string, st refine.Store) (refine.Config, error) {
				cfg := refine.DefaultConfig()
				r := replay.Dir(filepath.Join(demoDir, "replay"))
				cfg.Engineer, cfg.Reviewer = r, r
				cfg.Backend = refine.BackendInfo{Kind: "replay"}
				return cfg, nil
			}
			s := newServer(t, Config{Roles: mode, Configure: configure})
			c := connect(t, s, clientOpts{protocol: "2025-11-25", elicit: scripted})
			rep, res := c.call(ctx, "refine_start", startArgs(t))
			if res.IsError {
				t.Fatal(textOf(res))
			}
			rep = c.untilStops(ctx, rep)
			if rep.Outcome != string(refine.StatusComplete) {
				t.Fatalf("%+v", rep)
			}
			st, err := s.statusOf(ctx, rep.SessionID)
			if err != nil {
				t.Fatal(err)
			}
			if st.Settings.Backend.Kind != "replay" || c.samples != 0 {
				t.Errorf("backend %q, %d sampling requests; want the server's replay and none", st.Settings.Backend.Kind, c.samples)
			}
		})
	}
}

// A refused sampling request stops the run FAILED with its state saved;
// refine_continue makes the call again and goes on.
func TestRefusedSamplingFailsResumably(t *testing.T) {
	ctx := context.Background()
	s := newServer(t, Config{})
	c := connect(t, s, clientOpts{protocol: "2025-11-25", sampling: true, elicit: scripted, refuse: 3})
	rep, res := c.call(ctx, "refine_start", startArgs(t))
	if rep.Outcome != string(refine.StatusFailed) || !strings.Contains(textOf(res), "refused") {
		t.Fatalf("after a refused sampling request: %s", textOf(res))
	}
	rep = c.untilStops(ctx, c.mustContinue(ctx, rep.SessionID))
	checkDemoComplete(t, s, c, rep)
}
