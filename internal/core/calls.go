package core

import (
	"errors"
	"time"
)

// ErrNeedCalls stops a Next at the role calls it needs made; run turns it
// into Ready.Calls.
var ErrNeedCalls = errors.New("role calls needed")

// CallID names a role call: the role and its session-wide call number.
type CallID struct {
	Role RoleName
	Call int
}

// ExternalCalls are the role calls and answers that come from outside
// the decisions: the calls the last Ready asked for, the results handed
// back for them, the attempt scopes they run in, and which answers an
// Immediate asker gave.
type ExternalCalls struct {
	Needed    []Request
	Delivered map[CallID]RoleResult
	// Scopes are the attempt scopes of the calls asked for, begun when the
	// call was asked for so that the call runs inside its attempt's scope.
	Scopes map[CallID]callScope
	// Asked are the questions the steps asked since the driver last
	// asked its Asker: the driver asks them.
	Asked []Question
	// Auto marks the questions an Immediate asker answered: their answers
	// are recorded as automatic.
	Auto map[string]bool
	// AtOnce says the driver answers the questions of this play before
	// its Ready is committed (an Immediate asker): a question then needs
	// no commit of its own to be durable before it is asked.
	AtOnce bool
}

// callScope is the scope of an attempt whose call is outside: its context
// and when the attempt started.
type callScope struct {
	Scope   AttemptScope
	Started time.Time
	Plan    attemptPlan
}

// NewExternalCalls returns an empty set of calls and answers.
func NewExternalCalls() *ExternalCalls {
	return &ExternalCalls{Delivered: map[CallID]RoleResult{}, Scopes: map[CallID]callScope{}, Auto: map[string]bool{}}
}

// take returns the result delivered for req, if any, and forgets it;
// otherwise it records req as needed.
func (e *ExternalCalls) take(req Request) (RoleResult, bool) {
	id := CallID{req.Role, req.Call}
	if res, ok := e.Delivered[id]; ok {
		delete(e.Delivered, id)
		return res, true
	}
	e.Needed = append(e.Needed, req)
	return RoleResult{}, false
}

// scope returns the scope the attempt of plan runs in: the one begun when
// its call was asked for, or a new one (begin).
func (e *ExternalCalls) scope(plan *attemptPlan, begin func() AttemptScope) {
	id := CallID{plan.req.Role, plan.req.Call}
	if sc, ok := e.Scopes[id]; ok {
		delete(e.Scopes, id)
		plan.scope, plan.started = sc.Scope, sc.Started
		return
	}
	plan.scope = begin()
}

// resume returns the plan of the attempt whose call (role, call) was
// asked for and is delivered, as it was planned then, with its result:
// the attempt goes on where it stopped, without building its prompt
// again.
func (e *ExternalCalls) resume(role RoleName, call int) (attemptPlan, bool) {
	id := CallID{role, call}
	sc, asked := e.Scopes[id]
	res, delivered := e.Delivered[id]
	if !asked || !delivered || sc.Plan.msgs == nil {
		return attemptPlan{}, false
	}
	delete(e.Scopes, id)
	delete(e.Delivered, id)
	plan := sc.Plan
	plan.scope, plan.started, plan.needed, plan.delivered = sc.Scope, sc.Started, false, &res
	return plan, true
}

// keepScope keeps plan's scope, begun with begin, for the call Next asks for.
func (e *ExternalCalls) keepScope(plan attemptPlan, begin func() AttemptScope) {
	id := CallID{plan.req.Role, plan.req.Call}
	if _, ok := e.Scopes[id]; ok {
		return
	}
	plan.scope = begin()
	e.Scopes[id] = callScope{Scope: plan.scope, Started: plan.started, Plan: plan}
}
