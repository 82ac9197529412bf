package refine

import (
	"errors"
	"time"
)

// errNeedCalls stops a Next at the role calls it needs made; run turns it
// into Ready.Calls.
var errNeedCalls = errors.New("role calls needed")

// callID names a role call: the role and its session-wide call number.
type callID struct {
	role RoleName
	call int
}

// externalCalls are the role calls and answers that come from outside
// the decisions: the calls the last Ready asked for, the results handed
// back for them, the attempt scopes they run in, and which answers an
// Immediate asker gave.
type externalCalls struct {
	needed    []Request
	delivered map[callID]roleResult
	// scopes are the attempt scopes of the calls asked for, begun when the
	// call was asked for so that the call runs inside its attempt's scope.
	scopes map[callID]callScope
	// asked are the questions the steps asked since the driver last
	// asked its Asker: the driver asks them.
	asked []Question
	// auto marks the questions an Immediate asker answered: their answers
	// are recorded as automatic.
	auto map[string]bool
	// atOnce says the driver answers the questions of this play before
	// its Ready is committed (an Immediate asker): a question then needs
	// no commit of its own to be durable before it is asked.
	atOnce bool
}

// callScope is the scope of an attempt whose call is outside: its context
// and when the attempt started.
type callScope struct {
	scope   attemptScope
	started time.Time
	plan    attemptPlan
}

func newExternalCalls() *externalCalls {
	return &externalCalls{delivered: map[callID]roleResult{}, scopes: map[callID]callScope{}, auto: map[string]bool{}}
}

// take returns the result delivered for req, if any, and forgets it;
// otherwise it records req as needed.
func (e *externalCalls) take(req Request) (roleResult, bool) {
	id := callID{req.Role, req.Call}
	if res, ok := e.delivered[id]; ok {
		delete(e.delivered, id)
		return res, true
	}
	e.needed = append(e.needed, req)
	return roleResult{}, false
}

// scope returns the scope the attempt of plan runs in: the one begun when
// its call was asked for, or a new one (begin).
func (e *externalCalls) scope(plan *attemptPlan, begin func() attemptScope) {
	id := callID{plan.req.Role, plan.req.Call}
	if sc, ok := e.scopes[id]; ok {
		delete(e.scopes, id)
		plan.scope, plan.started = sc.scope, sc.started
		return
	}
	plan.scope = begin()
}

// resume returns the plan of the attempt whose call (role, call) was
// asked for and is delivered, as it was planned then, with its result:
// the attempt goes on where it stopped, without building its prompt
// again.
func (e *externalCalls) resume(role RoleName, call int) (attemptPlan, bool) {
	id := callID{role, call}
	sc, asked := e.scopes[id]
	res, delivered := e.delivered[id]
	if !asked || !delivered || sc.plan.msgs == nil {
		return attemptPlan{}, false
	}
	delete(e.scopes, id)
	delete(e.delivered, id)
	plan := sc.plan
	plan.scope, plan.started, plan.needed, plan.delivered = sc.scope, sc.started, false, &res
	return plan, true
}

// keepScope keeps plan's scope, begun with begin, for the call Next asks for.
func (e *externalCalls) keepScope(plan attemptPlan, begin func() attemptScope) {
	id := callID{plan.req.Role, plan.req.Call}
	if _, ok := e.scopes[id]; ok {
		return
	}
	plan.scope = begin()
	e.scopes[id] = callScope{scope: plan.scope, started: plan.started, plan: plan}
}
