package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Malformed tool input gets a tool error naming the field at fault.
func TestMalformedInputNamesTheField(t *testing.T) {
	ctx := context.Background()
	s := newServer(t, Config{})
	c := connect(t, s, clientOpts{protocol: "2025-11-25", sampling: true})
	spec := "# Spec\n\n## Orders\nText.\n"
	gaps := "- GAP-API-001 (HIGH): Pagination is unspecified\n"
	for _, tt := range []struct {
		tool  string
		args  string
		field string
	}{
		{"refine_start", `{}`, "spec"},
		{"refine_start", `{"spec": 5, "gaps": "x"}`, "spec"},
		{"refine_start", `{"spec": "s", "spec_path": "/etc/passwd", "gaps": "x"}`, "spec_path"},
		{"refine_start", `{"spec": "s", "gaps": "- not a gap line"}`, "gaps"},
		{"refine_start", `{"spec": "s", "gaps": "x", "gap_list": [{"id": "GAP-API-001", "title": "t"}]}`, "gaps"},
		{"refine_start", `{"spec": "s", "gap_list": [{"id": "nope", "title": "t"}]}`, "gap_list[0].id"},
		{"refine_start", `{"spec": "s", "gap_list": [{"id": "GAP-API-001", "severity": "HUGE", "title": "t"}]}`, "gap_list[0].severity"},
		{"refine_start", `{"spec": "s", "gap_list": [{"id": "GAP-API-001", "title": ""}]}`, "gap_list[0].title"},
		{"refine_start", `{"spec": "s", "gaps": ` + jsonString(gaps) + `, "settings": {"max_rounds": 500}}`, "settings.max_rounds"},
		{"refine_start", `{"spec": "s", "gaps": ` + jsonString(gaps) + `, "settings": {"gaps_per_round": -1}}`, "settings.gaps_per_round"},
		{"refine_start", `{"spec": "s", "gaps": ` + jsonString(gaps) + `, "settings": {"rollback_mode": "sometimes"}}`, "settings.rollback_mode"},
		{"refine_start", `{"spec": ` + jsonString(spec) + `, "gaps": ` + jsonString(gaps) + `, "session_id": "../etc"}`, "session_id"},
		{"refine_start", `{"spec": "s", "gaps": "x", "settings": "fast"}`, "settings"},
		{"refine_start", `{"spec": "# S\u0000", "gaps": ` + jsonString(gaps) + `}`, "not UTF-8 text"},
		{"refine_continue", `{}`, "session_id"},
		{"refine_continue", `{"session_id": "a/b"}`, "session_id"},
		{"refine_continue", `{"session_id": "nosuch"}`, "session_id"},
		{"refine_continue", `{"session_id": ["x"]}`, "session_id"},
		{"refine_status", `{"session_id": ""}`, "session_id"},
		{"refine_status", `{"session_id": "nosuch"}`, "session_id"},
		{"refine_answer", `{"session_id": "x"}`, "question_id"},
		{"refine_answer", `{"session_id": "x", "question_id": "q"}`, "key"},
		{"refine_answer", `{"session_id": "nosuch", "question_id": "q", "key": "A"}`, "session_id"},
		{"refine_approve", `{"session_id": "."}`, "session_id"},
		{"refine_abandon", `{"session_id": 7}`, "session_id"},
		{"refine_rollback", `{"session_id": "x", "to_round": -1, "reason": "r"}`, "to_round"},
		{"refine_rollback", `{"session_id": "x", "to_round": 1}`, "reason"},
		{"refine_rollback", `{"session_id": "x", "to_round": "one", "reason": "r"}`, "to_round"},
		{"refine_validate", `{"role": "critic", "content": "x"}`, "role"},
		{"refine_validate", `{"role": "engineer", "content": "x", "round": 100}`, "round"},
		{"refine_validate", `{"role": "engineer", "content": "x", "gaps": "- bad"}`, "gaps"},
		{"refine_validate", `{"role": "engineer"}`, "content"},
	} {
		t.Run(tt.tool+tt.args, func(t *testing.T) {
			res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: tt.tool, Arguments: json.RawMessage(tt.args)})
			if err != nil {
				t.Fatalf("protocol error instead of a tool error: %v", err)
			}
			text := textOf(res)
			if !res.IsError {
				t.Fatalf("no tool error: %s", text)
			}
			if !strings.Contains(text, tt.field) {
				t.Errorf("error %q does not name %s", text, tt.field)
			}
		})
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// FuzzToolInput sends arbitrary JSON arguments to every tool: each answers
// with a result or a tool error, never a panic or a protocol failure.
func FuzzToolInput(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"session_id": "x"}`, `{"spec": "s", "gaps": "- GAP-API-001: t"}`,
		`{"spec": "s", "gap_list": [{"id": "GAP-API-001", "title": "t"}], "settings": {"max_rounds": 3}}`,
		`{"role": "reviewer", "content": "## Review\n"}`, `{"session_id": "x", "to_round": 2, "reason": "r"}`,
		`{"session_id": "x", "question_id": "q", "key": "A", "text": "t"}`, `[]`, `null`, `"x"`,
	} {
		for i := range toolNames {
			f.Add(uint8(i), seed)
		}
	}
	s, err := New(Config{Backend: newFuzzBackend()})
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	cl := mcp.NewClient(&mcp.Implementation{Name: "fuzz"}, nil)
	t1, t2 := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := s.MCP().Connect(ctx, t1, nil)
	if err != nil {
		f.Fatal(err)
	}
	defer ss.Close()
	cs, err := cl.Connect(ctx, t2, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		f.Fatal(err)
	}
	defer cs.Close()
	f.Fuzz(func(t *testing.T, tool uint8, args string) {
		if !json.Valid([]byte(args)) {
			t.Skip()
		}
		name := toolNames[int(tool)%len(toolNames)]
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatalf("%s %s: protocol error %v", name, args, err)
		}
		if res.IsError && textOf(res) == "" {
			t.Fatalf("%s %s: a tool error that says nothing", name, args)
		}
	})
}

// toolNames are the tools the fuzz target calls: every tool but those that
// would start sessions needing a sampling client (the fuzz client has
// none, so refine_start answers with a tool error after its input checks).
var toolNames = []string{"refine_start", "refine_continue", "refine_answer", "refine_status", "refine_sessions",
	"refine_approve", "refine_abandon", "refine_rollback", "refine_validate"}

func FuzzRequestState(f *testing.F) {
	for _, s := range []string{encodeState("abc", 3, 2), "refine1:a:b:c", "", "refine1:../x:1:1", "refine1:x:1:1:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, batch, trips, err := decodeState(s)
		if err != nil {
			return
		}
		if got := encodeState(id, batch, trips); got != s {
			// Leading zeros or signs parse but do not round-trip; the
			// decoded state must still be a valid one.
			if _, _, _, err := decodeState(got); err != nil {
				t.Fatalf("%q decoded to a state that does not decode: %v", s, err)
			}
		}
	})
}

func FuzzResourceURI(f *testing.F) {
	for _, s := range []string{uriPrefix + "a/status.md", uriPrefix + "a/rounds/3/engineer.md", uriPrefix + "a/../state.json",
		uriPrefix + "a/rounds/0/summary.md", "file:///etc/passwd", uriPrefix + "a/rounds/3/attempts/engineer-1.md"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		_, key, err := resourceKey(uri)
		if err != nil {
			return
		}
		if strings.Contains(key, "..") || strings.HasPrefix(key, "/") || strings.Contains(key, "attempts") || strings.Contains(key, "state") {
			t.Fatalf("%q maps to key %q outside the session's rendered files", uri, key)
		}
	})
}
