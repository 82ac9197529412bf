package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/llm/replay"
	"github.com/refine-spec/refine/store"
	"github.com/refine-spec/refine/store/memory"
)

// demoDir is the CLI demo's recorded session: 5 gaps, two per round, a
// conflict, implicit disagreement, a divergence with a rollback, COMPLETE
// after round 4.
var demoDir = filepath.Join("..", "cmd", "refine", "demo")

// demoAnswers are the demo's scripted answers by "kind/round"; other
// questions take their default.
var demoAnswers = map[string]refine.Answer{
	"disagree_rate/2":     {Key: "1"},
	"conflict/2":          {Key: "A", Text: "Integrators sync orders; correctness beats page jumping."},
	"implicit/3":          {Key: "1", Text: "Answer the rate-limit header concern."},
	"divergence/3":        {Key: "rollback", Text: "Roll back to round 2: sign cursors and answer ISSUE-R2-001 this time."},
	"early_termination/3": {Key: "continue"},
}

// client is a Go MCP client that plays the roles from a replay folder
// through sampling and answers elicitations from a script.
type client struct {
	t  testing.TB
	cs *mcp.ClientSession

	mu       sync.Mutex
	samples  int // sampling requests answered
	requests int // sampling requests received
	roles    map[string]int
	hints    map[string]string // role → the model hint its requests carried
	maxTok   map[int64]bool    // the maxTokens values requested
	asked    []QuestionMetadata
	progress int
	listed   chan struct{} // a resource list-changed notification came
	updated  chan struct{} // a resource updated notification came
}

type clientOpts struct {
	protocol string // "" = the SDK's latest (2026-07-28)
	sampling bool
	// elicit answers an elicitation; nil: the client does not offer it.
	elicit func(q QuestionMetadata, schema map[string]any) *mcp.ElicitResult
	// onSample runs before each sampling answer (n counts them from 1).
	onSample func(n int)
	// refuse makes the n-th sampling request fail, as a user refusing it.
	refuse int
	replay string
	// transport, when set, reaches the server (else an in-memory pair).
	transport mcp.Transport
}

// scripted answers by demoAnswers, else with the question's default.
func scripted(q QuestionMetadata, schema map[string]any) *mcp.ElicitResult {
	a, ok := demoAnswers[fmt.Sprintf("%s/%d", q.Kind, q.Round)]
	if !ok {
		a.Key = schemaDefault(schema)
	}
	content := map[string]any{"choice": a.Key}
	if a.Text != "" {
		content["text"] = a.Text
	}
	return &mcp.ElicitResult{Action: "accept", Content: content}
}

func schemaDefault(schema map[string]any) string {
	props, _ := schema["properties"].(map[string]any)
	choice, _ := props["choice"].(map[string]any)
	if d, ok := choice["default"].(string); ok {
		return d
	}
	one, _ := choice["oneOf"].([]any)
	if len(one) > 0 {
		c, _ := one[0].(map[string]any)
		s, _ := c["const"].(string)
		return s
	}
	return ""
}

func newServer(t testing.TB, cfg Config) *Server {
	t.Helper()
	if cfg.Backend == nil {
		cfg.Backend = memory.NewBackend()
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func connect(t testing.TB, s *Server, o clientOpts) *client {
	t.Helper()
	ctx := context.Background()
	c := &client{t: t, roles: map[string]int{}, hints: map[string]string{}, maxTok: map[int64]bool{}, listed: make(chan struct{}, 1), updated: make(chan struct{}, 1)}
	if o.replay == "" {
		o.replay = filepath.Join(demoDir, "replay")
	}
	rep := replay.Dir(o.replay)
	opts := &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
			c.mu.Lock()
			c.progress++
			c.mu.Unlock()
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			signal(c.listed)
		},
		ResourceUpdatedHandler: func(context.Context, *mcp.ResourceUpdatedNotificationRequest) {
			signal(c.updated)
		},
	}
	if o.sampling {
		opts.CreateMessageHandler = func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			md, err := metadataOf(req.Params.Metadata)
			if err != nil {
				return nil, err
			}
			if req.Params.MaxTokens <= 0 || len(req.Params.Messages) == 0 || req.Params.SystemPrompt == "" {
				return nil, fmt.Errorf("sampling request without maxTokens, messages or system prompt: %+v", req.Params)
			}
			c.mu.Lock()
			c.samples++
			c.requests++
			n := c.requests
			c.roles[md.Role]++
			c.maxTok[req.Params.MaxTokens] = true
			if mp := req.Params.ModelPreferences; mp != nil && len(mp.Hints) > 0 {
				c.hints[md.Role] = mp.Hints[0].Name
			}
			c.mu.Unlock()
			if o.onSample != nil {
				o.onSample(n)
			}
			if n == o.refuse {
				c.mu.Lock()
				c.samples-- // refused: no role call was answered
				c.roles[md.Role]--
				c.mu.Unlock()
				return nil, fmt.Errorf("the user refused the sampling request")
			}
			resp, err := rep.Respond(ctx, refine.Request{Role: refine.RoleName(md.Role), Call: md.Call, Discovery: md.Discovery})
			if err != nil {
				return nil, err
			}
			return &mcp.CreateMessageResult{Content: &mcp.TextContent{Text: resp.Content}, Model: "replay", Role: "assistant", StopReason: "endTurn"}, nil
		}
	}
	if o.elicit != nil {
		opts.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			var q QuestionMetadata
			b, _ := json.Marshal(req.Params.Meta[QuestionMetaKey])
			if err := json.Unmarshal(b, &q); err != nil || q.ID == "" {
				return nil, fmt.Errorf("elicitation without question metadata: %v", req.Params.Meta)
			}
			var schema map[string]any
			b, _ = json.Marshal(req.Params.RequestedSchema)
			_ = json.Unmarshal(b, &schema)
			c.mu.Lock()
			c.asked = append(c.asked, q)
			c.mu.Unlock()
			return o.elicit(q, schema), nil
		}
	}
	cl := mcp.NewClient(&mcp.Implementation{Name: "refine-test-client", Version: "v0"}, opts)
	t2 := o.transport
	if t2 == nil {
		var t1 mcp.Transport
		t1, t2 = mcp.NewInMemoryTransports()
		ss, err := s.MCP().Connect(ctx, t1, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ss.Close() })
	}
	cs, err := cl.Connect(ctx, t2, &mcp.ClientSessionOptions{ProtocolVersion: o.protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	c.cs = cs
	return c
}

func metadataOf(m any) (SamplingMetadata, error) {
	var wrap struct {
		Refine SamplingMetadata `json:"refine"`
	}
	b, _ := json.Marshal(m)
	if err := json.Unmarshal(b, &wrap); err != nil || wrap.Refine.Role == "" || wrap.Refine.Call == 0 {
		return wrap.Refine, fmt.Errorf("sampling request without refine metadata: %s", b)
	}
	return wrap.Refine, nil
}

// call calls a tool and decodes its structured result into a report.
func (c *client) call(ctx context.Context, name string, args any) (report, *mcp.CallToolResult) {
	c.t.Helper()
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		c.t.Fatalf("%s: %v", name, err)
	}
	var rep report
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &rep); err != nil {
			c.t.Fatalf("%s: structured content: %v", name, err)
		}
	}
	return rep, res
}

// untilStops continues the session while it runs.
func (c *client) untilStops(ctx context.Context, rep report) report {
	c.t.Helper()
	for i := 0; rep.Running; i++ {
		if i > 100 {
			c.t.Fatalf("session %s still running after 100 refine_continue calls", rep.SessionID)
		}
		rep, _ = c.call(ctx, "refine_continue", map[string]any{"session_id": rep.SessionID})
	}
	return rep
}

func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// startArgs are refine_start's arguments for the demo.
func startArgs(t testing.TB) map[string]any {
	t.Helper()
	spec, err := os.ReadFile(filepath.Join(demoDir, "spec.md"))
	if err != nil {
		t.Fatal(err)
	}
	gaps, err := os.ReadFile(filepath.Join(demoDir, "gaps.md"))
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{"spec": string(spec), "gaps": string(gaps), "settings": map[string]any{"gaps_per_round": 2}}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

func newFuzzBackend() store.Backend { return memory.NewBackend() }

func (c *client) mustContinue(ctx context.Context, id string) report {
	c.t.Helper()
	rep, res := c.call(ctx, "refine_continue", map[string]any{"session_id": id})
	if res.IsError {
		c.t.Fatalf("refine_continue: %s", textOf(res))
	}
	return rep
}

// runningIDs lists the sessions running in s.
func (s *Server) runningIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for id := range s.runners {
		ids = append(ids, id)
	}
	return ids
}
