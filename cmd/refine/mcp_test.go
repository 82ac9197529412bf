package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/llm/replay"
	"github.com/refine-spec/refine/mcpserver"
)

// mcpClient is an MCP client that plays the roles from the demo's replay
// folder through sampling and answers elicitations with the demo's
// scripted answers (decline, when set, declines questions of that kind).
type mcpClient struct {
	t       *testing.T
	cs      *mcp.ClientSession
	decline string

	mu      sync.Mutex
	samples int
}

func newMCPClient(t *testing.T, decline string) (*mcp.Client, *mcpClient) {
	m := &mcpClient{t: t, decline: decline}
	rep := replay.Dir(filepath.Join("demo", "replay"))
	cl := mcp.NewClient(&mcp.Implementation{Name: "refine-cli-test"}, &mcp.ClientOptions{
		CreateMessageHandler: func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			var md struct {
				Refine mcpserver.SamplingMetadata `json:"refine"`
			}
			b, _ := json.Marshal(req.Params.Metadata)
			if err := json.Unmarshal(b, &md); err != nil || md.Refine.Call == 0 {
				return nil, fmt.Errorf("no refine metadata in %s", b)
			}
			m.mu.Lock()
			m.samples++
			m.mu.Unlock()
			out, err := rep.Respond(ctx, refine.Request{Role: refine.RoleName(md.Refine.Role), Call: md.Refine.Call})
			if err != nil {
				return nil, err
			}
			return &mcp.CreateMessageResult{Content: &mcp.TextContent{Text: out.Content}, Model: "replay", Role: "assistant"}, nil
		},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			var q mcpserver.QuestionMetadata
			b, _ := json.Marshal(req.Params.Meta[mcpserver.QuestionMetaKey])
			_ = json.Unmarshal(b, &q)
			if q.Kind == m.decline {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			a, ok := demoAnswers[fmt.Sprintf("%s/%d", q.Kind, q.Round)]
			if !ok {
				var schema struct {
					Properties struct {
						Choice struct {
							Default string `json:"default"`
						} `json:"choice"`
					} `json:"properties"`
				}
				b, _ := json.Marshal(req.Params.RequestedSchema)
				_ = json.Unmarshal(b, &schema)
				a.Key = schema.Properties.Choice.Default
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"choice": a.Key, "text": a.Text}}, nil
		},
	})
	return cl, m
}

type mcpReport struct {
	SessionID string `json:"session_id"`
	Outcome   string `json:"outcome"`
	Running   bool   `json:"running"`
	Pending   []struct {
		ID   string `json:"id"`
		Kind string `json:"kind"`
	} `json:"pending"`
}

func (m *mcpClient) call(ctx context.Context, name string, args any) mcpReport {
	m.t.Helper()
	res, err := m.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		m.t.Fatalf("%s: %v", name, err)
	}
	var rep mcpReport
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &rep); err != nil || res.IsError {
		m.t.Fatalf("%s: %v %s", name, err, b)
	}
	return rep
}

// run starts the demo session and continues it until it stops.
func (m *mcpClient) run(ctx context.Context) mcpReport {
	m.t.Helper()
	spec, _ := os.ReadFile(filepath.Join("demo", "spec.md"))
	gaps, _ := os.ReadFile(filepath.Join("demo", "gaps.md"))
	rep := m.call(ctx, "refine_start", map[string]any{"spec": string(spec), "gaps": string(gaps), "settings": map[string]any{"gaps_per_round": 2}})
	for i := 0; rep.Running; i++ {
		if i > 50 {
			m.t.Fatal("still running after 50 refine_continue calls")
		}
		rep = m.call(ctx, "refine_continue", map[string]any{"session_id": rep.SessionID})
	}
	return rep
}

// The built binary serves MCP on stdio: a session started through the SDK
// client runs to COMPLETE, and `refine status` sees it in the store.
func TestMCPStdioBinary(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("cmd/refine: no go tool to build the binary")
	}
	ctx := context.Background()
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "refine")
	if out, err := exec.Command(gobin, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	root := filepath.Join(tmp, "sessions")
	cmd := exec.Command(bin, "mcp", "--store", "file:"+root)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cl, m := newMCPClient(t, "")
	cs, err := cl.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m.cs = cs
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Errorf("stdio negotiated %s, want the SDK's latest, 2026-07-28 (input requests in tool results)", v)
	}
	rep := m.run(ctx)
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	if rep.Outcome != "COMPLETE" {
		t.Fatalf("outcome %s, want COMPLETE; server stderr:\n%s", rep.Outcome, stderr.String())
	}
	c, out, errb := newTestCLI()
	if code := c.main(ctx, []string{"status", "--store", "file:" + root, "--session", rep.SessionID, "--json"}); code != exitOK {
		t.Fatalf("status: %s", errb)
	}
	if !strings.Contains(out.String(), `"outcome": "COMPLETE"`) {
		t.Errorf("refine status does not see the session COMPLETE:\n%s", out)
	}
}

// A declined elicitation pauses the session; refine resume with a replay
// backend continues it from the CLI (a sampling session has no model
// outside its client, so the resume names one).
func TestMCPDeclinedQuestionThenCLIResume(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	root := filepath.Join(t.TempDir(), "sessions")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c, _, errb := newTestCLI()
	c.stdin, c.stdout = inR, outW
	done := make(chan int, 1)
	go func() { done <- c.main(ctx, []string{"mcp", "--store", root}) }()
	cl, m := newMCPClient(t, "conflict")
	cs, err := cl.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	m.cs = cs
	rep := m.run(ctx)
	if rep.Outcome != "PAUSED" || len(rep.Pending) != 1 || rep.Pending[0].Kind != "conflict" {
		t.Fatalf("report %+v, want PAUSED on the conflict", rep)
	}
	cs.Close()
	inW.Close()
	if code := <-done; code != exitOK {
		t.Fatalf("refine mcp exit %d: %s", code, errb)
	}
	// Without naming a backend, resume says why it cannot play the roles.
	c, _, errb = newTestCLI()
	if code := c.main(ctx, []string{"resume", "--store", root, "--session", rep.SessionID, "--answer", "A"}); code != exitUsage || !strings.Contains(errb.String(), "--llm") {
		t.Fatalf("a sampling session resumed without a backend: exit %d, %s", code, errb)
	}
	t.Logf("resume without a backend: %s", errb)
	answers := filepath.Join(t.TempDir(), "answers.txt")
	if err := os.WriteFile(answers, []byte("1: Answer the rate-limit header concern.\nrollback: Roll back to round 2: sign cursors and answer ISSUE-R2-001 this time.\n1\ncontinue\n1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, out, errb := newTestCLI()
	code := c.main(ctx, []string{"resume", "--store", root, "--session", rep.SessionID, "--llm", "replay", "--replay", filepath.Join("demo", "replay"),
		"--answer", "A: Integrators sync orders; correctness beats page jumping.", "--answers", answers, "--quiet"})
	if code != exitOK || !strings.Contains(out.String(), "COMPLETE after round 4") {
		t.Fatalf("resume exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errb)
	}
}

// syncWriter is a goroutine-safe buffer that reports the console line.
type syncWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	ready chan string
}

var listenLine = regexp.MustCompile(`http://(\S+)/`)

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if m := listenLine.FindSubmatch(w.buf.Bytes()); m != nil && w.ready != nil {
		w.ready <- string(m[1])
		w.ready = nil
	}
	return len(p), nil
}

// --http serves streamable HTTP on loopback: an SDK client drives a
// session; a foreign Host and a cross-origin request are refused.
func TestMCPHTTPLoopback(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	root := filepath.Join(t.TempDir(), "sessions")
	c, _, _ := newTestCLI()
	ready := make(chan string, 1)
	errw := &syncWriter{ready: ready}
	c.stderr = errw
	done := make(chan int, 1)
	go func() { done <- c.main(ctx, []string{"mcp", "--http", "127.0.0.1:0", "--store", "file:" + root}) }()
	var addr string
	select {
	case addr = <-ready:
	case code := <-done:
		t.Fatalf("refine mcp exited %d", code)
	}
	endpoint := "http://" + addr + "/"
	cl, m := newMCPClient(t, "")
	cs, err := cl.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	m.cs = cs
	if rep := m.run(ctx); rep.Outcome != "COMPLETE" {
		t.Fatalf("outcome %s over HTTP", rep.Outcome)
	}
	cs.Close()

	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, tt := range []struct {
		name   string
		host   string
		origin string
		want   int
	}{
		{"own host", "", "", http.StatusOK},
		{"foreign host (DNS rebinding)", "evil.example:80", "", http.StatusForbidden},
		{"cross-origin", "", "http://evil.example", http.StatusForbidden},
	} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if tt.host != "" {
			req.Host = tt.host
		}
		if tt.origin != "" {
			req.Header.Set("Origin", tt.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%s: status %d, want %d: %s", tt.name, resp.StatusCode, tt.want, msg)
		}
	}
	cancel()
	if code := <-done; code != exitOK {
		t.Errorf("refine mcp --http exit %d", code)
	}

	// Anything but loopback needs a token.
	c, _, errb := newTestCLI()
	if code := c.main(context.Background(), []string{"mcp", "--http", "0.0.0.0:0", "--store", root}); code != exitUsage || !strings.Contains(errb.String(), "--token") {
		t.Errorf("--http 0.0.0.0 without a token: exit %d, %s", code, errb)
	}
}

func TestDefaultMCPStore(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if got := defaultMCPStore(env(map[string]string{"XDG_STATE_HOME": "/st"})); got != "file:"+filepath.Join("/st", "refine", "sessions") {
		t.Errorf("XDG_STATE_HOME: %s", got)
	}
	if got := defaultMCPStore(env(map[string]string{})); got != "" {
		t.Errorf("no home: %q, want none", got)
	}
}
