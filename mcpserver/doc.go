// Package mcpserver serves refine sessions over the Model Context Protocol,
// so that a coding agent (Claude Code or Desktop, Cursor, VS Code, …) can
// start and steer spec-refinement sessions with tools, read their files as
// resources, lend its own model to the Engineer and Reviewer roles through
// sampling, and ask its user the session's questions through elicitation.
//
// A session's work runs inside tool calls: refine_start, refine_continue
// and refine_answer drive the session until it pauses, ends, or a bounded
// time (Config.CallBudget) has passed, sending progress notifications
// meanwhile; the agent then calls refine_continue again. Each Engineer and
// Reviewer call is a sampling request when the session's roles are the
// client's model, and each question an elicitation when the client offers
// it (else the tool result carries the question whole and the agent
// answers it with refine_answer).
//
// Both protocol paths are served. On protocol versions up to 2025-11-25
// the server sends sampling/createMessage and elicitation/create requests
// while it serves the tool call. On 2026-07-28, where a server may not send
// requests while serving one (multi round-trip requests, SEP-2322), the tool
// result carries them as input requests; the client fulfils them and calls
// the tool again with the responses, and the session goes on from there.
//
// Sessions started over MCP are ordinary sessions of the Backend: `refine
// status`, `refine resume` and the web console see and continue them. A
// session whose roles were the client's model records the backend kind
// "sampling"; resuming it elsewhere names another backend.
package mcpserver
