package core

import "github.com/refine-spec/refine/llm"

// The Role contract lives in package llm, so that Role adapters depend on
// it and not on the engine. The names below are aliases: refine.Role is
// llm.Role, and code written against either name works with both.

// RoleName names a participant of a round: Engineer or Reviewer. It is
// gap.Role (and [llm.RoleName]), the one role type every refine package
// shares.
type RoleName = llm.RoleName

// The two LLM-backed roles.
const (
	Engineer = llm.Engineer
	Reviewer = llm.Reviewer
)

// Role is [llm.Role]: one LLM-backed participant (Engineer or Reviewer).
type Role = llm.Role

// RoleFunc is [llm.RoleFunc]: a function used as a Role.
type RoleFunc = llm.RoleFunc

// Message is [llm.Message]: one chat message of a prompt.
type Message = llm.Message

// Request is [llm.Request]: what a Role is asked to do for one attempt.
type Request = llm.Request

// Response is [llm.Response]: a Role's answer.
type Response = llm.Response

// Usage is [llm.Usage]: tokens counted as reported by the backend.
type Usage = llm.Usage
