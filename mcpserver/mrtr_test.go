package mcpserver

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/refine-spec/refine"
	"github.com/refine-spec/refine/llm/replay"
)

// On 2026-07-28 the role calls travel as input requests of the tool
// result (SEP-2322), never as server requests: a client that handles the
// round trips itself sees them on the wire and retries with the responses.
func TestMultiRoundTripCarriesRoleCallsAsInputRequests(t *testing.T) {
	ctx := context.Background()
	s := newServer(t, Config{})
	cl := mcp.NewClient(&mcp.Implementation{Name: "manual"}, &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		// Declared, never called: the server must not send requests.
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			t.Error("the server sent sampling/createMessage on 2026-07-28")
			return nil, nil
		},
	})
	t1, t2 := mcp.NewInMemoryTransports()
	ss, err := s.MCP().Connect(ctx, t1, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := cl.Connect(ctx, t2, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	rep := replay.Dir(filepath.Join(demoDir, "replay"))
	params := &mcp.CallToolParams{Name: "refine_start", Arguments: startArgs(t)}
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if !res.NeedsInput() || res.RequestState == "" || len(res.InputRequests) != 1 {
		t.Fatalf("want one input request with a request state, got %+v", res)
	}
	// A client that drops the retry and calls refine_continue gets the
	// same requests again.
	id, _, _, err := decodeState(res.RequestState)
	if err != nil {
		t.Fatal(err)
	}
	dropped := res.RequestState
	if res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "refine_continue", Arguments: map[string]any{"session_id": id}}); err != nil {
		t.Fatal(err)
	}
	if !res.NeedsInput() || res.RequestState == dropped {
		t.Fatalf("refine_continue after a dropped retry: %+v", res)
	}
	var firstState string
	for trips := 0; res.NeedsInput(); trips++ {
		if trips == 0 {
			firstState = res.RequestState
		}
		responses := mcp.InputResponseMap{}
		for key, ir := range res.InputRequests {
			var meta any
			switch p := ir.(type) {
			case *mcp.CreateMessageParams:
				meta = p.Metadata
			case *mcp.CreateMessageWithToolsParams:
				meta = p.Metadata
			default:
				t.Fatalf("input request %s is %T, want a sampling request", key, ir)
			}
			md, err := metadataOf(meta)
			if err != nil {
				t.Fatal(err)
			}
			if trips == 0 && (md.Role != "engineer" || md.Call != 1 || md.Round != 1) {
				t.Fatalf("first input request is %+v, want engineer call 1 of round 1", md)
			}
			out, err := rep.Respond(ctx, refine.Request{Role: refine.RoleName(md.Role), Call: md.Call})
			if err != nil {
				t.Fatal(err)
			}
			responses[key] = &mcp.CreateMessageResult{Content: &mcp.TextContent{Text: out.Content}, Model: "replay", Role: "assistant"}
		}
		params = &mcp.CallToolParams{Name: "refine_continue", Arguments: map[string]any{"session_id": id}, InputResponses: responses, RequestState: res.RequestState}
		if res, err = cs.CallTool(ctx, params); err != nil {
			t.Fatal(err)
		}
	}
	// The retries went on with the session: the round trips used up, it
	// says it is running (or it reached its first question).
	if res.IsError {
		t.Fatalf("after the round trips: %s", textOf(res))
	}
	// A stale request state is refused, naming the field.
	stale, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "refine_continue", Arguments: map[string]any{"session_id": "x"},
		InputResponses: mcp.InputResponseMap{}, RequestState: firstState})
	if err != nil {
		t.Fatal(err)
	}
	if !stale.IsError || !strings.Contains(textOf(stale), "requestState") {
		t.Errorf("stale requestState: %s", textOf(stale))
	}
}
